/**
 * The physical limit for the dispatcher: a bare undici loop in its own process that POSTs the
 * same bytes, with the same headers (User-Agent, Content-Type, the body's precomputed
 * `X-Signature`), to the same sink through `new Pool(origin, { connections }).request(...)`,
 * `concurrency` requests in flight, each answer's body drained. Nothing else: no Kafka, no
 * settings, no per-request signing.
 *
 * `node bench/dispatcher-bare.mts '<BareSpec as JSON>'` prints `{"event":"done",...}` after
 * `requests` answers, then waits for SIGTERM (so its CPU can still be read).
 */
import { Pool } from 'undici';

/** What the loop posts, where, and how many at once. */
export interface BareSpec {
  readonly origin: string;
  readonly path: string;
  readonly body: string;
  readonly headers: Record<string, string>;
  /** The dispatcher's DISPATCHER_CONNECTIONS_PER_ORIGIN. */
  readonly connections: number;
  /** Requests in flight at once. */
  readonly concurrency: number;
  readonly requests: number;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as BareSpec;
const pool = new Pool(spec.origin, { connections: spec.connections });
const body = Buffer.from(spec.body);
let next = 0;
let failures = 0;

async function worker(): Promise<void> {
  while (next < spec.requests) {
    next += 1;
    try {
      const response = await pool.request({
        path: spec.path,
        method: 'POST',
        headers: spec.headers,
        body,
      });
      await response.body.dump();
      if (response.statusCode !== 200) failures += 1;
    } catch {
      failures += 1;
    }
  }
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void pool.close().finally(() => process.exit(0)));
}
await Promise.all(Array.from({ length: spec.concurrency }, worker));
process.stdout.write(`${JSON.stringify({ event: 'done', failures })}\n`);
// Keeps the process (and its /proc entry) until the bench stops it.
setInterval(() => undefined, 60_000);
