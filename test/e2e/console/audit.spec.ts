import type { Page } from 'playwright-core';

import { AdminHarness } from '../../helpers/admin-harness';
import { launchChromium, TestBrowser } from '../../helpers/browser';

const READER = 'console-reader-token-000000000001';
const WRITER = 'console-writer-token-000000000002';

/**
 * Token scopes and the audit log in the console, in headless Chromium against the admin app
 * (its own database, the real Kafka). The steps build on each other, in order.
 */
describe('the console with a read-only and a full token', () => {
  const h = new AdminHarness();
  let browser: TestBrowser;
  let page: Page;
  let consoleUrl: string;
  let sourceId: string;

  beforeAll(async () => {
    await h.start({ ADMIN_NAMED_TOKENS: `support:read:${READER},ops:full:${WRITER}` });
    consoleUrl = `${h.url}/console/`;
    const created = await h.call('POST', '/admin/v1/sources', { name: 'Shop' }, WRITER);
    sourceId = created.body.id as string;
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await h.close();
  });

  async function signIn(token: string): Promise<void> {
    await page.goto(consoleUrl);
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sources' }).waitFor();
  }

  async function auditRows(): Promise<{ status: number; rows: unknown[] }> {
    const answer = await h.call('GET', '/admin/v1/audit?limit=500');
    return { status: answer.status, rows: answer.body.items as unknown[] };
  }

  /** The alert a refused change shows; the page stays signed in. */
  async function refusal(): Promise<string> {
    const alert = page.getByRole('alert').filter({ hasText: 'token_read_only' });
    await alert.waitFor();
    return (await alert.textContent()) ?? '';
  }

  it('a read-only token can look, but every change is refused with 403 and audited nothing', async () => {
    const before = await auditRows();
    await signIn(READER);
    await page.locator('tr[data-source-id]').filter({ hasText: 'Shop' }).waitFor();

    await page.getByLabel('Name').fill('Not allowed');
    await page.getByRole('button', { name: 'Create source' }).click();
    expect(await refusal()).toMatch(/may only read.*\(token_read_only, HTTP 403\)/);

    await page.goto(`${consoleUrl}#/sources/${sourceId}`);
    await page.getByRole('heading', { level: 1, name: 'Shop' }).waitFor();
    await page.getByRole('button', { name: 'Disable source' }).click();
    expect(await refusal()).toContain('HTTP 403');
    await page.getByRole('button', { name: 'Rotate write key' }).click();
    await page.getByRole('button', { name: 'Rotate now' }).click();
    await page.getByRole('alert').filter({ hasText: 'token_read_only' }).last().waitFor();
    // Still signed in, and still able to look.
    await page.goto(`${consoleUrl}#/audit`);
    await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
    await page.getByTestId('audit').locator('tr[data-audit-id]').first().waitFor();

    const sources = (await h.call('GET', '/admin/v1/sources')).body as { name: string }[];
    expect(sources.map((s) => s.name)).toEqual(['Shop']);
    await expect(h.call('GET', `/admin/v1/sources/${sourceId}`)).resolves.toMatchObject({
      body: { enabled: true },
    });
    await expect(auditRows()).resolves.toEqual(before);
    const audit = await page.getByTestId('audit').textContent();
    expect(audit).not.toContain('support');
  });

  it("a full token's change appears in the audit log, under the token's name", async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(WRITER);
    await page.getByLabel('Name').fill('Billing');
    await page.getByRole('button', { name: 'Create source' }).click();
    const row = page.locator('tr[data-source-id]').filter({ hasText: 'Billing' });
    const billingId = (await row.getAttribute('data-source-id')) ?? '';
    expect(billingId).toMatch(/^[0-9a-f-]{36}$/);

    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
    const newest = page.getByTestId('audit').locator('tr[data-audit-id]').first();
    await newest.waitFor();
    const cells = await newest.locator('td').allTextContents();
    expect(cells.slice(1)).toEqual(['ops', 'POST', '/admin/v1/sources', billingId]);
    expect(cells[0]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/);
    // The source made through the API before signing in is the next one down, by the same token.
    const next = await page
      .getByTestId('audit')
      .locator('tr[data-audit-id]')
      .nth(1)
      .locator('td')
      .allTextContents();
    expect(next.slice(1)).toEqual(['ops', 'POST', '/admin/v1/sources', sourceId]);
  });
});
