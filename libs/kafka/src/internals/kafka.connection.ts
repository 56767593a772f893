import { Logger } from '@nestjs/common';
import {
  Admin,
  Consumer,
  ConsumerConfig,
  Kafka,
  KafkaConfig,
  logCreator,
  logLevel,
  Producer,
} from 'kafkajs';

import { CounterTally } from '@app/observability';

import { explainKafkaError, kafkajsSecurity } from './kafka-security';
import { KafkaConnectionOptions } from './kafka.options';
import { installKafkajsReplacements } from './kafkajs-replacements';
import { MemoryCluster } from './memory-cluster';
import { keyHashPartitioner } from './partitioner';

/** kafkajs logs at INFO for routine events (joins, rebalances); they are debug here. */
const LEVELS: Record<number, 'error' | 'warn' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'debug',
  [logLevel.DEBUG]: 'debug',
};

/**
 * kafkajs warns whenever an idempotent producer has bounded retries. Bounded retries are
 * deliberate here (like the Java client's delivery timeout): a send fails rather than
 * blocking every later send forever; the caller sees the failure and nothing is lost.
 */
const EXPECTED_WARNING = 'Limiting retries for the idempotent producer';

/**
 * Group-coordinator answers while a broker loads its groups or moves a coordinator (a broker
 * start, a just-formatted one): kafkajs retries most requests after them, and a consumer that
 * meets one while joining crashes and restarts itself, since kafkajs counts them retriable.
 */
export const COORDINATOR_ANSWERS: ReadonlySet<string> = new Set([
  "The coordinator is loading and hence can't process requests for this group",
  'The group coordinator is not available',
  'This is not the correct coordinator for this group',
]);

/**
 * Broker answers that only mean "not ready yet, ask again" while topics, leaders and group
 * coordinators settle (a new topic, a broker start), or "join again" while a group rebalances.
 * kafkajs logs every error answer at ERROR and then retries it (or rejoins); these are debug
 * here. If the retries run out, the caller gets the error and reports it.
 */
export const TRANSIENT_ANSWERS: ReadonlySet<string> = new Set([
  'This server does not host this topic-partition',
  'This server is not the leader for that topic-partition',
  'There is no leader for this topic-partition as we are in the middle of a leadership election',
  ...COORDINATOR_ANSWERS,
  'The group is rebalancing, so a rejoin is needed',
]);

/** kafkajs's consumer logs `Crash: <error name>: <message>` at ERROR, then restarts if it can. */
const CONSUMER_CRASH = /^Crash: \w+: (.*)$/s;
/** The restart kafkajs schedules after a crash, also at ERROR; the crash's line gives the cause. */
const CONSUMER_RESTART = 'Restarting the consumer in ';

/** The Nest log level of a kafkajs log entry. */
export function nestLevel(
  namespace: string,
  level: logLevel,
  message: string,
  error?: unknown,
): 'error' | 'warn' | 'debug' {
  if (message.startsWith(EXPECTED_WARNING)) return 'debug';
  if (namespace === 'Connection' && message.startsWith('Response ')) {
    if (typeof error === 'string' && TRANSIENT_ANSWERS.has(error)) return 'debug';
  }
  if (namespace === 'Consumer') {
    // A crash on a coordinator answer is expected at a broker's start, and retried by the
    // restart; a warning still shows a consumer that keeps crashing on it.
    const crash = CONSUMER_CRASH.exec(message);
    if (crash !== null && COORDINATOR_ANSWERS.has(crash[1])) return 'warn';
    if (message.startsWith(CONSUMER_RESTART)) return 'warn';
  }
  return LEVELS[level] ?? 'debug';
}

const logToNest: logCreator = () => {
  const logger = new Logger('Kafka');
  return ({ namespace, level, log }) => {
    const { message, error } = log;
    const text = `${namespace}: ${message}${error ? ` (${String(error)})` : ''}`;
    logger[nestLevel(namespace, level, message, error)](text);
  };
};

