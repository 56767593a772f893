import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

import { TOPIC } from '@app/contracts';
import { defineKafkaTopology, KafkaTopology } from '@app/kafka';

import { AdminConfig } from './config';
import { OutcomesConsumer } from './deletions/outcomes.consumer';
import { BreakerChangesConsumer } from './destinations/breaker-changes.consumer';
import { LedgerConsumer } from './ledger/ledger.consumer';

/** Partitions of the outcomes topic handled at once, and outcomes in flight per partition. */
const OUTCOME_PARTITIONS_CONCURRENTLY = 2;
const OUTCOMES_IN_FLIGHT = 16;
/**
 * The ledger writer's partitions at once and records in flight per partition: its writes
 * gather every record in flight, so many in flight make few, large statements.
 */
const LEDGER_PARTITIONS_CONCURRENTLY = 4;
const LEDGER_IN_FLIGHT = 1_024;
/**
 * How long both consumers of outcomes let them gather between fetches when they come a few at
 * a time: nobody waits on a receipt or a ledger row by the millisecond, and each fetch, commit
 * and ledger statement costs about the same for one outcome as for a hundred.
 */
const OUTCOMES_FETCH_LINGER_MS = 250;
/**
 * This process's own group for the dispatchers' breaker changes: every admin replica must read
 * them all. A group left by a stopped replica expires with Kafka's offsets retention.
 */
const BREAKER_GROUP = `sluice-admin-breakers-${hostname()}-${randomBytes(3).toString('hex')}`;

/** Pause of a partition after a receipt or a ledger row could not be stored, before a retry. */
const FAILURE_BACKOFF_MS = 1_000;

/**
 * The admin app's Kafka: two consumer groups on the dispatcher's outcomes, one keeping the
 * receipts of delete notifications, the other writing the delivery ledger (also from the
 * dead letters; its lag says how far the ledger is behind). `main.ts`, the module and the
 * test harnesses read it.
 */
export function adminKafka(config: AdminConfig): KafkaTopology<'receipts' | 'ledger' | 'breakers'> {
  return defineKafkaTopology({
    prefix: config.kafka.topicPrefix,
    consumers: {
      receipts: {
        group: 'sluice-admin',
        topics: [TOPIC.deliveryOutcomes],
        handler: OutcomesConsumer,
        tuning: {
          partitionsConcurrently: OUTCOME_PARTITIONS_CONCURRENTLY,
          maxInFlightPerPartition: OUTCOMES_IN_FLIGHT,
          failureBackoffMs: FAILURE_BACKOFF_MS,
          fetchLingerMs: OUTCOMES_FETCH_LINGER_MS,
        },
        reportLag: false,
      },
      ledger: {
        group: 'sluice-ledger',
        topics: [TOPIC.deliveryOutcomes, TOPIC.deliveriesDead],
        handler: LedgerConsumer,
        tuning: {
          partitionsConcurrently: LEDGER_PARTITIONS_CONCURRENTLY,
          maxInFlightPerPartition: LEDGER_IN_FLIGHT,
          failureBackoffMs: FAILURE_BACKOFF_MS,
          fetchLingerMs: OUTCOMES_FETCH_LINGER_MS,
        },
        reportLag: true,
      },
      breakers: {
        group: BREAKER_GROUP,
        topics: [TOPIC.breakerChanges],
        handler: BreakerChangesConsumer,
        tuning: {
          partitionsConcurrently: OUTCOME_PARTITIONS_CONCURRENTLY,
          maxInFlightPerPartition: OUTCOMES_IN_FLIGHT,
          failureBackoffMs: FAILURE_BACKOFF_MS,
        },
        reportLag: false,
      },
    },
    producer: { sendTimeoutMs: config.admin.produceTimeoutMs },
  });
}
