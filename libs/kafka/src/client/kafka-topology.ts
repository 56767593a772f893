import { INestApplication } from '@nestjs/common';

import { BatchProducerOptions } from './batch.producer';
import { ConsumerGroupTopics } from './consumer-lag';
import { KafkaTransportOptions } from './kafka-transport.options';
import { KafkaTransport } from './kafka.transport';

/** How one consumer group works through its partitions ({@link KafkaTransportOptions}). */
export type ConsumerTuning = Pick<
  KafkaTransportOptions,
  | 'partitionsConcurrently'
  | 'maxInFlightPerPartition'
  | 'failureBackoffMs'
  | 'dueAtHeader'
  | 'fetchLingerMs'
  | 'maxBytesPerPartition'
>;

/** What gives a consumer group's transport its handlers: one of the app's consumer classes. */
export interface RecordConsumer {
  /** Registers a handler on `transport` for each of `topics` (logical names). */
  register(transport: KafkaTransport, topics: readonly string[]): void;
}

/** One consumer group of an app, as the app declares it. */
export interface ConsumerDeclaration {
  /** The group's name without the deployment prefix, e.g. `sluice-router`. */
  readonly group: string;
  /** The logical topics the group reads. */
  readonly topics: readonly string[];
  /** The consumer class (a provider of the app's module) whose `register` adds the handlers. */
  readonly handler: abstract new (...args: never[]) => RecordConsumer;
  readonly tuning: ConsumerTuning;
  /** Whether `sluice_consumer_lag_records` reports the group (what autoscalers read). */
  readonly reportLag: boolean;
}

/** A declared consumer group, its id carrying the deployment prefix. */
export interface DeclaredConsumer extends ConsumerDeclaration {
  /** The group id as the consumer uses it: the deployment prefix, then `group`. */
  readonly groupId: string;
}

/** What an app declares of its Kafka use, once: see {@link defineKafkaTopology}. */
export interface KafkaTopologyDeclaration<Name extends string> {
  /** The deployment prefix of topic and group names (`KAFKA_TOPIC_PREFIX`). */
  readonly prefix: string;
  /** The app's consumer groups by a name of the app's choosing. */
  readonly consumers: Readonly<Record<Name, ConsumerDeclaration>>;
  /** Logical topics the app creates beyond the fixed ones (the retry tiers). */
  readonly extraTopics?: readonly string[];
  /** The tuning of the app's `BatchProducer`. */
  readonly producer?: Partial<BatchProducerOptions>;
}

/** An app's Kafka topology, read by its `main.ts`, its module and the test harnesses. */
export interface KafkaTopology<Name extends string> {
  readonly consumers: Readonly<Record<Name, DeclaredConsumer>>;
  readonly extraTopics: readonly string[];
  readonly producer: Partial<BatchProducerOptions>;
}

/** A topology that cannot run: two groups with one id, a group without topics, bad tuning. */
export class KafkaTopologyError extends Error {
  readonly code = 'KAFKA_TOPOLOGY_INVALID';

  constructor(message: string) {
    super(message);
    this.name = KafkaTopologyError.name;
  }
}

/**
 * Checks an app's declaration and resolves its group ids.
 * @throws {KafkaTopologyError} naming the consumer and the rule it breaks
 */
export function defineKafkaTopology<Name extends string>(
  declaration: KafkaTopologyDeclaration<Name>,
): KafkaTopology<Name> {
  const consumers = {} as Record<Name, DeclaredConsumer>;
  const groupIds = new Set<string>();
  for (const name of Object.keys(declaration.consumers) as Name[]) {
    const consumer = declaration.consumers[name];
    const problem = consumerProblem(consumer);
    if (problem !== undefined) throw new KafkaTopologyError(`consumer ${name}: ${problem}`);
    const groupId = `${declaration.prefix}${consumer.group}`;
    if (groupIds.has(groupId)) {
      throw new KafkaTopologyError(`consumer ${name}: group ${consumer.group} is declared twice`);
    }
    groupIds.add(groupId);
    consumers[name] = { ...consumer, groupId };
  }
  return {
    consumers,
    extraTopics: declaration.extraTopics ?? [],
    producer: declaration.producer ?? {},
  };
}

/** What is wrong with one consumer's declaration, or undefined. */
export function consumerProblem(consumer: ConsumerDeclaration): string | undefined {
  const { topics, tuning } = consumer;
  if (consumer.group === '') return 'its group has no name';
  if (topics.length === 0) return 'it reads no topic';
  if (new Set(topics).size !== topics.length) return 'it names a topic twice';
  if (!(Number.isInteger(tuning.partitionsConcurrently) && tuning.partitionsConcurrently >= 1)) {
    return 'partitionsConcurrently must be a whole number of at least 1';
  }
  if (!(Number.isInteger(tuning.maxInFlightPerPartition) && tuning.maxInFlightPerPartition >= 1)) {
    return 'maxInFlightPerPartition must be a whole number of at least 1';
  }
  if (!(tuning.failureBackoffMs >= 0)) return 'failureBackoffMs must be 0 or more';
  return undefined;
}

/** The groups whose lag the app reports, for `ConsumerLagModule.forRoot({ groups })`. */
export function lagGroups<Name extends string>(
  topology: KafkaTopology<Name>,
): ConsumerGroupTopics[] {
  return declaredConsumers(topology)
    .filter((consumer) => consumer.reportLag)
    .map(({ groupId, topics }) => ({ groupId, topics }));
}

/** The options of a declared group's transport, beside the ones every transport shares. */
export function transportOptions(
  consumer: DeclaredConsumer,
  shared: Omit<KafkaTransportOptions, keyof ConsumerTuning | 'groupId' | 'topics'>,
): KafkaTransportOptions {
  return { ...shared, ...consumer.tuning, groupId: consumer.groupId, topics: consumer.topics };
}

/**
 * Makes a transport per declared group, has the group's consumer class register its handlers
 * on it, and connects it to `app` as a microservice (it starts and stops with the app).
 * @returns the transports, by the names of the declaration
 */
export function connectConsumers<Name extends string>(
  app: INestApplication,
  topology: KafkaTopology<Name>,
  shared: Omit<KafkaTransportOptions, keyof ConsumerTuning | 'groupId' | 'topics'>,
): Record<Name, KafkaTransport> {
  const transports = {} as Record<Name, KafkaTransport>;
  for (const name of Object.keys(topology.consumers) as Name[]) {
    const consumer = topology.consumers[name];
    const transport = new KafkaTransport(transportOptions(consumer, shared));
    app.get<RecordConsumer>(consumer.handler).register(transport, consumer.topics);
    app.connectMicroservice({ strategy: transport });
    transports[name] = transport;
  }
  return transports;
}

/** The declared groups in declaration order. */
function declaredConsumers<Name extends string>(topology: KafkaTopology<Name>): DeclaredConsumer[] {
  return Object.values<DeclaredConsumer>(topology.consumers);
}
