/** The benchmark's settings, from the environment (see bench/README.md). */
import { envReader } from './common.mts';
import type { PerfTool } from './kafka.mts';

export interface Settings {
  readonly rounds: number;
  /** Length of each measured run. */
  readonly seconds: number;
  /** Load before each measured run, not counted. */
  readonly warmupSeconds: number;
  /** Connections to `/v1/track` and to the bare server alike. */
  readonly trackConnections: number;
  readonly batchConnections: number;
  readonly batchCalls: number;
  readonly callBytes: number;
  readonly partitions: number;
  /** Extra Node options for the ingest process (`BENCH_NODE_ARGS`). */
  readonly nodeArgs: readonly string[];
  readonly brokers: string;
  readonly databaseUrl: string;
  readonly perf: PerfTool;
}

export function readSettings(env: NodeJS.ProcessEnv): Settings {
  const { number, required } = envReader(env, 'bench:ingest');
  const brokers = required('KAFKA_BROKERS');
  const brokerPid = Number(env.BENCH_KAFKA_PID ?? '');
  return {
    rounds: number('BENCH_ROUNDS', 3, 1, 20),
    seconds: number('BENCH_SECONDS', 6, 1, 120),
    warmupSeconds: number('BENCH_WARMUP_SECONDS', 1, 0, 60),
    trackConnections: number('BENCH_CONNECTIONS', 64, 1, 1_000),
    batchConnections: number('BENCH_BATCH_CONNECTIONS', 8, 1, 1_000),
    batchCalls: number('BENCH_BATCH_CALLS', 100, 1, 400),
    callBytes: number('BENCH_CALL_BYTES', 1_024, 400, 4_096),
    partitions: number('KAFKA_TOPIC_PARTITIONS', 6, 1, 100),
    nodeArgs: (env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
    brokers,
    databaseUrl: required('DATABASE_URL'),
    perf: {
      libsDir: required('BENCH_KAFKA_LIBS'),
      log4jConfig: required('BENCH_KAFKA_LOG4J'),
      brokers,
      brokerPid: Number.isInteger(brokerPid) && brokerPid > 0 ? brokerPid : undefined,
    },
  };
}
