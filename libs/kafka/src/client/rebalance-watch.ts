import type { Consumer } from 'kafkajs';

import { KafkaConnection } from '../internals/kafka.connection';
import { KafkaTransport } from './kafka.transport';

/**
 * Tells a handler's owner that the transport's consumer group rebalanced, with the partitions
 * of one topic now assigned to this member, so state kept per partition can be dropped or
 * checked again (the partition may have been another member's meanwhile). Armed from a
 * handler, where the transport surely has a consumer: the joins before the first record need
 * no telling, since no partition has state yet. A consumer the transport made anew counts as a
 * rebalance whose assignment is not known (undefined).
 */
export class RebalanceWatch {
  private consumer?: Consumer;
  private readonly topic: string;

  /**
   * @param topic the logical topic whose partitions are reported
   * @param rebalanced called after each join with the partitions of `topic` assigned
   */
  constructor(
    private readonly transport: KafkaTransport,
    connection: KafkaConnection,
    topic: string,
    private readonly rebalanced: (assigned: ReadonlySet<number> | undefined) => void,
  ) {
    this.topic = connection.topic(topic);
  }

  /** Listens to the current consumer's group joins, once per consumer; cheap on every record. */
  arm(): void {
    let consumer: Consumer;
    try {
      consumer = this.transport.unwrap<Consumer>();
    } catch {
      // Closing: the records still draining belong to the assignment already known.
      return;
    }
    if (consumer === this.consumer) return;
    const first = this.consumer === undefined;
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) =>
      this.rebalanced(new Set(payload.memberAssignment[this.topic] ?? [])),
    );
    if (!first) this.rebalanced(undefined);
  }
}
