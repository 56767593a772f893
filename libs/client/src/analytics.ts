import { BatchSender } from './batch-sender';
import { takeBatch } from './batches';
import {
  AliasParams,
  buildCall,
  CallParams,
  CallType,
  GroupParams,
  IdentifyParams,
  PageParams,
  QueuedCall,
  ScreenParams,
  serializeCall,
  TrackParams,
} from './calls';
import { AnalyticsError } from './errors';
import { AnalyticsOptions, resolveOptions, Settings } from './options';
import { Timers } from './timers';

/** A request on its way, and the first call it carries. */
interface InFlight {
  readonly firstSeq: number;
  readonly done: Promise<void>;
}

/**
 * A client of the tracking API. Each method checks the call, queues it and returns its
 * `messageId` without waiting for the network; invalid calls, calls over the size limit and
 * calls beyond a full queue are refused with a thrown {@link AnalyticsError}. Queued calls are
 * sent in batches to `/v1/batch` once `flushAt` are queued or `flushAfterMs` after one was
 * queued; problems found while sending reach `onError`. Call `close()` before the program
 * ends: the library's timers never keep a process alive on their own.
 */
export class Analytics {
  private readonly settings: Settings;
  private readonly sender: BatchSender;
  private readonly timers = new Timers();
  private readonly queue: QueuedCall[] = [];
  private readonly inFlight = new Set<InFlight>();
  /** The `seq` of the last call queued. */
  private lastSeq = 0;
  /** Calls up to this `seq` are sent without waiting for a full batch. */
  private flushUpTo = 0;
  private flushTimer?: NodeJS.Timeout;
  private closing?: Promise<void>;

  constructor(options: AnalyticsOptions) {
    // The one read of the environment: `DEBUG=analytics` is how users of such libraries
    // turn their logging on, without a code change.
    this.settings = resolveOptions(options, process.env.DEBUG);
    this.sender = new BatchSender(
      this.settings,
      (ms) => this.timers.sleep(ms),
      (error) => this.report(error),
    );
  }

  /** Who the user is: `userId` or `anonymousId` is required. */
  identify(params: IdentifyParams): string {
    return this.enqueue('identify', params);
  }

  /** What the user did: `event` and `userId` or `anonymousId` are required. */
  track(params: TrackParams): string {
    return this.enqueue('track', params);
  }

  /** A web page the user viewed: `userId` or `anonymousId` is required. */
  page(params: PageParams): string {
    return this.enqueue('page', params);
  }

  /** An app screen the user viewed: `userId` or `anonymousId` is required. */
  screen(params: ScreenParams): string {
    return this.enqueue('screen', params);
  }

  /** A group the user belongs to: `groupId` and `userId` or `anonymousId` are required. */
  group(params: GroupParams): string {
    return this.enqueue('group', params);
  }

  /** `previousId` and `userId` are the same user: both are required. */
  alias(params: AliasParams): string {
    return this.enqueue('alias', params);
  }

  /** Calls queued and not yet handed to a request. */
  get queuedCalls(): number {
    return this.queue.length;
  }

  /**
   * Sends every call queued so far, and resolves when each was accepted or its failure was
   * reported to `onError`. It never rejects. While it waits, the process is kept alive.
   */
  async flush(): Promise<void> {
    const target = this.lastSeq;
    this.flushUpTo = Math.max(this.flushUpTo, target);
    const release = this.timers.hold();
    try {
      for (;;) {
        this.pump();
        // Calls leave the queue in order, so the requests carrying calls up to `target` are
        // those whose first call is at most `target`. When none is in flight, none is queued
        // either: `pump` starts a request for such a call whenever there is room.
        const pending = [...this.inFlight].filter((r) => r.firstSeq <= target);
        if (pending.length === 0) return;
        await Promise.all(pending.map((r) => r.done));
      }
    } finally {
      release();
    }
  }

  /**
   * Stops taking calls (later ones throw `closed`) and drains: every queued call is sent and
   * every request in flight finishes. Safe to call more than once; it never rejects.
   */
  close(): Promise<void> {
    this.closing ??= this.drain();
    return this.closing;
  }

  private async drain(): Promise<void> {
    this.debug(`closing with ${this.queue.length} call(s) queued`);
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    await this.flush();
    this.debug('closed');
  }

  private enqueue<T extends CallType>(type: T, params: CallParams[T]): string {
    if (this.closing) {
      throw new AnalyticsError('closed', `${type}: close() was called; no more calls are taken`);
    }
    const call = buildCall(type, params, this.settings.newMessageId);
    if (this.queue.length >= this.settings.maxQueuedCalls) {
      throw new AnalyticsError(
        'queue_full',
        `${type}: ${this.queue.length} calls are queued already (maxQueuedCalls); not queued`,
        { messageIds: [call.messageId as string] },
      );
    }
    const queued = serializeCall(call, this.lastSeq + 1);
    this.lastSeq = queued.seq;
    this.queue.push(queued);
    if (this.settings.debug) {
      this.debug(
        `queued ${type} ${queued.messageId}, ${queued.bytes} bytes, ${this.queue.length} queued`,
      );
    }
    this.flushTimer ??= this.timers.after(this.settings.flushAfterMs, () => this.onFlushTimer());
    this.pump();
    return queued.messageId;
  }

  private onFlushTimer(): void {
    this.flushTimer = undefined;
    this.flushUpTo = Math.max(this.flushUpTo, this.lastSeq);
    this.pump();
  }

  /** Starts requests while there is room: full batches, and any batch a flush asked for. */
  private pump(): void {
    const { flushAt, maxInFlightRequests } = this.settings;
    while (this.inFlight.size < maxInFlightRequests && this.queue.length > 0) {
      if (this.queue.length < flushAt && this.queue[0].seq > this.flushUpTo) break;
      this.start(takeBatch(this.queue, flushAt));
    }
    if (this.queue.length === 0 && this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
  }

  private start(batch: QueuedCall[]): void {
    const request: InFlight = {
      firstSeq: batch[0].seq,
      done: this.sender.send(batch).finally(() => {
        this.inFlight.delete(request);
        this.pump();
      }),
    };
    this.inFlight.add(request);
  }

  /** Hands an error to `onError`; an error thrown there surfaces as uncaught, not lost. */
  private report(error: AnalyticsError): void {
    try {
      this.settings.onError(error);
    } catch (thrown) {
      process.nextTick(() => {
        throw thrown;
      });
    }
  }

  private debug(line: string): void {
    if (this.settings.debug) this.settings.log(`analytics: ${line}`);
  }
}
