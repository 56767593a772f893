import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import type { Page } from 'playwright-core';

import { AdminHarness } from '../../helpers/admin-harness';
import { launchChromium, TestBrowser } from '../../helpers/browser';
import { TEST_ADMIN_TOKEN } from '../../helpers/services';

/** Screenshots for docs/console.md, taken only when asked for (as console.spec.ts does). */
const SCREENSHOTS = process.env.SLUICE_CONSOLE_SCREENSHOTS === '1';
const SCREENSHOT_DIR = join(__dirname, '../../../docs/console');

/** A secret that is not a whsec_ one, and two that are (whsec_ and 32 bytes in base64). */
const PLAIN_SECRET = 'console-plain-secret-5b8e1c';
const WHSEC_FIRST = `whsec_${Buffer.alloc(32, 'first-console-key').toString('base64')}`;
const WHSEC_NEXT = `whsec_${Buffer.alloc(32, 'next-console-key').toString('base64')}`;
const SECRETS = [PLAIN_SECRET, WHSEC_FIRST, WHSEC_NEXT];
/** Markup typed into a field: shown, if at all, as text, and never run. */
const MARKUP = '<img src=x onerror="window.__xss=1">';

/** A destination as the admin API answers it (the fields these steps check). */
interface Destination {
  signatureMode: string;
  sharedSecretSet: boolean;
  previousSecretExpiresAt: string | null;
  batching: { maxCalls: number; maxBytes: number; maxWaitMs: number } | null;
  ordering: { maxPendingCalls: number; maxHoldSeconds: number } | null;
  sendTraceparent: boolean;
  updatedAt: string;
}

/**
 * A destination's delivery settings in the console, in headless Chromium against the admin app
 * (its own database, the real Kafka): signature mode, the shared secret and its rotation,
 * batching, ordering and traceparent, each change checked through the admin API's GET. The
 * steps build on each other, in order.
 */
