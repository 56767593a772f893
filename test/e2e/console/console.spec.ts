import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Locator, Page } from 'playwright-core';

import { Analytics } from '@app/client';

import { MASKED_HEADER_VALUE } from '../../../apps/admin/src/destinations/header-values';
import { startAdminBeside } from '../../helpers/admin-harness';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { TEST_ADMIN_TOKEN } from '../../helpers/services';
import { ReceivedRequest, WebhookReceiver } from '../../helpers/webhook-receiver';
import { launchChromium, TestBrowser } from '../../helpers/browser';
import { insertLedgerRows } from '../../helpers/ledger-fixtures';

/** Screenshots of the pages for docs/console.md, taken only when asked for. */
const SCREENSHOTS = process.env.SLUICE_CONSOLE_SCREENSHOTS === '1';
const SCREENSHOT_DIR = join(__dirname, '../../../docs/console');
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

const SECRET = 'console-secret-ü';
/** Markup in an event name and in a header value: never run (the event shown as text). */
const EVENT_XSS = '<img src=x onerror="window.__xss=1">';
const HEADER_XSS = '<img src=x onerror="window.__xss=2">';
/** What the receiver answers with its 400: the console shows it as text in the attempts. */
const REFUSAL = '{"error":"plan <b>unknown</b>","code":"E42"}';

/** The signature an implementation independent of the project computes: openssl's. */
function opensslHmacSha1(secret: string, body: Buffer): string {
  const out = execFileSync('openssl', ['dgst', '-sha1', '-hmac', secret], { input: body });
  return out.toString().trim().split('= ').pop() ?? '';
}

function messageIdOf(request: ReceivedRequest): string {
  return (JSON.parse(request.body.toString('utf8')) as { messageId: string }).messageId;
}

/** Polls `probe` every 250 ms (it may click) until it returns a value. */
async function poll<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The operator console in headless Chromium against the whole pipeline (ingest, router,
 * dispatcher, admin with its ledger writer) and a real webhook receiver that checks
 * signatures. Retry ladder 1 s, 2 s; window 8 s. The steps build on each other, in order.
 */
