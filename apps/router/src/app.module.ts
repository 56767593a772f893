import { randomBytes } from 'node:crypto';

import { DynamicModule, Module } from '@nestjs/common';

import { TOPIC } from '@app/contracts';
import { ConsumerLagModule, KafkaConnection, lagGroups, RangeReader } from '@app/kafka';
import { RuntimeModule } from '@app/runtime';

import { RouterConfig } from './config';
import { routerKafka } from './kafka-topology';
import { CallsConsumer } from './routing/calls.consumer';
import {
  CALL_HISTORY,
  CallHistory,
  DEDUP_OPTIONS,
  DedupOptions,
  DedupService,
} from './routing/dedup.service';
import { RouterMetrics } from './routing/router.metrics';
import { RoutingService } from './routing/routing.service';

/** The calls topic read back through a {@link RangeReader}, to rebuild the de-duplication. */
function callHistory(connection: KafkaConnection): CallHistory {
  const reader = new RangeReader(connection);
  return {
    read: (sinceMs, ranges, onRecords) => reader.read(TOPIC.calls, sinceMs, ranges, onRecords),
  };
}

/** The router app: calls in, one delivery per (call, destination) out. */
@Module({})
export class AppModule {
  static forRoot(config: RouterConfig): DynamicModule {
    const seeds = randomBytes(8);
    const dedup: DedupOptions = {
      windowMs: config.router.dedupWindowMs,
      seeds: [seeds.readUInt32LE(0), seeds.readUInt32LE(4)],
    };
    return {
      module: AppModule,
      imports: [
        RuntimeModule.forRoot(config),
        // sluice_consumer_lag_records{group,topic}: what KEDA scales the router on.
        ConsumerLagModule.forRoot({ groups: lagGroups(routerKafka(config)) }),
      ],
      providers: [
        CallsConsumer,
        RoutingService,
        RouterMetrics,
        DedupService,
        { provide: DEDUP_OPTIONS, useValue: dedup },
        { provide: CALL_HISTORY, useFactory: callHistory, inject: [KafkaConnection] },
      ],
    };
  }
}
