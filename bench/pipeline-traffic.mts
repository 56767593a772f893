/**
 * The pipeline bench's sender: `/v1/track` calls, one per request, each with a unique
 * messageId and the time its request was sent. Closed loop (a fixed number of requests in
 * flight) to find the maximum, open loop (a fixed rate, whatever the answers do) for live rates.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';

/** Timer step of the open loop; the calls owed are sent at each step. */
const TICK_MS = 10;
/** Longest a request waits for its answer. */
const REQUEST_TIMEOUT_MS = 10_000;

/** One call: when its request left, and when (whether) ingest answered 200. */
export interface TrackCall {
  readonly messageId: string;
  readonly sentAt: number;
  ackedAt?: number;
}

export class TrackSender {
  readonly calls = new Map<string, TrackCall>();
  /** Failed requests by kind (`503`, `ECONNRESET`). */
  readonly failures = new Map<string, number>();
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1_024 });
  private readonly prefix = `pipe-${randomBytes(4).toString('hex')}`;
  private readonly inFlight = new Set<Promise<void>>();
  private sequence = 0;
  private active = false;
  private timer?: NodeJS.Timeout;

  private readonly ingestUrl: URL;
  private readonly auth: string;

  constructor(ingestUrl: string, writeKey: string) {
    this.ingestUrl = new URL('/v1/track', ingestUrl);
    this.auth = `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`;
  }

  /** Keeps `concurrency` requests in flight until {@link stop}. */
  closedLoop(concurrency: number): void {
    this.active = true;
    for (let i = 0; i < concurrency; i += 1) {
      this.track(
        (async () => {
          while (this.active) await this.sendOne();
        })(),
      );
    }
  }

  /** Sends `rate` requests a second, spread over 10 ms steps, until {@link stop}. */
  openLoop(rate: number): void {
    this.active = true;
    const started = performance.now();
    let sent = 0;
    this.timer = setInterval(() => {
      const owed = Math.floor(((performance.now() - started) / 1_000) * rate) - sent;
      for (let i = 0; i < owed; i += 1) this.track(this.sendOne());
      sent += Math.max(owed, 0);
    }, TICK_MS);
  }

  /** Stops sending and waits for the requests in flight to be answered. */
  async stop(): Promise<void> {
    this.active = false;
    clearInterval(this.timer);
    await Promise.all([...this.inFlight]);
  }

  close(): void {
    this.agent.destroy();
  }

  private track(promise: Promise<void>): void {
    this.inFlight.add(promise);
    void promise.finally(() => this.inFlight.delete(promise));
  }

  private async sendOne(): Promise<void> {
    this.sequence += 1;
    const messageId = `${this.prefix}-${this.sequence}`;
    const body = JSON.stringify({
      userId: `user-${this.sequence % 1_000}`,
      event: 'Pipeline Bench',
      messageId,
      properties: { sequence: this.sequence },
    });
    const call: TrackCall = { messageId, sentAt: Date.now() };
    this.calls.set(messageId, call);
    const outcome = await this.post(body);
    if (outcome === 'ok') call.ackedAt = Date.now();
    else this.failures.set(outcome, (this.failures.get(outcome) ?? 0) + 1);
  }

  private post(body: string): Promise<string> {
    return new Promise((resolve) => {
      const req = request(
        this.ingestUrl,
        {
          method: 'POST',
          agent: this.agent,
          timeout: REQUEST_TIMEOUT_MS,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            authorization: this.auth,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === 200 ? 'ok' : String(res.statusCode)));
          res.on('error', () => resolve('response error'));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      req.end(body);
    });
  }
}
