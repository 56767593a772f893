// The face of libs/kafka: what the apps, the tests and the benchmarks use, by name. Three
// layers stand behind it (docs/architecture.md, "libs/kafka"): semantics/ (consumer rules, no
// kafkajs, no Nest), client/ (kafkajs's public API, Nest), internals/ (kafkajs's own modules).

// Records, and what a handler may answer.
export { copyHeaders, HeaderNames, headerText, headerTexts } from './semantics/records';
export type { IncomingRecord, OutgoingRecord } from './semantics/records';
export { DurableLater } from './semantics/partition-pipeline';
export { LaneHold } from './semantics/lane-hold';
export type { HoldStopReason } from './semantics/lane-hold';
export { Semaphore } from './semantics/semaphore';
export { ConsumerHealth } from './semantics/consumer-health';

// Connecting, producing, consuming.
export { KafkaConnection } from './internals/kafka.connection';
export { KafkaSecurityError } from './internals/kafka-security';
export { MemoryCluster } from './internals/memory-cluster';
export { KafkaModule } from './client/kafka.module';
export { BatchProducer } from './client/batch.producer';
export type { BatchProducerOptions } from './client/batch.producer';
export { KafkaTransport } from './client/kafka.transport';
export type { AssignmentListener } from './client/kafka.transport';
export type { KafkaTransportOptions } from './client/kafka-transport.options';
export { connectConsumers, defineKafkaTopology, lagGroups } from './client/kafka-topology';
export type { KafkaTopology } from './client/kafka-topology';
export { RebalanceWatch } from './client/rebalance-watch';
export { incomingRecord } from './client/incoming-record';
export { topicSpecs } from './client/topic-specs';
export { TopicAdmin } from './client/topic.admin';

// Reading topics back outside the consumer groups.
export { RangeReader } from './client/range-reader';
export type { PartitionRange } from './client/range-reader';
export { PartitionWants, RecordReader } from './client/record-reader';
export type { RecordPosition } from './client/record-reader';

// Consumer lag, as a metric and on demand.
export { ConsumerLagModule, ConsumerLagReader } from './client/consumer-lag';
export type { TopicLag } from './client/consumer-lag';
