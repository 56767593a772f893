import { QueuedCall } from './calls';
import { batchBody } from './batches';
import { AnalyticsError } from './errors';
import { LIBRARY } from './library';
import { Settings } from './options';
import { AttemptOutcome, backoffMs, classifyResponse } from './retry-policy';

/** Sends one batch: attempts, waits between them, reports what failed. */
export class BatchSender {
  private readonly headers: Readonly<Record<string, string>>;

  constructor(
    private readonly settings: Settings,
    private readonly sleep: (ms: number) => Promise<void>,
    private readonly report: (error: AnalyticsError) => void,
  ) {
    this.headers = {
      authorization: settings.authorization,
      'content-type': 'application/json',
      'user-agent': `${LIBRARY.name}/${LIBRARY.version}`,
    };
  }

  /** Sends `batch` until it is accepted, refused or out of retries. Never rejects. */
  async send(batch: readonly QueuedCall[]): Promise<void> {
    const { settings } = this;
    const messageIds = batch.map((call) => call.messageId);
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(batch, attempt);
      if (outcome.kind === 'ok') return this.reportRejected(batch, outcome.body);
      if (outcome.kind === 'dead') {
        const { status, serverCode } = outcome;
        return this.report(
          new AnalyticsError('request_refused', `${batch.length} call(s) lost: ${outcome.reason}`, {
            messageIds,
            status,
            serverCode,
          }),
        );
      }
      const failed = (why: string) =>
        this.report(
          new AnalyticsError('send_failed', `${batch.length} call(s) lost: ${why}`, {
            messageIds,
            status: outcome.status,
          }),
        );
      if (attempt > settings.maxRetries) {
        return failed(`${outcome.reason} (attempt ${attempt}, no retries left)`);
      }
      const asked = outcome.retryAfterMs ?? 0;
      if (asked > settings.maxRetryAfterMs) {
        return failed(`${outcome.reason}, asking to retry after ${asked} ms, over maxRetryAfterMs`);
      }
      const delayMs = Math.max(
        asked,
        backoffMs(attempt, settings.retryMinDelayMs, settings.retryMaxDelayMs, settings.random),
      );
      this.debug(`retrying ${batch.length} call(s) in ${delayMs} ms: ${outcome.reason}`);
      await this.sleep(delayMs);
    }
  }

  private async attempt(batch: readonly QueuedCall[], attempt: number): Promise<AttemptOutcome> {
    const { settings } = this;
    const body = batchBody(batch, new Date(settings.now()).toISOString());
    this.debug(
      `sending ${batch.length} call(s), ${Buffer.byteLength(body)} bytes, attempt ${attempt}: ` +
        `${batch[0].messageId}..${batch[batch.length - 1].messageId}`,
    );
    try {
      const response = await settings.transport({
        url: settings.url,
        headers: this.headers,
        body,
        timeoutMs: settings.timeoutMs,
      });
      this.debug(`sent ${batch.length} call(s): status ${response.status}`);
      return classifyResponse(response, settings.now());
    } catch (error) {
      const reason = `network error: ${describe(error)}`;
      this.debug(`sending ${batch.length} call(s) failed: ${reason}`);
      return { kind: 'retry', reason };
    }
  }

  /** Reports each call a 2xx answer lists in `rejected: [{ index, code, message }]`. */
  private reportRejected(batch: readonly QueuedCall[], body: string): void {
    let rejected: unknown;
    try {
      rejected = (JSON.parse(body) as { rejected?: unknown } | null)?.rejected;
    } catch {
      return; // any 2xx answer means accepted; only the tracking API's JSON lists rejections
    }
    if (!Array.isArray(rejected)) return;
    for (const item of rejected as unknown[]) {
      const { index, code, message } = (item ?? {}) as Record<string, unknown>;
      const call = typeof index === 'number' ? batch[index] : undefined;
      const serverCode = typeof code === 'string' ? code : undefined;
      const why = typeof message === 'string' ? message : 'no reason given';
      this.report(
        new AnalyticsError(
          'call_rejected',
          `the server rejected ${call ? `${call.type} ${call.messageId}` : `call ${String(index)}`}` +
            ` (${serverCode ?? 'unknown code'}): ${why}`,
          { messageIds: call ? [call.messageId] : [], serverCode },
        ),
      );
    }
  }

  private debug(line: string): void {
    if (this.settings.debug) this.settings.log(`analytics: ${line}`);
  }
}

/** A network error's message with its cause (fetch hides the useful part there). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
