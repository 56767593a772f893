/**
 * Kafka's side of the benchmark: the bench's own topics, the size of a real call record, and
 * Kafka's ProducerPerformance tool (the physical limit for `/v1/batch`).
 */
import { existsSync } from 'node:fs';

import kafkajs, { type Admin } from 'kafkajs';

import { cpuSeconds, type Supervisor, sleep } from './processes.mts';

/** How often the ProducerPerformance JVM's CPU is read (it exits before it can be read last). */
const CPU_SAMPLE_MS = 200;

/** One record's bytes as ProducerPerformance counts them: all of it becomes its value. */
export interface RecordSize {
  readonly value: number;
  readonly key: number;
  readonly headers: number;
  readonly total: number;
}

/** One ProducerPerformance run. */
export interface PerfResult {
  readonly recordsPerSecond: number;
  readonly records: number;
  readonly p99Ms: number;
  readonly wallSeconds: number;
  /** CPU of the JVM over its whole run (start-up included), in cores. */
  readonly clientCores: number;
  /** CPU of the broker over the JVM's run, in cores; undefined when its pid is unknown. */
  readonly brokerCores?: number;
}

/** Where to find the jars and which broker process to watch. */
export interface PerfTool {
  readonly libsDir: string;
  readonly log4jConfig: string;
  readonly brokers: string;
  readonly brokerPid?: number;
}

export function kafkaClient(brokers: string): kafkajs.Kafka {
  return new kafkajs.Kafka({
    clientId: 'sluice-bench',
    brokers: brokers.split(','),
    logLevel: kafkajs.logLevel.NOTHING,
  });
}

export async function createTopics(
  admin: Admin,
  topics: readonly string[],
  partitions: number,
): Promise<void> {
  await admin.createTopics({
    waitForLeaders: true,
    topics: topics.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: -1 })),
  });
}

/** Deletes every topic whose name starts with `prefix`; returns how many. */
export async function deleteTopicsWithPrefix(admin: Admin, prefix: string): Promise<number> {
  const topics = (await admin.listTopics()).filter((name) => name.startsWith(prefix));
  if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
  return topics.length;
}

/** Reads the first record of `topic` and measures its value, key and headers. */
export async function probeRecordSize(
  kafka: kafkajs.Kafka,
  topic: string,
  groupId: string,
): Promise<RecordSize> {
  const consumer = kafka.consumer({ groupId });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const size = new Promise<RecordSize>((resolve) => {
      void consumer.run({
        eachMessage: ({ message }) => {
          const value = message.value?.length ?? 0;
          const key = message.key?.length ?? 0;
          const headers = Object.entries(message.headers ?? {}).reduce(
            (sum, [name, header]) => sum + Buffer.byteLength(name) + byteLength(header),
            0,
          );
          resolve({ value, key, headers, total: value + key + headers });
          return Promise.resolve();
        },
      });
    });
    const timeout = sleep(30_000).then(() => {
      throw new Error(`no record arrived on ${topic} within 30 s`);
    });
    return await Promise.race([size, timeout]);
  } finally {
    await consumer.disconnect();
  }
}

function byteLength(header: unknown): number {
  if (Buffer.isBuffer(header)) return header.length;
  if (typeof header === 'string') return Buffer.byteLength(header);
  if (Array.isArray(header)) return header.reduce((sum: number, h) => sum + byteLength(h), 0);
  return 0;
}

/**
 * Runs `org.apache.kafka.tools.ProducerPerformance`: `records` records of `recordSize` bytes,
 * as fast as it can (`--throughput -1`), acks=all, otherwise the producer's defaults.
 */
export async function producerPerformance(
  supervisor: Supervisor,
  tool: PerfTool,
  topic: string,
  records: number,
  recordSize: number,
): Promise<PerfResult> {
  if (!existsSync(tool.libsDir)) {
    throw new Error(
      `ProducerPerformance needs the Kafka jars in ${tool.libsDir}; ` +
        'run `bash docker/local/services.sh up` once (without KAFKA_BROKERS) to fetch them',
    );
  }
  const started = Date.now();
  const brokerStart = cpuSeconds(tool.brokerPid);
  const java = supervisor.spawn(
    'ProducerPerformance',
    'java',
    [
      '-Xms256m',
      '-Xmx512m',
      '-cp',
      `${tool.libsDir}/*`,
      `-Dlog4j2.configurationFile=${tool.log4jConfig}`,
      'org.apache.kafka.tools.ProducerPerformance',
      ...['--topic', topic, '--num-records', String(records)],
      ...['--record-size', String(recordSize), '--throughput', '-1'],
      ...['--producer-props', `bootstrap.servers=${tool.brokers}`, 'acks=all'],
    ],
    {},
  );
  let summary: string | undefined;
  java.onLine((line) => {
    if (line.includes('99th')) summary = line;
  });
  let clientCpu = 0;
  const sampler = setInterval(() => {
    clientCpu = cpuSeconds(java.pid) ?? clientCpu;
  }, CPU_SAMPLE_MS);
  const code = await java.exited;
  clearInterval(sampler);
  const wallSeconds = (Date.now() - started) / 1000;
  const brokerEnd = cpuSeconds(tool.brokerPid);
  // e.g. "500000 records sent, 97656.2 records/sec (95.37 MB/sec), 298.4 ms avg latency,
  // 1013.0 ms max latency, 276 ms 50th, 638 ms 95th, 936 ms 99th, 1002 ms 99.9th."
  const match = summary && /([\d.]+) records\/sec .* (\d+) ms 99th/.exec(summary);
  if (code !== 0 || !match) throw new Error(java.describeExit());
  return {
    recordsPerSecond: Number(match[1]),
    records,
    p99Ms: Number(match[2]),
    wallSeconds,
    clientCores: clientCpu / wallSeconds,
    brokerCores:
      brokerStart === undefined || brokerEnd === undefined
        ? undefined
        : (brokerEnd - brokerStart) / wallSeconds,
  };
}