describe('the operator console in Chromium', () => {
  const h = new DispatcherHarness();
  const receiver = new WebhookReceiver();
  let admin: NestFastifyApplication;
  let consoleUrl: string;
  let adminOrigin: string;
  let browser: TestBrowser;
  let page: Page;
  /** Answers the receiver gives next, in order; 200 once none are left. */
  const nextAnswers: number[] = [];
  /** Every URL the page asked for: all must be the admin app's own. */
  const requested: string[] = [];
  const cspViolations: string[] = [];

  let sourceId: string;
  let writeKey: string;
  let analytics: Analytics;
  let deadId: string;

  beforeAll(async () => {
    await receiver.start();
    receiver.answer = () => {
      const status = nextAnswers.shift() ?? 200;
      return status === 400 ? { status, body: REFUSAL } : { status };
    };
    await h.start({ INGEST_USAGE_FLUSH_SECONDS: '1' });
    admin = await startAdminBeside(h);
    adminOrigin = await admin.getUrl();
    consoleUrl = `${adminOrigin}/console/`;
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    if (SCREENSHOTS) mkdirSync(SCREENSHOT_DIR, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    await analytics?.close();
    await browser?.close();
    await admin?.close();
    await h.close();
    await receiver.stop();
  });

  /** What the browser keeps for this origin: session and local storage, cookies, databases. */
  async function storedInBrowser(): Promise<Record<string, unknown>> {
    const inPage = await page.evaluate<Record<string, unknown>>(`(async () => ({
      session: Object.keys(sessionStorage),
      local: Object.keys(localStorage),
      documentCookie: document.cookie,
      databases: (await indexedDB.databases()).map((d) => d.name),
    }))()`);
    return { ...inPage, cookies: await browser.context.cookies() };
  }

  /** Whether any markup shown by the console ran (the payloads set `window.__xss`). */
  async function xssRan(): Promise<unknown> {
    return page.evaluate('window.__xss');
  }

  /** Opens a console page by its hash route and waits for its heading. */
  async function open(hash: string, heading: string | RegExp): Promise<void> {
    await page.goto(`${consoleUrl}${hash}`);
    try {
      await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor();
    } catch (error) {
      // Say what the page showed instead: a timeout alone does not tell a route from a render.
      const shown = await page.evaluate(
        '[location.hash, [...document.querySelectorAll("h1")].map((h) => h.textContent)]',
      );
      throw new Error(
        `opening ${hash}: no heading ${String(heading)}; the page shows ${JSON.stringify(shown)}`,
        { cause: error },
      );
    }
  }

  /** The results of a deliveries or dead-letters search, once loaded. */
  async function results(): Promise<Locator> {
    const box = page.locator('[data-testid="results"]:not([aria-busy])');
    await box.waitFor();
    return box;
  }

  /** Presses `button` until the row of `messageId` whose text matches `text` is listed. */
  async function rowAfterSearch(
    button: string,
    messageId: string,
    text: RegExp,
    timeoutMs = 20_000,
  ): Promise<Locator> {
    return poll(
      `a row of ${messageId} matching ${text}`,
      async () => {
        await page.getByRole('button', { name: button }).click();
        const row = (await results())
          .locator(`tr[data-message-id="${messageId}"]`)
          .filter({ hasText: text });
        return (await row.count()) > 0 ? row.first() : undefined;
      },
      timeoutMs,
    );
  }

  async function screenshot(name: string): Promise<void> {
    if (SCREENSHOTS) {
      await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
    }
  }

  it('refuses a wrong token with a clear message and stores nothing in the browser', async () => {
    await page.goto(consoleUrl);
    await page.getByLabel('Admin token').fill('not-the-admin-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.filter({ hasText: 'refused this token' }).waitFor();
    expect(await alert.textContent()).toMatch(/refused this token \(HTTP 403.*Nothing was stored/);
    expect(await storedInBrowser()).toEqual({
      session: [],
      local: [],
      documentCookie: '',
      databases: [],
      cookies: [],
    });
    await screenshot('sign-in-refused');
  });

  it('signs in from the keyboard; the token goes to sessionStorage only', async () => {
    await page.goto(consoleUrl);
    await page.getByLabel('Admin token').focus();
    await page.keyboard.type(TEST_ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Sources' }).waitFor();
    const stored = await storedInBrowser();
    expect(stored).toMatchObject({ local: [], documentCookie: '', databases: [], cookies: [] });
    expect(stored.session).toHaveLength(1);
    // Keyboard focus is visible: the outline :focus-visible draws.
    await page.getByLabel('Name').focus();
    await page.keyboard.press('Tab');
    const outline = await page.evaluate(`(() => {
      const el = document.activeElement;
      return { tag: el.tagName, text: el.textContent, style: getComputedStyle(el).outlineStyle };
    })()`);
    expect(outline).toEqual({ tag: 'BUTTON', text: 'Create source', style: 'solid' });
  });

  it('creates a source and shows its write key', async () => {
    await page.getByLabel('Name').fill('Shop');
    await page.getByRole('button', { name: 'Create source' }).click();
    writeKey = (await page.getByTestId('write-key').textContent()) ?? '';
    expect(writeKey).toMatch(/^[\w-]{43}$/);
    const row = page.locator('tr[data-source-id]').filter({ hasText: 'Shop' });
    sourceId = (await row.getAttribute('data-source-id')) ?? '';
    const sources = (await (
      await fetch(`${adminOrigin}/admin/v1/sources`, {
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      })
    ).json()) as { id: string; name: string }[];
    expect(sources).toEqual([expect.objectContaining({ id: sourceId, name: 'Shop' })]);
    await screenshot('source-created');
  });

  it("sets up the source's webhooks destination: webhook with a header, secret, enabled", async () => {
    await page
      .locator(`tr[data-source-id="${sourceId}"]`)
      .getByRole('link', { name: 'Destination', exact: true })
      .click();
    await page.getByRole('heading', { level: 1, name: 'Destination of Shop' }).waitFor();
    await page.getByRole('button', { name: 'Create webhooks destination' }).click();
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByLabel('URL').fill(receiver.url('/console-hook'));
    await page.getByLabel('Header 1 name').fill('X-Console-Test');
    await page.getByLabel('Header 1 value').fill(HEADER_XSS);
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByText(receiver.url('/console-hook'), { exact: true }).waitFor();
    await page.getByLabel('Shared secret').fill(SECRET);
    await page.getByRole('button', { name: 'Set secret' }).click();
    await page.getByTestId('secret-state').filter({ hasText: 'A shared secret is set' }).waitFor();
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await page
      .getByTestId('destination-state')
      .filter({ hasText: /^enabled$/ })
      .waitFor();

    // The header's name is shown and its value masked (stored encrypted, like the shared
    // secret): the value is nowhere on the page, and its markup never ran.
    const headerList = page.locator('main dl.headers');
    await headerList.getByText('X-Console-Test', { exact: true }).waitFor();
    await headerList.getByText(MASKED_HEADER_VALUE, { exact: true }).waitFor();
    expect(await page.locator('main').innerText()).not.toContain(HEADER_XSS);
    expect(await xssRan()).toBeUndefined();
    expect(await page.locator('main img').count()).toBe(0);

    await h.routerSees('the destination enabled', (d) => d?.enabled === true, sourceId);
    const destinationId = h.routerSettings.destinationsForSource(sourceId)[0]?.id ?? '';
    await h.dispatcherSees(destinationId, (d) => d?.enabled === true && d.webhooks.length === 1);
  });

  it('a call sent with the client library and the write key from the page is delivered, signed', async () => {
    analytics = new Analytics({ writeKey, endpoint: h.url, flushAt: 1 });
    const messageId = analytics.track({ userId: 'console-user', event: EVENT_XSS });
    await analytics.flush();
    const [request] = await receiver.received(1);
    expect(messageIdOf(request)).toBe(messageId);
    expect(request.headers['x-signature']).toBe(opensslHmacSha1(SECRET, request.body));
    expect(request.headers['x-console-test']).toBe(HEADER_XSS);

    await open(`#/deliveries?messageId=${encodeURIComponent(messageId)}`, 'Deliveries');
    const row = await rowAfterSearch('Search', messageId, /delivered/);
    // The event name is shown as text; its markup never ran.
    expect(await row.textContent()).toContain(EVENT_XSS);
    expect(await xssRan()).toBeUndefined();
    expect(await page.locator('main img').count()).toBe(0);

    // Its one attempt, with the webhook's answer.
    await row.getByRole('link', { name: 'Attempts' }).click();
    await page.getByRole('heading', { level: 1, name: 'Delivery', exact: true }).waitFor();
    const attempts = page.locator('ol.attempts > li');
    await attempts.first().waitFor();
    expect(await attempts.count()).toBe(1);
    expect(await attempts.first().textContent()).toMatch(
      /Attempt 1.*delivered.*HTTP 200.*success/s,
    );
    expect(await page.getByText(EVENT_XSS, { exact: true }).count()).toBe(1);
    expect(await xssRan()).toBeUndefined();
  });

  it('a call answered 500 then 400 is retried, then dead with its reason and status', async () => {
    nextAnswers.push(500, 400);
    const messageId = analytics.track({ userId: 'console-user', event: 'Order Refunded' });
    await analytics.flush();
    await receiver.received(3);

    // Found by the user's id and the event name, as support is asked about it.
    await open('#/deliveries', 'Deliveries');
    await page.getByLabel('User (userId or anonymousId)').fill('console-user');
    await page.getByLabel('Event').fill('Order Refunded');
    const row = await rowAfterSearch('Search', messageId, /dead/);
    expect(await row.textContent()).toMatch(
      /Shop.*console-user.*Order Refunded.*dead.*2.*400.*http_4xx/s,
    );
    expect(page.url()).toContain('user=console-user');
    deadId = (await row.getAttribute('data-delivery-id')) ?? '';

    // Its attempts: the retry after HTTP 500, then the permanent HTTP 400.
    await row.getByRole('link', { name: 'Attempts' }).click();
    await page.getByRole('heading', { level: 1, name: 'Delivery', exact: true }).waitFor();
    const attempts = page.locator('ol.attempts > li');
    await attempts.nth(1).waitFor();
    expect(await attempts.count()).toBe(2);
    expect(await attempts.nth(0).textContent()).toMatch(/Attempt 1.*retrying.*HTTP 500.*http_5xx/s);
    expect(await attempts.nth(0).textContent()).toContain('HTTP 500');
    expect(await attempts.nth(1).textContent()).toMatch(/Attempt 2.*dead.*HTTP 400.*http_4xx/s);
    // The endpoint's answer, as text, and the request's headers with the static value masked;
    // the webhook by its URL.
    const answered = attempts.nth(1).getByTestId('response-body');
    expect(await answered.textContent()).toBe(REFUSAL);
    expect(await attempts.nth(1).textContent()).toContain(receiver.url('/console-hook'));
    const headers = await attempts.nth(1).locator('.headers').textContent();
    expect(headers).toMatch(/X-Console-Test\*{8}/);
    expect(headers).toMatch(/x-signature\*{8}/);
    expect(await page.locator('main').textContent()).not.toContain(HEADER_XSS);
    expect(await xssRan()).toBeUndefined();
    expect(await page.locator('main img, main b').count()).toBe(0);
    // Times carry their zone, in one format.
    expect(await page.locator('dl.facts time').first().textContent()).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC([+-]\d\d:\d\d)?$/,
    );
  });

  it('a dead letter replayed from the page reaches the fixed receiver with the same messageId, signed', async () => {
    const deadMessageId = messageIdOf(receiver.requests[2]);
    await open(`#/dead?sourceId=${sourceId}`, 'Dead letters');
    const row = await rowAfterSearch('Show dead letters', deadMessageId, /http_4xx/);
    expect(await row.textContent()).toMatch(/Order Refunded.*http_4xx.*400.*HTTP 400/s);
    // The replay button is enabled once the ledger has the dead letter's position.
    const replay = await poll('the replay button enabled', async () => {
      const button = (
        await rowAfterSearch('Show dead letters', deadMessageId, /http_4xx/)
      ).getByRole('button', { name: `Replay message ${deadMessageId}` });
      return (await button.isEnabled()) ? button : undefined;
    });
    await replay.click();
    await page.getByText('Replayed as').waitFor();

    const [, , , again] = await receiver.received(4);
    expect(messageIdOf(again)).toBe(deadMessageId);
    expect(again.headers['x-signature']).toBe(opensslHmacSha1(SECRET, again.body));
    expect(again.body.equals(receiver.requests[2].body)).toBe(true);

    // Both deliveries of the message: the dead one, replayed once, and its delivered replay.
    await open(`#/deliveries?messageId=${encodeURIComponent(deadMessageId)}`, 'Deliveries');
    await rowAfterSearch('Search', deadMessageId, /delivered/);
    await page.goto(`${consoleUrl}#/deliveries/${deadId}`);
    await page.getByText('Replays').waitFor();
    expect(await page.locator('dl.facts').textContent()).toMatch(/Replays1/);
    // The original says it was replayed, and by which delivery: the one that was delivered.
    const mark = page.getByTestId('delivery-outcome').getByTestId('replayed');
    await mark.waitFor();
    await mark.getByRole('link').click();
    await page
      .getByTestId('delivery-outcome')
      .filter({ hasText: /delivered.*replay/ })
      .waitFor();
    expect(await page.locator('dl.facts').textContent()).toContain(`Replay of${deadId}`);

    // Replaying it again from the dead letters asks first.
    await open(`#/dead?sourceId=${sourceId}`, 'Dead letters');
    const replayed = await rowAfterSearch('Show dead letters', deadMessageId, /replayed by/);
    const button = replayed.getByRole('button', { name: `Replay message ${deadMessageId}` });
    await button.click();
    await replayed
      .getByTestId('already-replayed')
      .filter({ hasText: 'Already replayed once' })
      .waitFor();
    expect(await button.textContent()).toBe('Replay again');
    expect(receiver.requests).toHaveLength(4);
  });

  it("the page opened with ?sourceId shows only that source's rows, before any search", async () => {
    const otherMessage = `other-${Date.now()}`;
    await insertLedgerRows(h.db.url, [
      {
        firstAttemptAt: new Date().toISOString(),
        messageId: otherMessage,
        state: 'dead',
        reason: 'http_4xx',
        userId: 'console-user',
      },
    ]);
    await open('#/deliveries', 'Deliveries');
    await (await results()).locator(`tr[data-message-id="${otherMessage}"]`).waitFor();
    for (const hash of [`#/deliveries?sourceId=${sourceId}`, `#/dead?sourceId=${sourceId}`]) {
      await open(hash, /^(Deliveries|Dead letters)$/);
      const rows = (await results()).locator('tr[data-message-id]');
      await rows.first().waitFor();
      expect(await rows.count()).toBeGreaterThan(0);
      for (const text of await rows.allTextContents()) expect(text).toContain('Shop');
      expect(await page.locator(`tr[data-message-id="${otherMessage}"]`).count()).toBe(0);
    }
  });

  it('a bulk replay of the range shows its job finishing, and the receiver gets it again', async () => {
    await open(`#/dead?sourceId=${sourceId}`, 'Dead letters');
    await (await results()).waitFor();
    // Not yet replayed only: the one dead letter was replayed, so the list and the job are empty.
    await page.getByLabel('Not yet replayed only').check();
    await page.getByRole('button', { name: 'Show dead letters' }).click();
    await (await results()).getByText('No delivery matches.').waitFor();
    await page.getByRole('button', { name: 'Replay all in range' }).click();
    const job = page.getByTestId('replay-job');
    await job.filter({ hasText: /finished\. 0 of 0 replayed/ }).waitFor();
    await page.getByLabel('Not yet replayed only').uncheck();
    await page.getByRole('button', { name: 'Replay all in range' }).click();
    await job
      .filter({ hasText: /finished\. 1 of 1 replayed, 0 failed/ })
      .waitFor({ timeout: 20_000 });
    const requests = await receiver.received(5);
    expect(messageIdOf(requests[4])).toBe(messageIdOf(requests[2]));
    expect(requests[4].headers['x-signature']).toBe(opensslHmacSha1(SECRET, requests[4].body));
    await screenshot('bulk-replay');
    // Both jobs are listed, newest first.
    await open(`#/dead?sourceId=${sourceId}`, 'Dead letters');
    const jobs = page.locator('tr[data-job-id]');
    await jobs.nth(1).waitFor();
    expect(await jobs.first().textContent()).toMatch(/finished.*1 of 1/);
    expect(await jobs.nth(1).textContent()).toMatch(/finished.*0 of 0/);
  });

  it('the live view shows accepted calls and delivered, retrying and dead counts', async () => {
    await open('#/live', 'Live');
    const delivered = page.getByTestId('live-delivered');
    await poll('delivered counted', async () =>
      Number(await delivered.textContent()) >= 3 ? true : undefined,
    );
    expect(Number(await page.getByTestId('live-dead').textContent())).toBeGreaterThanOrEqual(1);
    // Accepted is a rate between two reads of the usage counters: calls sent now show in it.
    await page.getByText(/^Updated /).waitFor();
    for (let i = 0; i < 5; i += 1) analytics.track({ userId: 'live', event: 'Live View' });
    await analytics.flush();
    const accepted = await poll(
      'an accepted rate above 0',
      async () => {
        const rate = Number(await page.getByTestId('live-accepted').textContent());
        return rate > 0 ? rate : undefined;
      },
      20_000,
    );
    // 5 calls between two reads at least 5 s apart.
    expect(accepted).toBeLessThanOrEqual(1.5);
    await screenshot('live');
  });

  it("shows the destination's health: requests, success share and last error by webhook URL", async () => {
    await open(`#/sources/${sourceId}/destination`, 'Destination of Shop');
    await page.getByRole('link', { name: 'Health' }).click();
    await page.getByRole('heading', { level: 1, name: 'Destination health' }).waitFor();
    // A mouse click moved focus to the new page's heading: no outline (keyboard focus only).
    const focused = await page.evaluate(`(() => {
      const el = document.activeElement;
      return { tag: el.tagName, style: getComputedStyle(el).outlineStyle };
    })()`);
    expect(focused).toEqual({ tag: 'H1', style: 'none' });
    const hour = page
      .locator('[data-testid="health"] > section')
      .first()
      .locator('tr[data-window="hour"]');
    await hour.waitFor();
    // Requests so far (the 500 and the 400 among them); the latest failure is the 400.
    expect(await hour.textContent()).toMatch(
      /Last hour\d+\d+\.\d %\d+ ms\d+ ms.*http_4xx HTTP 400/s,
    );
    await page.getByTestId('breaker-state').filter({ hasText: 'closed' }).waitFor();
    await page.getByText(receiver.url('/console-hook'), { exact: true }).waitFor();
    await screenshot('destination-health');
  });

  it("lists the source's destinations, creates one with a filter, and shows a bad filter's path", async () => {
    await open(`#/sources/${sourceId}/destinations`, 'Destinations of Shop');
    await page.locator('tr[data-destination-id]').filter({ hasText: 'Webhooks' }).waitFor();
    await page.getByLabel('Name').fill('Data');
    await page.getByLabel('Filter (JSON)').fill('{"types":["track"]}');
    await page.getByRole('button', { name: 'Create destination' }).click();
    const row = page.locator('tr[data-destination-id]').filter({ hasText: 'Data' });
    await row.filter({ hasText: '{"types":["track"]}' }).waitFor();
    const dataId = (await row.getAttribute('data-destination-id')) ?? '';

    await row.getByRole('link', { name: 'Data' }).click();
    await page.getByRole('heading', { level: 1, name: 'Destination of Shop' }).waitFor();
    // A destination whose receiver never failed: its breaker closed, no change seen.
    await page
      .getByTestId('breaker-state')
      .filter({ hasText: 'closed: requests go out' })
      .waitFor();
    await page.getByTestId('rate-limit').filter({ hasText: 'none' }).waitFor();
    // A limit set through the API shows on the page.
    const limited = await fetch(
      `${adminOrigin}/admin/v1/sources/${sourceId}/destinations/${dataId}`,
      {
        method: 'PATCH',
        headers: {
          authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ rateLimitPerSecond: 50 }),
      },
    );
    expect(limited.status).toBe(200);
    await page.reload();
    await page
      .getByTestId('rate-limit')
      .filter({ hasText: '50 deliveries a second, over every dispatcher' })
      .waitFor();
    await page
      .getByLabel('Filter (JSON)')
      .fill(
        '{"where":{"and":[{"field":"userId","op":"exists"},{"field":"a","op":"$gte","value":1}]}}',
      );
    await page.getByRole('button', { name: 'Save filter' }).click();
    await page
      .getByTestId('filter-error')
      .filter({ hasText: 'filter.where.and[1].op: must be one of' })
      .filter({ hasText: 'invalid_filter' })
      .waitFor();
    const good = { where: { field: 'properties.total', op: 'gte', value: 100 } };
    await page.getByLabel('Filter (JSON)').fill(JSON.stringify(good));
    await page.getByRole('button', { name: 'Save filter' }).click();
    await page.getByTestId('filter-state').filter({ hasText: 'Takes only the calls' }).waitFor();
    // The state reads the same before and after the save: the API says when it is saved.
    const saved = await poll('the filter saved', async () => {
      const answer = (await (
        await fetch(`${adminOrigin}/admin/v1/sources/${sourceId}/destinations/${dataId}`, {
          headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
        })
      ).json()) as { name: string; filter: unknown };
      return JSON.stringify(answer.filter).includes('properties.total') ? answer : undefined;
    });
    expect(saved).toMatchObject({ name: 'Data', filter: good });
  });

  it('every page fits a phone screen and a 1280 px one, and loads nothing from elsewhere', async () => {
    const pages: [string, string, string][] = [
      ['#/sources', 'Sources', 'sources'],
      [`#/sources/${sourceId}`, 'Source: Shop', 'source-usage'],
      [`#/sources/${sourceId}/destination`, 'Destination of Shop', 'destination'],
      [`#/sources/${sourceId}/destinations`, 'Destinations of Shop', 'destinations'],
      [`#/deliveries?sourceId=${sourceId}`, 'Deliveries', 'deliveries'],
      [`#/deliveries/${deadId}`, 'Delivery', 'delivery-attempts'],
      [`#/dead?sourceId=${sourceId}`, 'Dead letters', 'dead-letters'],
      [
        `#/sources/${sourceId}/destinations/${h.routerSettings.destinationsForSource(sourceId)[0]?.id}/health`,
        'Destination health',
        'destination-health',
      ],
      ['#/live', 'Live', 'live'],
    ];
    for (const [size, suffix] of [
      [PHONE, '-phone'],
      [DESKTOP, ''],
    ] as const) {
      await page.setViewportSize(size);
      for (const [hash, heading, name] of pages) {
        await open(hash, heading);
        await page.waitForLoadState('networkidle');
        if (name === 'live') await page.getByText(/^Updated /).waitFor();
        const overflow = await page.evaluate(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        );
        expect({ hash, width: size.width, overflow }).toEqual({
          hash,
          width: size.width,
          overflow: 0,
        });
        // The live view at 1280 px was taken while calls came in.
        if (name !== 'live' || suffix) await screenshot(`${name}${suffix}`);
      }
    }
    expect(requested.filter((url) => !url.startsWith(`${adminOrigin}/`))).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
