import { Logger } from '@nestjs/common';

import { delayLabel } from '@app/contracts';
import { BatchProducer, DurableLater, IncomingRecord, LaneHold, OutgoingRecord } from '@app/kafka';
import { Span, spanTraceHeaders } from '@app/tracing';

import { BatchOutcomeJson, batchOutcomeJson, OutcomeCall } from './batch-outcome';
import { Decision } from './delivery-decision';
import {
  deadRecord,
  DeliveryFacts,
  describeDelivery,
  outcomeJson,
  outcomeRecord,
  retryRecord,
  TimedResult,
} from './delivery-record';
import { DispatcherMetrics } from './dispatcher.metrics';
import { OutcomeBatcher } from './outcome-batcher';

/** Where a delivery record was read from. */
export type DeliveryPath = 'main' | 'retry';

/** What became of one delivery record. */
export type DispatchResult = 'delivered' | 'retried' | 'dead' | 'discarded';

/**
 * What a delivery came to (for a batched call, once its batch was answered), and the wait for
 * its ledger outcome when one was gathered (for a batched call, for its batch).
 */
export interface Handled {
  readonly result: DispatchResult | (() => Promise<DispatchResult>);
  readonly ledger?: DurableLater;
  /** A call of an ordered destination retried in place: its lane waits until it settles. */
  readonly hold?: LaneHold;
}

/** One delivery's decision, with what it needs to act on it. */
export interface Decided {
  readonly record: IncomingRecord;
  readonly facts: DeliveryFacts;
  readonly decision: Decision;
  readonly path: DeliveryPath;
  /** The attempt's span, when traces are on. */
  readonly span?: Span;
}

/**
 * Acts on decisions, the one place that does: produces the retry or dead record (and a
 * delete's outcome) and waits for Kafka's acknowledgement, hands the ledger's outcome to the
 * batcher (its acknowledgement is the `ledger` wait), then counts and logs.
 */
export class DeliveryEffects {
  private readonly outcomes: OutcomeBatcher;

  constructor(
    private readonly producer: Pick<BatchProducer, 'send'>,
    private readonly metrics: DispatcherMetrics,
    private readonly logger: Logger,
    private readonly options: {
      /** Share of first-try successes whose outcome goes to the ledger (0 to 1). */
      readonly ledgerSuccessSample: number;
    },
    private readonly now: () => number,
    /** Uniform in [0, 1); drives the success sample. */
    private readonly random: () => number,
  ) {
    this.outcomes = new OutcomeBatcher(producer);
  }

  /**
   * Acts on one delivery's decision; `answers` are its webhooks' when POSTs were made, `span`
   * its attempt's when traces are on (a retry record carries it on).
   */
  async apply(
    record: IncomingRecord,
    facts: DeliveryFacts,
    decision: Decision,
    answers?: readonly TimedResult[],
    path: DeliveryPath = 'main',
    span?: Span,
  ): Promise<Handled> {
    const now = this.now();
    const records: OutgoingRecord[] = [];
    // The batcher's promise is handled already: the send below may throw before anyone waits.
    const ledger = this.effects(record, facts, decision, records, answers, now, span);
    if (records.length > 0) await this.producer.send(records);
    const result = this.count(facts, decision, record, path, now);
    this.metrics.delivery(result, facts.destinationId);
    return { result, ledger };
  }

  /**
   * Acts on the decisions of a batch's calls, with the batch's answers, in one send. Their
   * ledger outcomes go as batch outcomes (`batchOutcomeJson`), which all of them wait for;
   * a delete's is a record of its own, as ever.
   */
  async applyAll(
    calls: readonly Decided[],
    answers: readonly TimedResult[] | undefined,
    batchId: string | undefined,
  ): Promise<{ result: DispatchResult; ledger?: DurableLater }[]> {
    const now = this.now();
    const records: OutgoingRecord[] = [];
    const gathered: OutcomeCall[] = [];
    const published = calls.map((call) => {
      const { record, facts, decision } = call;
      this.produced(record, decision, records, call.span);
      if (!this.publishesOutcome(facts, decision)) return false;
      // A delete's outcome is a record of its own, which the deletion receipts read.
      if (facts.type === 'delete') {
        const json = outcomeJson(facts, decision, answers, now, batchId);
        records.push(outcomeRecord(record, facts, json));
        return false;
      }
      gathered.push(call);
      return true;
    });
    const ledger = this.gather(batchOutcomeJson(gathered, answers, now, batchId));
    if (records.length > 0) await this.producer.send(records);
    // One warning per batch and reason, not one per call.
    for (const line of batchWarnings(calls, batchId)) this.logger.warn(line);
    const results = calls.map((call) =>
      this.count(call.facts, call.decision, call.record, call.path, now, false),
    );
    // The calls share their destination: its tally is added to once per result.
    const tally = new Map<DispatchResult, number>();
    for (const result of results) tally.set(result, (tally.get(result) ?? 0) + 1);
    const destinationId = calls[0]?.facts.destinationId;
    for (const [result, n] of tally) this.metrics.delivery(result, destinationId, n);
    return results.map((result, i) => ({ result, ledger: published[i] ? ledger : undefined }));
  }

