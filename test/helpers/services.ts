import { randomBytes } from 'node:crypto';

/** The broker and database the tests use; `npm test` starts local ones when unset. */
export function serviceEnv(): { kafkaBrokers: string[]; databaseUrl: string } {
  const brokers = process.env.KAFKA_BROKERS;
  const databaseUrl = process.env.DATABASE_URL;
  if (!brokers || !databaseUrl) {
    throw new Error('KAFKA_BROKERS and DATABASE_URL must be set: run the tests with `npm test`');
  }
  return { kafkaBrokers: brokers.split(','), databaseUrl };
}

/** The admin token and encryption key the tests' apps use (never real secrets). */
export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const TEST_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');

/**
 * A topic prefix no other test uses, so each test has topics of its own. It starts with
 * `t-<run>-`, the run named by the global setup, whose teardown deletes the run's topics.
 */
export function uniquePrefix(label: string): string {
  const run = process.env.SLUICE_TEST_RUN ?? 'norun';
  return `t-${run}-${label}-${randomBytes(4).toString('hex')}.`;
}

/**
 * Polls `probe` until it returns a value other than undefined, or fails after `timeoutMs`.
 * Tests wait with this, never with fixed sleeps.
 */
export async function eventually<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A metric of an app's `/metrics`, summed over the lines with these labels (0 when absent). */
export async function scrapeMetric(
  baseUrl: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (wanted.every((pair) => line.includes(pair))) total += Number(line.split(' ').pop());
  }
  return total;
}
