import type { ConsumerConfig } from 'kafkajs';

import { KafkaConnection } from '../internals/kafka.connection';
import { ConsumerHealth } from '../semantics/consumer-health';

/** Options of the {@link KafkaTransport}. */
export interface KafkaTransportOptions {
  readonly connection: KafkaConnection;
  /** Consumer group; every replica of an app shares one. */
  readonly groupId: string;
  /**
   * The logical topics this transport consumes, each needing a registered handler; by
   * default the pattern of every registered handler. Lets one app run several consumer
   * groups (Nest registers every handler with every transport).
   */
  readonly topics?: readonly string[];
  /** Partitions handled at the same time by this process. */
  readonly partitionsConcurrently: number;
  /** Handler calls in flight per partition (records with one key stay in order). */
  readonly maxInFlightPerPartition: number;
  /** Pause of a partition after a handler threw, before its record is tried again. */
  readonly failureBackoffMs: number;
  /** Header holding a record's due time (epoch ms as text); absent means due at once. */
  readonly dueAtHeader?: string;
  /** Start from the earliest offset when the group has none (default true). */
  readonly fromBeginning?: boolean;
  /**
   * How long the group waits for a member that stopped heartbeating before it hands its
   * partitions to others (default 8 s): what a killed member costs the group.
   */
  readonly sessionTimeoutMs?: number;
  /** How often a member heartbeats (default 1 s); at most a third of the session timeout. */
  readonly heartbeatIntervalMs?: number;
  /** How long a rebalance waits for the members to join again (default 30 s). */
  readonly rebalanceTimeoutMs?: number;
  /**
   * Longest a close waits for the records in flight to finish (default 10 s) before it commits
   * what finished and leaves the group anyway; keep it under the app's shutdown timeout.
   */
  readonly closeTimeoutMs?: number;
  /** Where this consumer reports its state, for readiness. */
  readonly health?: ConsumerHealth;
  /**
   * Longest a fetch waits on the broker for new records (default 2,000): an idle consumer
   * sends a fetch and a heartbeat this often, and an idle member learns of a rebalance up to
   * this late. A partition resumed while a fetch waits is fetched once that fetch returns, so
   * while a partition is held, stopped after a failure or due to resume within this time, the
   * fetches wait at most {@link PROMPT_MAX_WAIT_MS}; a partition waiting for a due record is
   * resumed this long before it is due and its records wait in memory, so they stay on time.
   */
  readonly maxWaitTimeMs?: number;
  /**
   * Most bytes one fetch brings of a partition (default kafkajs's 1 MiB; a larger first
   * record batch still comes whole). Fetched records wait decoded until a slot takes them, and
   * the consumer fetches again only once they were all admitted, so a fetch much larger than
   * the partition's slots hold keeps thousands of records alive for nothing.
   */
  readonly maxBytesPerPartition?: number;
  /**
   * After a fetch that brought a partition's last records (nothing more to read), the next
   * fetch waits until this long after it (default 0: at once), so records that arrive
   * meanwhile come in one fetch. For consumers nobody waits on by the millisecond, at a
   * moderate rate: every fetch, commit and handler batch costs the same whether it carries one
   * record or a hundred. A consumer with a backlog fetches without waiting, and a first record
   * after a quiet spell comes at once (the fetch waits on the broker for it).
   */
  readonly fetchLingerMs?: number;
  readonly now?: () => number;
}

/** Consumer defaults ({@link KafkaTransportOptions}); docs/operations.md explains the choice. */
const DEFAULT_SESSION_TIMEOUT_MS = 8_000;
const DEFAULT_HEARTBEAT_INTERVAL_MS = 1_000;
const DEFAULT_REBALANCE_TIMEOUT_MS = 30_000;
const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_WAIT_TIME_MS = 2_000;

/** Longest a fetch waits on the broker while a partition is about to flow again. */
export const PROMPT_MAX_WAIT_MS = 500;

/**
 * The kafkajs consumer a transport's options describe, defaults filled in.
 * @param restart asked by kafkajs before it restarts a crashed consumer on its timer
 */
export function consumerConfig(
  options: KafkaTransportOptions,
  restart: () => boolean,
): ConsumerConfig {
  return {
    groupId: options.groupId,
    sessionTimeout: options.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS,
    heartbeatInterval: options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS,
    rebalanceTimeout: options.rebalanceTimeoutMs ?? DEFAULT_REBALANCE_TIMEOUT_MS,
    maxWaitTimeInMs: maxWaitTimeMs(options),
    maxBytesPerPartition: options.maxBytesPerPartition,
    allowAutoTopicCreation: false,
    retry: { restartOnFailure: () => Promise.resolve(restart()) },
  };
}

/** Longest a fetch of the transport's consumer waits on the broker. */
export function maxWaitTimeMs(options: Pick<KafkaTransportOptions, 'maxWaitTimeMs'>): number {
  return options.maxWaitTimeMs ?? DEFAULT_MAX_WAIT_TIME_MS;
}

/** Longest a transport's close waits for its records in flight. */
export function closeTimeoutMs(options: KafkaTransportOptions): number {
  return options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
}
