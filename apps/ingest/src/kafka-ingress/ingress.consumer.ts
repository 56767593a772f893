import { Injectable, Logger } from '@nestjs/common';

import { HEADER, MAX_REQUEST_BYTES, TOPIC } from '@app/contracts';
import { BatchProducer, headerText, IncomingRecord, KafkaTransport } from '@app/kafka';
import { Span, tracerOf } from '@app/tracing';

import { IngestError } from '../tracking/ingest.error';
import { IngestMetrics } from '../tracking/ingest.metrics';
import { TrackingService } from '../tracking/tracking.service';
import { tracedIngress } from '../tracking/tracking.tracing';

/**
 * Calls published straight to `sluice.ingest.v1`: one call (with its `type`) or a batch body
 * per record, the write key in the `sluice-write-key` header or the body. Accepted calls go on
 * exactly as over HTTP; a record refused as a whole goes to the rejected topic with its
 * reason. Returning lets the transport commit: only after the produced records were acked.
 */
@Injectable()
export class IngressConsumer {
  private readonly logger = new Logger(IngressConsumer.name);
  private readonly tracer = tracerOf('ingest');

  constructor(
    private readonly tracking: TrackingService,
    private readonly producer: BatchProducer,
    private readonly metrics: IngestMetrics,
  ) {}

  register(transport: KafkaTransport): void {
    transport.consume(TOPIC.ingest, (record) => this.handle(record));
  }

  handle(record: IncomingRecord): Promise<void> {
    const tracer = this.tracer;
    if (tracer === undefined) return this.take(record);
    return tracedIngress(tracer, record, (span) => this.take(record, span));
  }

  private async take(record: IncomingRecord, span?: Span): Promise<void> {
    try {
      await this.tracking.take({
        route: 'auto',
        body: record.value ?? undefined,
        contentEncoding: headerText(record, 'content-encoding'),
        writeKey: headerText(record, HEADER.writeKey),
        channel: 'kafka',
        span,
      });
    } catch (error) {
      // Kafka itself failing is an infrastructure fault: throw, so the record is retried.
      if (!(error instanceof IngestError) || error.code === 'kafka_unavailable') throw error;
      await this.reject(record, error);
    }
  }

  private async reject(record: IncomingRecord, error: IngestError): Promise<void> {
    this.logger.warn(`ingress record ${record.partition}@${record.offset} refused: ${error.code}`);
    this.metrics.callRejected(error.code, 'kafka');
    await this.producer.send([
      {
        topic: TOPIC.ingestRejected,
        key: record.key,
        value: rejectedValue(record.value),
        headers: { [HEADER.reason]: error.code },
      },
    ]);
  }
}

/**
 * The refused bytes as received, except that a write key is blanked out (it may sit in a
 * body that is not valid JSON) and a body over the request limit is not copied at all.
 */
export function rejectedValue(value: Buffer | null): Buffer {
  if (!value || value.length > MAX_REQUEST_BYTES) return Buffer.alloc(0);
  const text = value.toString('utf8');
  if (!text.includes('writeKey')) return value;
  return Buffer.from(text.replace(/("writeKey"\s*:\s*)"(?:[^"\\]|\\.)*"?/g, '$1"[removed]"'));
}
