/**
 * The pipeline bench's floor for the consuming side: a bare consume-and-POST loop. A kafkajs
 * consumer with its default settings reads a topic; each record's value is POSTed, signed as
 * the dispatcher signs (`X-Signature`, HMAC-SHA1 of the body), to one URL through an undici
 * pool, a fetched batch's records all at once; the offsets are committed after each batch
 * (kafkajs's auto-commit). Nothing else: no routing, no settings, no retries, no ledger.
 *
 * `node bench/pipeline-bare-loop.mts '<BareLoopSpec as JSON>'` prints `{"event":"consuming"}`
 * once its group is joined, and stops on SIGTERM or SIGINT.
 */
import { createHmac } from 'node:crypto';

import kafkajs from 'kafkajs';
import { Pool } from 'undici';

/** What the loop reads and where it posts. */
export interface BareLoopSpec {
  readonly brokers: string;
  readonly topic: string;
  readonly groupId: string;
  readonly url: string;
  readonly secret: string;
  /** Connections to the receiver (the dispatcher's DISPATCHER_CONNECTIONS_PER_ORIGIN). */
  readonly connections: number;
  readonly partitions: number;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as BareLoopSpec;
const url = new URL(spec.url);
const pool = new Pool(url.origin, { connections: spec.connections });
const kafka = new kafkajs.Kafka({
  clientId: 'sluice-bench-bare-loop',
  brokers: spec.brokers.split(','),
  logLevel: kafkajs.logLevel.NOTHING,
});
const consumer = kafka.consumer({ groupId: spec.groupId });

async function post(value: Buffer): Promise<void> {
  const response = await pool.request({
    path: url.pathname,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-signature': createHmac('sha1', spec.secret).update(value).digest('hex'),
    },
    body: value,
  });
  await response.body.dump();
  if (response.statusCode !== 200) throw new Error(`receiver answered ${response.statusCode}`);
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void consumer
      .disconnect()
      .then(() => pool.close())
      .finally(() => process.exit(0));
  });
}
consumer.on(consumer.events.GROUP_JOIN, () =>
  process.stdout.write(`${JSON.stringify({ event: 'consuming' })}\n`),
);
await consumer.connect();
await consumer.subscribe({ topics: [spec.topic], fromBeginning: true });
await consumer.run({
  partitionsConsumedConcurrently: spec.partitions,
  eachBatch: async ({ batch }) => {
    await Promise.all(batch.messages.flatMap((m) => (m.value ? [post(m.value)] : [])));
  },
});
