import { isIP } from 'node:net';
import type { SecureContextOptions } from 'node:tls';

import { Agent, type Dispatcher } from 'undici';

import { AttemptResult, classifyError, classifyStatus, responseText } from './attempt-result';
import { SsrfGuard } from './ssrf-guard';
import { WEBHOOK_METHOD } from './webhook-request';

/** Options of the {@link WebhookClient}. */
export interface WebhookClientOptions {
  /** Deadline of one POST: connecting, the answer's headers and its body. */
  readonly timeoutMs: number;
  /** Connections kept to one origin. */
  readonly connectionsPerOrigin: number;
  readonly guard: SsrfGuard;
  /** Trusted CA certificates replacing the default set (which then must be included). */
  readonly ca?: SecureContextOptions['ca'];
  /** The most bytes of an answer's body read (and discarded); the rest closes the socket. */
  readonly maxResponseBytes?: number;
  /** Bytes of a non-2xx answer's body kept as its `body` (0: none); 2,048 unless set. */
  readonly responseBodyBytes?: number;
  /** Starts and cancels each attempt's deadline; `setTimeout` unless a test decides. */
  readonly deadlines?: Deadlines;
}

/** Starts a deadline that calls `expire` after `ms`, and cancels one by its handle. */
export interface Deadlines {
  start(expire: () => void, ms: number): unknown;
  cancel(handle: unknown): void;
}

