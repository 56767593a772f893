import { Inject, Injectable, Logger } from '@nestjs/common';

import { BatchProducer, IncomingRecord, OutgoingRecord } from '@app/kafka';
import { SettingsCache } from '@app/settings';
import { Span, spanTraceHeaders, tracerOf } from '@app/tracing';

import {
  CallFacts,
  decodeCallRecord,
  deliveryRecord,
  InvalidCallReason,
  rejectedRecord,
  RoutedCall,
} from './call-record';
import { DedupService } from './dedup.service';
import { decideRoute, FilterReason, RoutingSettings } from './route-decision';
import { RouterMetrics } from './router.metrics';
import { tracedRoute } from './routing.tracing';

/** What became of one call record. */
export type RouteOutcome =
  | { readonly kind: 'delivered'; readonly destinationIds: readonly string[] }
  | { readonly kind: 'filtered'; readonly reason: FilterReason }
  /** Its (source, user, messageId) was seen within the de-duplication window. */
  | { readonly kind: 'duplicate' }
  | { readonly kind: 'rejected'; readonly reason: InvalidCallReason };

/** The part of the producer routing uses. */
export type DeliveryProducer = Pick<BatchProducer, 'send'>;

/**
 * Routes calls: reads each record's routing facts from its key and headers, decides from the
 * cached settings, and produces one delivery per destination that takes the call (the call's
 * bytes unchanged, in one send) or, for a record
 * that cannot be routed, a rejected record. Resolves only once Kafka acknowledged what it
 * produced, so the transport commits the call's offset after that; concurrent calls share
 * produce requests (the producer's group commit).
 */
@Injectable()
export class RoutingService {
  private readonly logger = new Logger(RoutingService.name);
  private readonly tracer = tracerOf('router');

  constructor(
    @Inject(SettingsCache) private readonly settings: RoutingSettings,
    @Inject(BatchProducer) private readonly producer: DeliveryProducer,
    private readonly metrics: RouterMetrics,
    @Inject(DedupService) private readonly dedup: Pick<DedupService, 'check'>,
  ) {}

  /**
   * Routes one record of `sluice.calls.v1`.
   * @throws when Kafka did not acknowledge (an infrastructure fault: the offset stays
   *   uncommitted and the transport retries the record)
   */
  route(record: IncomingRecord): Promise<RouteOutcome> {
    const tracer = this.tracer;
    return tracer
      ? tracedRoute(tracer, record, (span) => this.routeRecord(record, span))
      : this.routeRecord(record);
  }

  /** Routes a record; `span` (traces on) is the trace its deliveries carry on. */
  private async routeRecord(record: IncomingRecord, span?: Span): Promise<RouteOutcome> {
    const decoded = decodeCallRecord(record);
    if (decoded.kind === 'invalid') return this.reject(record, decoded.reason);
    const { call } = decoded;
    // Before deciding: a duplicate of a call that was filtered is not routed either.
    if ((await this.dedup.check(record)) === 'duplicate') {
      this.metrics.deduplicated.inc({ type: call.type });
      return { kind: 'duplicate' };
    }
    const decision = decideRoute(new RoutedCall(call), this.settings);
    for (const skip of decision.skipped) this.metrics.countSkipped(skip.destinationId, skip.reason);
    if (decision.kind === 'filtered') {
      this.metrics.countFiltered(decision.reason, call.type);
      return { kind: 'filtered', reason: decision.reason };
    }
    const { destinationIds } = decision;
    const trace = span && spanTraceHeaders(span);
    await this.produce(
      destinationIds.map((id) => deliveryRecord(call, id, trace)),
      call,
    );
    this.metrics.countRouted(call.type, destinationIds.length);
    return { kind: 'delivered', destinationIds };
  }

  private async reject(record: IncomingRecord, reason: InvalidCallReason): Promise<RouteOutcome> {
    this.logger.warn(`call record ${record.partition}@${record.offset} rejected: ${reason}`);
    await this.producer.send([rejectedRecord(record, reason)]);
    this.metrics.rejected.inc({ reason });
    return { kind: 'rejected', reason };
  }

  private async produce(records: readonly OutgoingRecord[], call: CallFacts): Promise<void> {
    const started = performance.now();
    try {
      await this.producer.send(records);
      this.metrics.observeProduce('ok', (performance.now() - started) / 1_000);
    } catch (error) {
      this.metrics.observeProduce('error', (performance.now() - started) / 1_000);
      this.logger.warn(
        `Kafka did not take the delivery of message ${call.messageId ?? '(none)'} of source ` +
          `${call.sourceId}: ${String(error)}`,
      );
      throw error;
    }
  }
}
