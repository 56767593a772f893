/**
 * Context for ratio (b): the least a `/v1/track` that stores each call in Kafka must do, on a
 * bare `node:http` server. It reads the body, parses it with JSON.parse, adds `type`,
 * `messageId` (when absent) and `receivedAt`, serializes the call once, and produces it (key
 * `sourceId:userId`, the four routing headers) through ingest's own producer: `libs/kafka`'s
 * `BatchProducer` as built in `dist/`, idempotent, acks=all, two requests in flight, the calls
 * of concurrent requests gathered into one produce request. It answers 200 `{"success":true}`
 * once Kafka acknowledged the call. Nothing else: no write key, no validation, no framework,
 * no metrics. Its rate over the bare server's is what durable production alone leaves of
 * (b)'s limit, before ingest's own work.
 *
 * `node bench/bare-kafka.mts '<BareKafkaSpec as JSON>'` listens on 127.0.0.1 and a free port,
 * prints `{"port":N}`, and stops on SIGTERM or SIGINT.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { answerJson, serve } from './bare-http.mts';

/** Where to produce. */
export interface BareKafkaSpec {
  readonly brokers: string;
  /** The full topic name (made by the stand, with the run's prefix). */
  readonly topic: string;
  readonly sourceId: string;
  /** The built project to load the producer from (default: the checkout's `dist/`). */
  readonly dist?: string;
}

/** What this server uses of the project's libraries (the built JavaScript carries no types). */
interface KafkaLib {
  KafkaConnection: new (options: {
    brokers: string[];
    clientId: string;
    topicPrefix: string;
  }) => object;
  BatchProducer: new (
    connection: object,
    options: { requestsInFlight: number },
  ) => {
    connect(): Promise<void>;
    send(records: { topic: string; key: string; value: string; headers: object }[]): Promise<void>;
  };
}
interface HeadersLib {
  HEADER: Record<'sourceId' | 'callType' | 'messageId' | 'integrations', string>;
}
interface RuntimeLib {
  setV8Options(): void;
}

/** Ingest's PRODUCE_REQUESTS_IN_FLIGHT (apps/ingest/src/kafka-topology.ts). */
const REQUESTS_IN_FLIGHT = 2;
const SUCCESS = Buffer.from('{"success":true}');
const INVALID = Buffer.from('{"code":"invalid_json","message":"the body is not valid JSON"}');
const UNAVAILABLE = Buffer.from('{"code":"kafka_unavailable","message":"not stored"}');
/** Ingest's integrations verdict for a call that may reach webhooks. */
const WEBHOOKS_ON = '{"Webhooks":true}';

const spec = JSON.parse(process.argv[2] ?? '{}') as BareKafkaSpec;
const requireBuilt = createRequire(import.meta.url);
const dist = spec.dist ?? fileURLToPath(new URL('../dist', import.meta.url));
// The V8 options every app starts with, so both sides of the comparison collect garbage alike.
(requireBuilt(join(dist, 'libs/runtime/src/v8-options.js')) as RuntimeLib).setV8Options();
const { HEADER } = requireBuilt(join(dist, 'libs/contracts/src/headers.js')) as HeadersLib;
const kafka = requireBuilt(join(dist, 'libs/kafka/src/index.js')) as KafkaLib;

const connection = new kafka.KafkaConnection({
  brokers: spec.brokers.split(','),
  clientId: 'sluice-bench-bare-kafka',
  topicPrefix: '',
});
const producer = new kafka.BatchProducer(connection, { requestsInFlight: REQUESTS_IN_FLIGHT });
await producer.connect();

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    let call: Record<string, unknown>;
    try {
      call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      answerJson(response, 400, INVALID);
      return;
    }
    // A messageId given is kept, as ingest keeps it.
    const messageId = typeof call.messageId === 'string' ? call.messageId : randomUUID();
    call.type = 'track';
    call.messageId = messageId;
    call.receivedAt = new Date().toISOString();
    const record = {
      topic: spec.topic,
      key: `${spec.sourceId}:${String(call.userId)}`,
      value: JSON.stringify(call),
      headers: {
        [HEADER.sourceId]: spec.sourceId,
        [HEADER.callType]: 'track',
        [HEADER.messageId]: messageId,
        [HEADER.integrations]: WEBHOOKS_ON,
      },
    };
    producer.send([record]).then(
      () => answerJson(response, 200, SUCCESS),
      () => answerJson(response, 503, UNAVAILABLE),
    );
  });
});
serve(server);