  /** Hands batch outcomes to the batcher; one wait for all of them. */
  private gather(entries: readonly BatchOutcomeJson[]): DurableLater | undefined {
    if (entries.length <= 1) {
      return entries.length === 0
        ? undefined
        : this.outcomes.add(entries[0].json, entries[0].count);
    }
    const waits = entries.map((entry) => this.outcomes.add(entry.json, entry.count).durable);
    return new DurableLater(Promise.all(waits).then(() => undefined));
  }

  /**
   * A call of an ordered destination that failed and is retried in place: no retry record, its
   * ledger outcome (`retrying`, due when its wait ends) and its count. A delete's outcome is
   * a record of its own, as for any decision.
   */
  retriedInPlace(
    record: IncomingRecord,
    facts: DeliveryFacts,
    decision: Decision,
    answers: readonly TimedResult[] | undefined,
  ): DurableLater | undefined {
    this.metrics.delivery('retried', facts.destinationId);
    const outcome = outcomeJson(facts, decision, answers, this.now());
    if (facts.type !== 'delete') return this.outcomes.add(outcome);
    return new DurableLater(this.producer.send([outcomeRecord(record, facts, outcome)]));
  }

  /**
   * Adds to `records` what a decision produces (the retry or dead record, a delete's outcome)
   * and hands the ledger's outcome to the batcher, answering its wait.
   */
  private effects(
    record: IncomingRecord,
    facts: DeliveryFacts,
    decision: Decision,
    records: OutgoingRecord[],
    answers: readonly TimedResult[] | undefined,
    now: number,
    span: Span | undefined,
  ): DurableLater | undefined {
    this.produced(record, decision, records, span);
    const outcome = this.publishesOutcome(facts, decision)
      ? outcomeJson(facts, decision, answers, now)
      : undefined;
    // A delete's outcome is a record of its own, which the deletion receipts read.
    if (outcome && facts.type === 'delete') records.push(outcomeRecord(record, facts, outcome));
    return outcome && facts.type !== 'delete' ? this.outcomes.add(outcome) : undefined;
  }

  /** Adds to `records` the retry or dead record a decision produces. */
  private produced(
    record: IncomingRecord,
    decision: Decision,
    records: OutgoingRecord[],
    span: Span | undefined,
  ): void {
    if (decision.kind === 'retry') {
      // The next attempt's span is the child of this one's.
      const trace = span && spanTraceHeaders(span);
      records.push(retryRecord(record, decision.retry, trace));
    }
    if (decision.kind === 'dead') records.push(deadRecord(record, decision.dead));
  }

  /**
   * Counts and logs what became of a delivery (a batch's calls are logged together), but for
   * its destination's tally, which the caller adds to.
   */
  private count(
    facts: DeliveryFacts,
    decision: Decision,
    record: IncomingRecord,
    path: DeliveryPath,
    now: number,
    log = true,
  ): DispatchResult {
    switch (decision.kind) {
      case 'delivered': {
        const since = path === 'main' ? record.timestamp : (facts.firstAttemptAt ?? now);
        this.metrics.delivered((now - since) / 1000);
        return 'delivered';
      }
      case 'retry':
        this.metrics.retries.inc({ tier: delayLabel(decision.retry.delaySeconds) });
        return 'retried';
      case 'dead':
        if (log) {
          this.logger.warn(
            `${describeDelivery(facts)}: dead after ${decision.dead.attempts} attempt(s): ` +
              decision.dead.reason,
          );
        }
        this.metrics.deadLetters.inc({ reason: decision.dead.reason });
        return 'dead';
      case 'discarded':
        if (log) this.logger.warn(`${describeDelivery(facts)}: discarded, ${decision.reason}`);
        this.metrics.discarded.inc({ reason: decision.reason });
        return 'discarded';
    }
  }

  /**
   * Every outcome goes to the ledger but a first-try success, which is sampled
   * (`ledgerSuccessSample`): a delivery that has been on a retry tier already has a row that
   * its success must close, and a delete's deletion request waits for its outcome.
   */
  private publishesOutcome(facts: DeliveryFacts, decision: Decision): boolean {
    if (decision.kind !== 'delivered' || facts.type === 'delete') return true;
    if (facts.firstAttemptAt !== undefined) return true;
    const sample = this.options.ledgerSuccessSample;
    return sample >= 1 || (sample > 0 && this.random() < sample);
  }
}

/**
 * The warnings of a batch's dead and discarded calls: one line per outcome and reason (and
 * attempt count), with how many calls it covers and the first call's message id; a large
 * batch failing for good logs a line, not a line per call.
 */
export function batchWarnings(
  calls: readonly Pick<Decided, 'facts' | 'decision'>[],
  batchId: string | undefined,
): string[] {
  const groups = new Map<string, { count: number; first: DeliveryFacts }>();
  for (const { facts, decision } of calls) {
    const what =
      decision.kind === 'dead'
        ? `dead after ${decision.dead.attempts} attempt(s): ${decision.dead.reason}`
        : decision.kind === 'discarded'
          ? `discarded, ${decision.reason}`
          : undefined;
    if (what === undefined) continue;
    const group = groups.get(what);
    if (group === undefined) groups.set(what, { count: 1, first: facts });
    else group.count += 1;
  }
  const batch = batchId === undefined ? 'batch' : `batch ${batchId}`;
  return [...groups].map(
    ([what, { count, first }]) =>
      `${count} call(s) of ${batch} to destination ${first.destinationId} ` +
      `(message ${first.messageId ?? '(none)'} first): ${what}`,
  );
}
