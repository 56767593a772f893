import { Injectable, Optional } from '@nestjs/common';

import { Metrics } from '@app/observability';

import { KafkaConnection } from '../internals/kafka.connection';

/**
 * Exports the requests an app's Kafka clients sent, by API, as
 * `sluice_kafka_requests_total{api}`: what the app costs the brokers, whose CPU goes by
 * requests more than by bytes when batches are small.
 */
@Injectable()
export class KafkaRequestsMetric {
  constructor(connection: KafkaConnection, @Optional() metrics?: Metrics) {
    metrics?.counter(
      'sluice_kafka_requests_total',
      'Requests sent to the Kafka brokers, by API (Produce, Fetch, OffsetCommit, ...)',
      ['api'],
      connection.requests,
    );
  }
}
