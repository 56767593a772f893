/**
 * The chaos suite's traffic: an open-loop sender of calls with unique messageIds that retries
 * a request until it is acknowledged (as a client library does, with the same messageIds), and
 * a receiver, independent of Sluice's code, that checks each POST's signature and counts what
 * arrives per messageId.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';

/** Pause before a request that failed (503, refused, timed out) is sent again. */
const RETRY_MS = 1_000;
/** Longest a request waits for its answer, as Sluice's client library does by default. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Requests sent a tick; calls are spread over them. */
const TICK_MS = 100;

/** One call sent: when, in which phase, and whether ingest acknowledged it. */
export interface SentCall {
  readonly messageId: string;
  readonly phase: number;
  readonly createdAt: number;
  ackedAt?: number;
  /** Requests that carried it: more than 1 when the client sent it again. */
  attempts: number;
}

/** Sends `rate` calls a second in batches every 100 ms, each batch until acknowledged. */
export class Sender {
  readonly calls = new Map<string, SentCall>();
  /** Answers other than 200 and failed requests by phase, by kind (`503 kafka_unavailable`). */
  readonly failures = new Map<number, Map<string, number>>();
  /** Every answer, in order: when, what (`ok`, `503 kafka_unavailable`, `refused`...). */
  readonly answers: { readonly at: number; readonly outcome: string }[] = [];
  phase = 0;
  private timer?: NodeJS.Timeout;
  private sequence = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private stopping = false;

  private readonly ingestUrl: () => string;
  private readonly writeKey: string;
  private readonly rate: number;

  constructor(ingestUrl: () => string, writeKey: string, rate: number) {
    this.ingestUrl = ingestUrl;
    this.writeKey = writeKey;
    this.rate = rate;
  }

  start(): void {
    const perTick = this.rate / (1_000 / TICK_MS);
    let owed = 0;
    this.timer = setInterval(() => {
      owed += perTick;
      const n = Math.floor(owed);
      owed -= n;
      if (n > 0) this.track(this.send(this.batch(n)));
    }, TICK_MS);
  }

  /** Stops making calls; requests still being retried go on until acknowledged or `drain`. */
  stop(): void {
    clearInterval(this.timer);
  }

  /** Waits until every request is acknowledged, or `timeoutMs` passes (then gives up on them). */
  async drain(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.inFlight.size > 0 && Date.now() < deadline) await sleep(100);
    this.stopping = true;
    await Promise.all([...this.inFlight]);
    this.stopping = false;
  }

  /** Calls acknowledged. */
  acked(phase?: number): SentCall[] {
    return [...this.calls.values()].filter(
      (c) => c.ackedAt !== undefined && (phase === undefined || c.phase === phase),
    );
  }

  private batch(n: number): SentCall[] {
    const now = Date.now();
    return Array.from({ length: n }, () => {
      this.sequence += 1;
      const call: SentCall = {
        messageId: `chaos-${this.phase}-${this.sequence}-${randomBytes(4).toString('hex')}`,
        phase: this.phase,
        createdAt: now,
        attempts: 0,
      };
      this.calls.set(call.messageId, call);
      return call;
    });
  }

  private track(promise: Promise<void>): void {
    this.inFlight.add(promise);
    void promise.finally(() => this.inFlight.delete(promise));
  }

  private async send(calls: SentCall[]): Promise<void> {
    const body = JSON.stringify({
      batch: calls.map((c, i) => ({
        type: 'track',
        userId: `user-${(this.sequence + i) % 50}`,
        event: 'Chaos',
        messageId: c.messageId,
        properties: { createdAt: c.createdAt },
      })),
    });
    const auth = `Basic ${Buffer.from(`${this.writeKey}:`).toString('base64')}`;
    while (!this.stopping) {
      for (const c of calls) c.attempts += 1;
      const outcome = await fetch(`${this.ingestUrl()}/v1/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: auth },
        body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      }).then(
        async (res) => {
          const text = await res.text();
          if (res.status === 200) return 'ok';
          const code = (JSON.parse(text) as { code?: string }).code ?? '';
          return `${res.status} ${code}`.trim();
        },
        (error: unknown) => failureKind(error),
      );
      this.answers.push({ at: Date.now(), outcome });
      if (outcome === 'ok') {
        const now = Date.now();
        for (const c of calls) c.ackedAt = now;
        return;
      }
      const counts = this.failures.get(this.phase) ?? new Map<string, number>();
      counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
      this.failures.set(this.phase, counts);
      await sleep(RETRY_MS);
    }
  }
}

function failureKind(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause?.code;
  if (cause === 'ECONNREFUSED') return 'refused';
  if (error instanceof DOMException && error.name === 'TimeoutError') return 'timed out';
  return cause ?? (error instanceof Error ? error.name : 'failed');
}

/** Every delivery of one messageId. */
interface Arrivals {
  readonly at: number[];
}

/**
 * An HTTP receiver on 127.0.0.1 that checks `X-Signature` (HMAC-SHA1 of the raw body keyed by
 * the shared secret, docs/api.md) before anything else, answers 200, and records arrivals.
 */
export class Receiver {
  readonly arrivals = new Map<string, Arrivals>();
  /** Every arrival time, in order. */
  readonly times: number[] = [];
  badSignatures = 0;
  /** While set, each signed POST is answered with this status and not counted as arrived. */
  failWith?: number;
  /** POSTs answered with {@link failWith}. */
  failed = 0;
  private server?: Server;
  private port = 0;

  private readonly secret: string;

  constructor(secret: string) {
    this.secret = secret;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (!this.signed(body, req.headers['x-signature'])) {
          this.badSignatures += 1;
          res.writeHead(400).end();
          return;
        }
        if (this.failWith !== undefined) {
          this.failed += 1;
          res.writeHead(this.failWith).end();
          return;
        }
        const { messageId } = JSON.parse(body.toString('utf8')) as { messageId?: string };
        const now = Date.now();
        if (messageId !== undefined) {
          const arrivals = this.arrivals.get(messageId) ?? { at: [] };
          arrivals.at.push(now);
          this.arrivals.set(messageId, arrivals);
        }
        this.times.push(now);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Stops listening and drops its connections (the port is kept for {@link start}). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  private signed(body: Buffer, header: string | string[] | undefined): boolean {
    if (typeof header !== 'string') return false;
    const expected = Buffer.from(createHmac('sha1', this.secret).update(body).digest('hex'));
    const given = Buffer.from(header);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