/** kafkajs's settings for the options (TLS and SASL files are read here). */
function kafkaSettings(options: KafkaConnectionOptions): KafkaConfig {
  return {
    clientId: options.clientId,
    brokers: [...options.brokers],
    ...kafkajsSecurity(options),
    logLevel: logLevel.WARN,
    logCreator: logToNest,
    connectionTimeout: 3_000,
    // Waits between retries stay under a second, so a broker that comes back is found
    // within one (a consumer restarting after a crash waits the last of them too).
    retry: { initialRetryTime: 100, retries: 8, maxRetryTime: 1_000 },
  };
}

/**
 * One connection setting for an app: makes the kafkajs clients the rest of this lib uses,
 * and maps logical topic names to the deployment's real ones.
 */
export class KafkaConnection {
  /** kafkajs, or the in-memory cluster `memory://<name>:0` names (specs without a broker). */
  private readonly kafka: Pick<Kafka, 'producer' | 'consumer' | 'admin'>;
  /**
   * Requests sent to the brokers by every client made here, by API name (`Fetch`, `Produce`):
   * `sluice_kafka_requests_total{api}` ({@link KafkaRequestsMetric}).
   */
  readonly requests = new CounterTally<'api'>();

  /**
   * The one place a kafkajs client is made, so every producer, consumer and admin client of
   * every app has the same TLS and SASL settings.
   * @throws {KafkajsVersionError} when kafkajs is not the version its replacements fit
   * @throws {KafkaSecurityError} when a TLS or SASL file cannot be read
   */
  constructor(readonly options: KafkaConnectionOptions) {
    installKafkajsReplacements();
    const memory = MemoryCluster.selectedBy(options.brokers);
    this.kafka = memory ? memory.asKafka() : new Kafka(kafkaSettings(options));
  }

  /**
   * Connects once, without retries, and disconnects: start-up's first contact, so a TLS or
   * SASL failure is known after one attempt rather than after every client's retries (each
   * logged by kafkajs). kafkajs retries a connection with the client's own settings, whatever
   * an admin client's `retry` says, hence a client of its own.
   */
  async connectOnce(): Promise<void> {
    if (MemoryCluster.selectedBy(this.options.brokers)) return;
    const admin = new Kafka({ ...kafkaSettings(this.options), retry: { retries: 0 } }).admin();
    try {
      await admin.connect();
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * A failure caused by TLS or SASL as a clear {@link KafkaSecurityError} naming the variables
   * to check (never a secret); any other error as it is.
   */
  explain(error: unknown): unknown {
    return explainKafkaError(error, this.options);
  }

  /** The topic name on the cluster for a logical name. */
  topic(name: string): string {
    return `${this.options.topicPrefix}${name}`;
  }

  /** The logical name for a topic name on the cluster, or undefined when not ours. */
  logicalTopic(name: string): string | undefined {
    const prefix = this.options.topicPrefix;
    return name.startsWith(prefix) ? name.slice(prefix.length) : undefined;
  }

  /**
   * An idempotent producer (acks from all in-sync replicas, one request in flight) with the
   * Java client's murmur2 partitioner, so a key lands where other Kafka clients put it.
   */
  producer(): Producer {
    return this.counted(
      this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        createPartitioner: keyHashPartitioner,
        // About 40 s of retries, longer than a caller waits (BatchProducer's sendTimeoutMs),
        // at most a second apart: a partition whose leader died is written as soon as the
        // cluster names its new leader, not after a back-off grown to seconds meanwhile.
        retry: { initialRetryTime: 100, retries: 40, maxRetryTime: 1_000 },
      }),
    );
  }

  /** An admin client; `retries` bounds how long a failing call keeps trying. */
  admin(retries = 5): Admin {
    return this.counted(
      this.kafka.admin({ retry: { initialRetryTime: 100, retries, maxRetryTime: 2_000 } }),
    );
  }

  /** A consumer (every consumer of the apps is made here, so its requests are counted). */
  consumer(config: ConsumerConfig): Consumer {
    return this.counted(this.kafka.consumer(config));
  }

  private counted<C extends Producer | Consumer | Admin>(client: C): C {
    (client as Producer).on((client as Producer).events.REQUEST, ({ payload }) => {
      const api = payload.apiName;
      this.requests.add(api, () => ({ api }));
    });
    return client;
  }
}