const TIMER_DEADLINES: Deadlines = {
  start: (expire, ms) => setTimeout(expire, ms),
  cancel: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Bytes of a failed answer's body kept unless configured. */
export const DEFAULT_RESPONSE_BODY_BYTES = 2_048;

/** Why a URL with a user or password in it is not posted to. */
const CREDENTIALS_IN_URL = 'the URL carries a user or password; use an Authorization header';

/** Most parsed webhook URLs remembered (Sluice allows 5 per destination). */
const MAX_REMEMBERED_TARGETS = 10_000;

/** A webhook URL's origin and path, checked. */
interface Target {
  readonly origin: string;
  readonly path: string;
}

/**
 * POSTs webhook bodies through undici's pooled dispatcher (one pool per origin, bounded
 * connections, keep-alive), with a deadline per attempt, redirects never followed, answers
 * drained up to a cap, and every connection checked by the SSRF guard. TLS certificates are
 * always verified.
 */
export class WebhookClient {
  private readonly agent: Agent;
  private readonly maxResponseBytes: number;
  private readonly responseBodyBytes: number;
  private readonly deadlines: Deadlines;
  /** Parsed and checked webhook URLs by their text. */
  private readonly targets = new Map<string, Target | AttemptResult>();

  constructor(private readonly options: WebhookClientOptions) {
    this.maxResponseBytes = options.maxResponseBytes ?? 64 * 1024;
    this.responseBodyBytes = options.responseBodyBytes ?? DEFAULT_RESPONSE_BODY_BYTES;
    this.deadlines = options.deadlines ?? TIMER_DEADLINES;
    this.agent = new Agent({
      connections: options.connectionsPerOrigin,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: {
        timeout: options.timeoutMs,
        lookup: options.guard.lookup,
        ...(options.ca === undefined ? {} : { ca: options.ca }),
      },
    });
  }

  /** POSTs `body` to `url` with `headers` (`webhook-request.ts` makes them); never throws. */
  post(url: string, body: Buffer, headers: Record<string, string>): Promise<AttemptResult> {
    const target = this.target(url);
    if ('kind' in target) return Promise.resolve(target);
    return new Promise((resolve) => {
      const attempt = new Attempt(resolve, this.options.timeoutMs, this.deadlines, {
        max: this.maxResponseBytes,
        kept: this.responseBodyBytes,
      });
      this.agent.dispatch(
        { origin: target.origin, path: target.path, method: WEBHOOK_METHOD, headers, body },
        attempt,
      );
    });
  }

  /** Where a URL goes, or why it cannot be posted to; remembered, as URLs rarely change. */
  private target(url: string): Target | AttemptResult {
    let target = this.targets.get(url);
    if (target === undefined) {
      target = parseTarget(url, this.options.guard);
      // Bounded: URLs edited over a long run must not grow the map for ever.
      if (this.targets.size >= MAX_REMEMBERED_TARGETS) this.targets.clear();
      this.targets.set(url, target);
    }
    return target;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/**
 * One POST as an undici dispatch handler: it keeps the status, the `Retry-After` of an
 * answer that may carry one, and counts the body's bytes without buffering them. This is
 * what `Dispatcher.request` plus `body.dump()` did, without the response stream, the parsed
 * header object, the async resource and the abort signal that those build for every request.
 * Its one deadline covers the whole attempt, including a wait for a pooled connection.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private abort?: (reason?: Error) => void;
  private readonly deadline: unknown;
  private timedOut = false;
  private settled = false;
  private status = 0;
  private retryAfter?: string;
  private bytes = 0;
  /** The start of a non-2xx answer's body, up to `limits.kept` bytes. */
  private kept: Buffer[] = [];

  constructor(
    private readonly resolve: (result: AttemptResult) => void,
    private readonly timeoutMs: number,
    private readonly deadlines: Deadlines,
    /** `max`: bytes read before the socket closes; `kept`: bytes of a failed answer kept. */
    private readonly limits: { readonly max: number; readonly kept: number },
  ) {
    this.deadline = deadlines.start(() => this.expire(), timeoutMs);
  }

  onConnect(abort: (reason?: Error) => void): void {
    // Timed out while waiting for a connection: the request is dropped before it is sent.
    if (this.settled) abort(new Error('deadline passed'));
    else this.abort = abort;
  }

  onHeaders(status: number, rawHeaders: Buffer[] | string[] | null): boolean {
    // 1xx answers are informational; the final status follows.
    if (status < 200) return true;
    this.status = status;
    if (status >= 300 && rawHeaders) this.retryAfter = headerValue(rawHeaders, 'retry-after');
    return true;
  }

  onData(chunk: Buffer): boolean {
    const room = this.limits.kept - this.bytes;
    // Only a failure's body is kept (copied: the chunk is the client's): a success's is never read.
    if (room > 0 && this.status >= 300) this.kept.push(Buffer.from(chunk.subarray(0, room)));
    this.bytes += chunk.length;
    if (this.bytes > this.limits.max) {
      // Enough read: the status is known; the rest is not waited for and the socket closes.
      this.settle(this.statusResult());
      this.abort?.(new Error('answer longer than the cap'));
      return false;
    }
    return true;
  }

  onComplete(): void {
    this.settle(this.statusResult());
  }

  onError(error: Error): void {
    this.settle(this.answered(classifyError(error, this.timedOut, this.timeoutMs)));
  }

  private expire(): void {
    this.timedOut = true;
    this.settle(this.answered(classifyError(undefined, true, this.timeoutMs)));
    this.abort?.(new Error('deadline passed'));
  }

  /** Once the status has arrived it is the outcome, even if the body then fails or stalls. */
  private answered(otherwise: AttemptResult): AttemptResult {
    return this.status === 0 ? otherwise : this.statusResult();
  }

  /** What the status means, with the start of a failed answer's body when there was one. */
  private statusResult(): AttemptResult {
    const result = classifyStatus(this.status, this.retryAfter);
    if (result.kind === 'success' || this.kept.length === 0) return result;
    return { ...result, body: responseText(Buffer.concat(this.kept)) };
  }

  private settle(result: AttemptResult): void {
    if (this.settled) return;
    this.settled = true;
    this.deadlines.cancel(this.deadline);
    this.resolve(result);
  }
}

/** The first value of a header in undici's raw `[name, value, name, value...]` list. */
function headerValue(raw: Buffer[] | string[], name: string): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i];
    if (key.length === name.length && key.toString().toLowerCase() === name) {
      return raw[i + 1].toString();
    }
  }
  return undefined;
}

/**
 * A URL's origin and path, or why it cannot be posted to (not http(s), a user or password in
 * it, an internal IP literal). Host names may hold `_` (Docker Compose service names).
 */
function parseTarget(url: string, guard: SsrfGuard): Target | AttemptResult {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { kind: 'permanent', reason: 'invalid_url', detail: 'not an absolute URL' };
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return { kind: 'permanent', reason: 'invalid_url', detail: 'not http or https' };
  }
  // Saved before the admin API refused them. Never sent (nor repeated in the detail): a
  // receiver expecting them would answer 401 to every delivery anyway.
  if (target.username !== '' || target.password !== '') {
    return { kind: 'permanent', reason: 'invalid_url', detail: CREDENTIALS_IN_URL };
  }
  // An IP literal is connected to without a lookup, so it is checked here.
  const literal = target.hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal) !== 0 && !guard.admits(literal)) {
    return { kind: 'permanent', reason: 'ssrf_refused', detail: `${literal} is internal` };
  }
  return { origin: target.origin, path: `${target.pathname}${target.search}` };
}