describe("the console edits a destination's delivery settings", () => {
  const h = new AdminHarness();
  let browser: TestBrowser;
  let page: Page;
  let destinationPath: string;
  let pageUrl: string;

  beforeAll(async () => {
    await h.start();
    const source = await h.call('POST', '/admin/v1/sources', { name: 'Settings shop' });
    const sourceId = source.body.id as string;
    const created = await h.call('POST', `/admin/v1/sources/${sourceId}/destinations`, {
      name: 'Hooks',
    });
    expect(created.status).toBe(201);
    destinationPath = `/admin/v1/sources/${sourceId}/destinations/${created.body.id as string}`;
    pageUrl = `${h.url}/console/#/sources/${sourceId}/destinations/${created.body.id as string}`;
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${h.url}/console/`);
    await page.getByLabel('Admin token').fill(TEST_ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sources' }).waitFor();
    await page.goto(pageUrl);
    await page.getByRole('heading', { level: 1, name: 'Destination of Settings shop' }).waitFor();
    if (SCREENSHOTS) mkdirSync(SCREENSHOT_DIR, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await h.close();
  });

  async function saved(): Promise<Destination> {
    const answer = await h.call('GET', destinationPath);
    expect(answer.status).toBe(200);
    return answer.body as Destination;
  }

  /** Waits for a test id's element to say `text`. */
  async function says(testId: string, text: string | RegExp): Promise<string> {
    const el = page.getByTestId(testId).filter({ hasText: text });
    await el.waitFor();
    return (await el.textContent()) ?? '';
  }

  /** No secret typed so far is anywhere in the page: its HTML, or a field's value. */
  async function expectNoSecretInPage(): Promise<void> {
    const html = await page.content();
    const values = await page.evaluate<string[]>(
      `[...document.querySelectorAll('input, select, textarea')].map((el) => el.value)`,
    );
    for (const secret of SECRETS) {
      expect({ secret, inHtml: html.includes(secret) }).toEqual({ secret, inHtml: false });
      expect(values.filter((value) => value.includes(secret))).toEqual([]);
    }
  }

  it('shows the defaults: x-signature, no batching, no ordering, no traceparent, every field labelled', async () => {
    await says('signature-mode-state', /^x-signature: /);
    await says('batching-state', 'Off: one call a request.');
    await says('ordering-state', /^Off: a failed call goes to the retry tiers/);
    await says('traceparent-state', 'Off: POSTs carry no traceparent.');
    await says('secret-state', 'No shared secret is set: POSTs are not signed.');
    expect(await page.getByTestId('secret-overlap').count()).toBe(0);
    const unlabelled = await page.evaluate<string[]>(
      `[...document.querySelectorAll('main input, main select, main textarea')]
        .filter((el) => el.labels.length === 0).map((el) => el.name)`,
    );
    expect(unlabelled).toEqual([]);
    await expect(saved()).resolves.toMatchObject({
      signatureMode: 'x-signature',
      batching: null,
      ordering: null,
      sendTraceparent: false,
      sharedSecretSet: false,
      previousSecretExpiresAt: null,
    });
  });

  it('refuses standard-webhooks over a secret that is not whsec_ (409), then takes it with a whsec_ one', async () => {
    await page.getByLabel('Shared secret').fill(PLAIN_SECRET);
    await page.getByRole('button', { name: 'Set secret' }).click();
    await says('secret-state', 'A shared secret is set: every POST carries X-Signature');
    await expectNoSecretInPage();

    await page.getByLabel('Signature mode').selectOption('standard-webhooks');
    await page.getByRole('button', { name: 'Save signature mode' }).click();
    const refusal = await says('signature-mode-error', 'secret_not_whsec');
    expect(refusal).toMatch(/^signatureMode: .*whsec_.*\(secret_not_whsec, HTTP 409\)$/);
    await expect(saved()).resolves.toMatchObject({ signatureMode: 'x-signature' });

    await page.getByLabel('Replace the shared secret').fill(WHSEC_FIRST);
    await page.getByRole('button', { name: 'Set secret' }).click();
    // The page reloads the destination once the secret is saved: the refusal is gone.
    await page.getByTestId('signature-mode-error').waitFor({ state: 'hidden' });
    await page.getByLabel('Signature mode').selectOption('standard-webhooks');
    await page.getByRole('button', { name: 'Save signature mode' }).click();
    await says('signature-mode-state', /^standard-webhooks: /);
    await says('secret-state', /webhook-signature \(Standard Webhooks/);
    await expect(saved()).resolves.toMatchObject({
      signatureMode: 'standard-webhooks',
      sharedSecretSet: true,
    });
    await expectNoSecretInPage();
  });

  it("shows a non-whsec_ secret's 400 secret_not_whsec, keeps the saved one, and clears the field", async () => {
    const before = await saved();
    await page.getByLabel('Replace the shared secret').fill(PLAIN_SECRET);
    await page.getByRole('button', { name: 'Set secret' }).click();
    const refusal = await says('secret-error', 'secret_not_whsec');
    expect(refusal).toMatch(/^sharedSecret: .*whsec_.*\(secret_not_whsec, HTTP 400\)$/);
    expect(await page.getByLabel('Replace the shared secret').inputValue()).toBe('');
    await expectNoSecretInPage();
    await expect(saved()).resolves.toEqual(before);
  });

  it('turns batching on with one bound (the others default), shows a bad bound, then turns it off', async () => {
    await page.getByLabel('Max calls').fill('500');
    await page.getByRole('button', { name: 'Turn batching on' }).click();
    await says('batching-state', 'On: up to 500 calls or 1,048,576 bytes a request');
    await expect(saved()).resolves.toMatchObject({
      batching: { maxCalls: 500, maxBytes: 1_048_576, maxWaitMs: 1_000 },
    });
    expect(await page.getByLabel('Max wait (ms)').inputValue()).toBe('1000');

    await page.getByLabel('Max calls').fill('5000');
    await page.getByRole('button', { name: 'Save batching' }).click();
    expect(await says('batching-error', 'batching.maxCalls')).toMatch(
      /batching\.maxCalls.*4000.*\(invalid_request, HTTP 400\)$/,
    );
    await page.getByLabel('Max calls').fill('20');
    await page.getByLabel('Max bytes').fill(MARKUP);
    await page.getByRole('button', { name: 'Save batching' }).click();
    await says('batching-error', 'batching.maxBytes');
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    expect(await page.locator('main img').count()).toBe(0);
    await expect(saved()).resolves.toMatchObject({ batching: { maxCalls: 500 } });

    await page.getByRole('button', { name: 'Turn batching off' }).click();
    await says('batching-state', 'Off: one call a request.');
    await expect(saved()).resolves.toMatchObject({ batching: null });
  });

  it('refuses ordering beside batching, turns it on with its defaults, saves a bound, shows a bad one, then turns it off', async () => {
    await page.getByLabel('Max calls').fill('50');
    await page.getByRole('button', { name: 'Turn batching on' }).click();
    await says('batching-state', 'On: up to 50 calls');
    await page.getByRole('button', { name: 'Turn ordering on' }).click();
    expect(await says('ordering-error', 'ordering_with_batching')).toMatch(
      /^ordering: .*batching.*\(ordering_with_batching, HTTP 400\)$/,
    );
    await expect(saved()).resolves.toMatchObject({ batching: { maxCalls: 50 }, ordering: null });
    await page.getByRole('button', { name: 'Turn batching off' }).click();
    await says('batching-state', 'Off: one call a request.');
    await page.getByTestId('ordering-error').waitFor({ state: 'hidden' });

    await page.getByRole('button', { name: 'Turn ordering on' }).click();
    await says('ordering-state', /^On: .*up to 100 .* at most 600 seconds/);
    await expect(saved()).resolves.toMatchObject({
      batching: null,
      ordering: { maxPendingCalls: 100, maxHoldSeconds: 600 },
    });
    expect(await page.getByLabel('Max pending calls').inputValue()).toBe('100');

    await page.getByLabel('Max hold (seconds)').fill('300');
    await page.getByRole('button', { name: 'Save ordering' }).click();
    await says('ordering-state', 'at most 300 seconds');
    await expect(saved()).resolves.toMatchObject({
      ordering: { maxPendingCalls: 100, maxHoldSeconds: 300 },
    });

    await page.getByLabel('Max pending calls').fill('5000');
    await page.getByRole('button', { name: 'Save ordering' }).click();
    expect(await says('ordering-error', 'ordering.maxPendingCalls')).toMatch(
      /ordering\.maxPendingCalls.*1000.*\(invalid_request, HTTP 400\)$/,
    );
    await page.getByLabel('Max calls').fill('10');
    await page.getByRole('button', { name: 'Turn batching on' }).click();
    expect(await says('batching-error', 'ordering_with_batching')).toContain('HTTP 400');
    await expect(saved()).resolves.toMatchObject({
      batching: null,
      ordering: { maxPendingCalls: 100, maxHoldSeconds: 300 },
    });

    await page.getByRole('button', { name: 'Turn ordering off' }).click();
    await says('ordering-state', /^Off: /);
    await expect(saved()).resolves.toMatchObject({ ordering: null });
  });

  it('rotates the secret with an overlap and shows when the previous one stops signing', async () => {
    await page.getByLabel('New secret', { exact: true }).fill(PLAIN_SECRET);
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    expect(await says('secret-error', 'secret_not_whsec')).toContain('HTTP 400');
    expect(await page.getByLabel('New secret', { exact: true }).inputValue()).toBe('');

    await page.getByLabel('New secret', { exact: true }).fill(WHSEC_NEXT);
    await page.getByLabel('Overlap (seconds)').fill('a day');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    expect(await says('secret-error', 'overlapSeconds')).toContain('(invalid_request, HTTP 400)');
    await expect(saved()).resolves.toMatchObject({ previousSecretExpiresAt: null });

    const startedMs = Date.now();
    await page.getByLabel('New secret', { exact: true }).fill(WHSEC_NEXT);
    await page.getByLabel('Overlap (seconds)').fill('3600');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await says('secret-overlap', 'Rotation in progress');
    const { previousSecretExpiresAt } = await saved();
    const endsMs = Date.parse(previousSecretExpiresAt ?? '');
    expect(endsMs - startedMs).toBeGreaterThanOrEqual(3_599_000);
    expect(endsMs - startedMs).toBeLessThan(3_660_000);
    const shown = page.getByTestId('secret-overlap').locator('time');
    expect(await shown.getAttribute('datetime')).toBe(previousSecretExpiresAt);
    expect(await shown.textContent()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    expect(await page.getByTestId('secret-overlap').textContent()).toContain(
      'webhook-signature carries both signatures',
    );
    await expectNoSecretInPage();
  });

  it('turns sending a traceparent on and off', async () => {
    await page.getByRole('button', { name: 'Send traceparent', exact: true }).click();
    await says('traceparent-state', /^On: /);
    await expect(saved()).resolves.toMatchObject({ sendTraceparent: true });
    await page.getByRole('button', { name: 'Stop sending traceparent' }).click();
    await says('traceparent-state', /^Off: /);
    await expect(saved()).resolves.toMatchObject({ sendTraceparent: false });
  });

  it('fits a phone and shows no secret after a reload', async () => {
    await page.getByLabel('Max calls').fill('200');
    await page.getByRole('button', { name: 'Turn batching on' }).click();
    await says('batching-state', 'On: up to 200 calls');
    await page.reload();
    await page.getByTestId('secret-overlap').waitFor();
    await expectNoSecretInPage();
    if (SCREENSHOTS) {
      await page.screenshot({
        path: join(SCREENSHOT_DIR, 'destination-delivery.png'),
        fullPage: true,
      });
    }
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    );
    expect(overflow).toBe(0);
  });

  it("sums up the delivery settings in the source's list of destinations", async () => {
    const destination = await saved();
    expect(destination).toMatchObject({ batching: { maxCalls: 200 }, sendTraceparent: false });
    await page.goto(pageUrl.replace(/\/[^/]+$/, ''));
    const row = page.locator('tr[data-destination-id]').filter({ hasText: 'Hooks' });
    await expect(row.locator('td[data-label="Delivery"]').textContent()).resolves.toBe(
      `${destination.signatureMode}, batches of up to 200`,
    );
  });
});
