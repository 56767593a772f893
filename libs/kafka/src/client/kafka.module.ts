import {
  DynamicModule,
  Inject,
  Injectable,
  Module,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';

import { KafkaConnection } from '../internals/kafka.connection';
import { KafkaConnectionOptions } from '../internals/kafka.options';
import { ConsumerHealth } from '../semantics/consumer-health';
import { BatchProducer, BatchProducerOptions } from './batch.producer';
import { KafkaRequestsMetric } from './kafka-requests.metric';
import { TopicSpec } from './topic-specs';
import { TopicAdmin } from './topic.admin';

/** Options of {@link KafkaModule.forRoot}. */
export interface KafkaModuleOptions {
  readonly connection: KafkaConnectionOptions;
  /** Topics this app needs; created at start-up when missing. */
  readonly topics: readonly TopicSpec[];
  readonly producer?: Partial<BatchProducerOptions>;
}

const KAFKA_MODULE_OPTIONS = Symbol('KAFKA_MODULE_OPTIONS');

/** Connects the producer and admin at start-up (creating topics) and disconnects at shutdown. */
@Injectable()
class KafkaLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(KAFKA_MODULE_OPTIONS) private readonly options: KafkaModuleOptions,
    private readonly admin: TopicAdmin,
    private readonly producer: BatchProducer,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.admin.connect();
    await this.admin.ensureTopics(this.options.topics);
    await this.producer.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.producer.disconnect();
    await this.admin.disconnect();
  }
}

/**
 * Provides {@link KafkaConnection}, {@link BatchProducer}, {@link TopicAdmin} and
 * {@link ConsumerHealth} to an app (global, so feature modules and health checks can inject
 * them). Consumers are not here: they are the {@link KafkaTransport} microservice, which
 * reports its state to the app's `ConsumerHealth`.
 */
@Module({})
export class KafkaModule {
  static forRoot(options: KafkaModuleOptions): DynamicModule {
    return {
      module: KafkaModule,
      global: true,
      providers: [
        { provide: KAFKA_MODULE_OPTIONS, useValue: options },
        { provide: KafkaConnection, useValue: new KafkaConnection(options.connection) },
        {
          provide: BatchProducer,
          useFactory: (connection: KafkaConnection) =>
            new BatchProducer(connection, options.producer),
          inject: [KafkaConnection],
        },
        {
          provide: TopicAdmin,
          useFactory: (connection: KafkaConnection) => new TopicAdmin(connection),
          inject: [KafkaConnection],
        },
        { provide: ConsumerHealth, useValue: new ConsumerHealth() },
        KafkaRequestsMetric,
        KafkaLifecycle,
      ],
      exports: [KafkaConnection, BatchProducer, TopicAdmin, ConsumerHealth],
    };
  }
}
