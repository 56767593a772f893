/**
 * Kafka's side of the benchmark: the bench's own topics, the size of a real call record, and
 * Kafka's ProducerPerformance tool (the physical limit for `/v1/batch`).
 */
import { existsSync } from 'node:fs';

import kafkajs, { type Admin } from 'kafkajs';

import { cpuSeconds, machineBusySeconds, type Supervisor, sleep } from './processes.mts';

/** How often the ProducerPerformance JVM's CPU is read (it exits before it can be read last). */
const CPU_SAMPLE_MS = 200;
/**
 * The JVM options `kafka-producer-perf-test.sh` runs the tool with (its heap, and
 * kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS).
 */
const JVM_OPTIONS = [
  '-Xmx512M',
  '-server',
  '-XX:+UseG1GC',
  '-XX:MaxGCPauseMillis=20',
  '-XX:InitiatingHeapOccupancyPercent=35',
  '-XX:+ExplicitGCInvokesConcurrent',
  '-Djava.awt.headless=true',
];
/** ProducerPerformance prints a line per 5 s window; the first one is the JVM warming up. */
export const PERF_WARMUP_SECONDS = 5;

/** One record's bytes as ProducerPerformance counts them: all of it becomes its value. */
export interface RecordSize {
  readonly value: number;
  readonly key: number;
  readonly headers: number;
  readonly total: number;
}

/** One ProducerPerformance run. */
export interface PerfResult {
  /** Records/s after the first 5 s window (the whole run's when it had no such window). */
  readonly recordsPerSecond: number;
  /** Records/s of the whole run, as the tool's summary line says. */
  readonly overallPerSecond: number;
  readonly records: number;
  /** Seconds the steady part lasted; 0 when the run ended within its first window. */
  readonly steadySeconds: number;
  /** CPU of the JVM in the steady part, in cores. */
  readonly clientCores?: number;
  /** CPU of the broker in the steady part, in cores; undefined when its pid is unknown. */
  readonly brokerCores?: number;
  /** CPU of the whole machine in the steady part, in cores. */
  readonly machineCores?: number;
}

interface CpuMark {
  readonly at: number;
  readonly client?: number;
  readonly broker?: number;
  readonly machine?: number;
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

/** How long new topics may take to be served (a broker that has just started is slow to). */
const TOPICS_READY_MS = 60_000;

/**
 * Creates the topics and waits until every partition's leader answers for it: a broker names
 * a new partition's leader in metadata a moment before that leader serves it, and a broker
 * that has just started takes longer still.
 */
export async function createTopics(
  admin: Admin,
  topics: readonly string[],
  partitions: number,
): Promise<void> {
  await admin.createTopics({
    waitForLeaders: true,
    topics: topics.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: -1 })),
  });
  const deadline = Date.now() + TOPICS_READY_MS;
  for (const topic of topics) {
    for (;;) {
      try {
        await admin.fetchTopicOffsets(topic);
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await sleep(250);
      }
    }
  }
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
  const java = supervisor.spawn(
    'ProducerPerformance',
    'java',
    [
      ...JVM_OPTIONS,
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
  let client: number | undefined;
  const mark = (): CpuMark => ({
    at: Date.now(),
    client,
    broker: cpuSeconds(tool.brokerPid),
    machine: machineBusySeconds(),
  });
  const sampler = setInterval(() => (client = cpuSeconds(java.pid) ?? client), CPU_SAMPLE_MS);
  let firstWindow: { records: number; perSecond: number; end: CpuMark } | undefined;
  let summary: RegExpExecArray | null = null;
  java.onLine((line) => {
    // "24700 records sent, 4931.1 records/sec (6.31 MB/sec), 630.8 ms avg latency, ..."; the
    // summary line goes on with percentiles ("..., 936 ms 99th, 1002 ms 99.9th.").
    const window = /^(\d+) records sent, ([\d.]+) records\/sec/.exec(line);
    if (!window) return;
    if (line.includes('99th')) summary = window;
    else firstWindow ??= { records: Number(window[1]), perSecond: Number(window[2]), end: mark() };
  });
  const code = await java.exited;
  clearInterval(sampler);
  const last = mark();
  const done = summary as RegExpExecArray | null;
  if (code !== 0 || !done) throw new Error(java.describeExit());
  return perfResult(records, Number(done[2]), firstWindow, last);
}

/** The rate after the first window: (all records - its records) / (all time - its time). */
function perfResult(
  records: number,
  overallPerSecond: number,
  first: { records: number; perSecond: number; end: CpuMark } | undefined,
  last: CpuMark,
): PerfResult {
  const totalSeconds = records / overallPerSecond;
  const steadySeconds = first ? totalSeconds - first.records / first.perSecond : 0;
  if (!first || steadySeconds < 1) {
    return { recordsPerSecond: overallPerSecond, overallPerSecond, records, steadySeconds: 0 };
  }
  const wall = (last.at - first.end.at) / 1000;
  const cores = (from?: number, to?: number) =>
    from === undefined || to === undefined || wall <= 0 ? undefined : (to - from) / wall;
  return {
    recordsPerSecond: (records - first.records) / steadySeconds,
    overallPerSecond,
    records,
    steadySeconds,
    clientCores: cores(first.end.client, last.client),
    brokerCores: cores(first.end.broker, last.broker),
    machineCores: cores(first.end.machine, last.machine),
  };
}
