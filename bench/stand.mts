/**
 * What the benchmark runs against: a source row, the ingest app with fresh topics, the bare
 * `node:http`, bare Fastify and bare `node:http` + Kafka servers, and the topics of
 * ProducerPerformance and of the last of those servers. Everything it creates it removes
 * again in {@link Stand.tearDown}, which is safe to call twice and after a failure.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

import type { Admin } from 'kafkajs';

import { removeStand, withDatabase } from './common.mts';
import { createTopics, kafkaClient } from './kafka.mts';
import { phaseLines, phasesEnv } from './phase-costs.mts';
import {
  firstJsonLine,
  freePort,
  type Managed,
  sleep,
  type Supervisor,
  waitForHttp,
} from './processes.mts';
import type { SamplingPhase } from './sampling-phases.mts';
import { startOtlpSink, TRACED_RATIOS, type TracedSide, tracingEnv } from './tracing-sides.mts';
import { untracedBuild } from './untraced-build.mts';

/** Longest wait for ingest to report ready (it creates its topics first). */
const READY_TIMEOUT_MS = 90_000;
/** Ingest loads the settings cache at boot; a little more time for its LISTEN and producer. */
const SETTLE_MS = 1_500;
/** Longest wait for a bare server's port (the one with Kafka connects its producers first). */
const BARE_START_TIMEOUT_MS = 30_000;
const INGEST_MAIN = 'dist/apps/ingest/src/main.js';
/** Ingest's main module inside the build without tracing. */
const INGEST_IN_BUILD = 'apps/ingest/src/main.js';
const BARE_SERVER = 'bench/bare-server.mts';
const BARE_FASTIFY = 'bench/bare-fastify.mts';
const BARE_KAFKA = 'bench/bare-kafka.mts';

/** What the stand needs to know. */
export interface StandOptions {
  readonly brokers: string;
  readonly databaseUrl: string;
  readonly partitions: number;
  /** Extra Node options for the ingest process (`BENCH_NODE_ARGS`, for example a profiler). */
  readonly nodeArgs?: readonly string[];
  /**
   * Also start ingest with traces on at 10%, at 100% and with none sampled, exporting to a
   * local OTLP sink; at 10% with sampling switched on and off every second
   * (bench/phase-costs.mts);
   * ingest built without tracing (bench/untraced-build.mts); and an ingest with traces off
   * started with them, the traces sides' "off" (started and warmed up as they are).
   */
  readonly traced?: boolean;
}

/** A server under test. */
export interface Target {
  readonly name: string;
  readonly port: number;
  readonly pid: number;
}

export class Stand {
  /** Unique per run, so every topic and consumer group is fresh. */
  readonly prefix = `bench.${Date.now().toString(36)}.`;
  readonly writeKey = `bench-${randomBytes(16).toString('hex')}`;
  readonly perfTopic = `${this.prefix}bench.producer-perf`;
  /** Where the bare server with Kafka produces. */
  readonly bareKafkaTopic = `${this.prefix}bench.bare-kafka`;
  readonly kafka;
  ingest?: Target;
  /** Ingest with traces on, by side (when the options ask for them). */
  readonly traced: Partial<Record<TracedSide, Target>> = {};
  /** Ingest built without tracing (when the options ask for the traced ones). */
  untraced?: Target;
  /** Ingest with traces off, started with the traced ones (their "off"). */
  tracesOff?: Target;
  /** Ingest at 10% switching sampling on and off, and the phases it reported so far. */
  phased?: { readonly target: Target; readonly phases: readonly SamplingPhase[] };
  bare?: Target;
  bareFastify?: Target;
  bareKafka?: Target;
  private admin?: Admin;
  private sourceId?: string;
  private processes: Managed[] = [];
  /** The traces sides' ingests and their controls, which {@link restartTraced} replaces. */
  private tracedGroup: Managed[] = [];
  private otlpUrl?: string;
  private untracedMain?: string;
  private tornDown?: Promise<void>;

  private readonly options: StandOptions;
  private readonly supervisor: Supervisor;

  constructor(options: StandOptions, supervisor: Supervisor) {
    this.options = options;
    this.supervisor = supervisor;
    this.kafka = kafkaClient(options.brokers);
  }

  get callsTopic(): string {
    return `${this.prefix}sluice.calls.v1`;
  }

  async setUp(): Promise<void> {
    this.sourceId = await withDatabase(this.options.databaseUrl, async (database) => {
      const inserted = await database.query<{ id: string }>(
        'INSERT INTO source (name, write_key) VALUES ($1, $2) RETURNING id',
        [`bench ${this.prefix}`, this.writeKey],
      );
      return inserted.rows[0].id;
    });
    this.admin = this.kafka.admin();
    await this.admin.connect();
    // Ingest creates its own topics at start-up; these are ProducerPerformance's and the bare
    // server's with Kafka.
    const topics = [this.perfTopic, this.bareKafkaTopic];
    await createTopics(this.admin, topics, this.options.partitions);
    const bareKafkaSpec = {
      brokers: this.options.brokers,
      topic: this.bareKafkaTopic,
      sourceId: this.sourceId,
    };
    [this.ingest, this.bare, this.bareFastify, this.bareKafka] = await Promise.all([
      this.startIngest(),
      this.startBare('bare node:http', BARE_SERVER),
      this.startBare('bare Fastify', BARE_FASTIFY),
      this.startBare('bare node:http + Kafka', BARE_KAFKA, [JSON.stringify(bareKafkaSpec)]),
    ]);
    if (this.options.traced) await this.startTraced();
    await sleep(SETTLE_MS);
  }

  private async startTraced(): Promise<void> {
    const { url, sink } = await startOtlpSink(this.supervisor);
    this.processes.push(sink);
    this.otlpUrl = url;
    this.untracedMain = join(untracedBuild(), INGEST_IN_BUILD);
    await this.startTracedGroup();
  }

  /**
   * Stops the traces sides' ingests and their controls and starts them anew, so that each
   * round measures other processes: two of the same settings differ by several percent, and
   * the rounds' median then does not rest on one process's luck.
   */
  async restartTraced(): Promise<void> {
    const old = this.tracedGroup;
    for (const managed of old) await this.supervisor.stop(managed);
    this.processes = this.processes.filter((managed) => !old.includes(managed));
    await this.startTracedGroup();
  }

  /** The traced ingests, one after the other (each creates the same topics at start-up). */
  private async startTracedGroup(): Promise<void> {
    const url = this.otlpUrl!;
    const group: Managed[] = [];
    const start = async (name: string, own: Record<string, string> = {}, main?: string) => {
      const started = await this.startIngest(name, own, main);
      group.push(started.process);
      return started;
    };
    this.untraced = await start('ingest built without tracing', {}, this.untracedMain);
    this.tracesOff = await start('ingest, traces off, with the traced ones');
    for (const [side, ratio] of Object.entries(TRACED_RATIOS) as [TracedSide, number][]) {
      this.traced[side] = await start(`ingest, traces ${ratio * 100}%`, {
        ...tracingEnv(url, ratio),
        OTEL_SERVICE_NAME: `bench-ingest-${side}`,
      });
    }
    // Phases of 1 s: a run of the default 6 s holds five whole ones.
    const phased = await start('ingest, traces 10% switched on and off', {
      ...phasesEnv(url),
      OTEL_SERVICE_NAME: 'bench-ingest-phases10',
      BENCH_PHASE_MS: '1000',
    });
    this.phased = { target: phased, phases: phaseLines(phased.process) };
    this.tracedGroup = group;
  }

  /** Stops the servers, deletes the source, the run's topics and consumer groups. */
  tearDown(): Promise<void> {
    this.tornDown ??= this.removeAll();
    return this.tornDown;
  }

  /** Throws when a server died during a run. */
  ensureRunning(): void {
    const dead = this.processes.find((p) => !p.running);
    if (dead) throw new Error(dead.describeExit());
  }

  private async startIngest(
    name = 'ingest',
    own: Record<string, string> = {},
    main = INGEST_MAIN,
  ): Promise<Target & { readonly process: Managed }> {
    const port = await freePort();
    const ingest = this.supervisor.spawn(
      name,
      process.execPath,
      [...(this.options.nodeArgs ?? []), main],
      {
        env: {
          ...process.env,
          KAFKA_BROKERS: this.options.brokers,
          DATABASE_URL: this.options.databaseUrl,
          KAFKA_TOPIC_PREFIX: this.prefix,
          KAFKA_TOPIC_PARTITIONS: String(this.options.partitions),
          INGEST_PORT: String(port),
          HTTP_HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          ...own,
        },
      },
    );
    this.processes.push(ingest);
    await waitForHttp(`http://127.0.0.1:${port}/health/ready`, ingest, READY_TIMEOUT_MS);
    return { name, port, pid: ingest.pid, process: ingest };
  }

  private async startBare(name: string, script: string, args: string[] = []): Promise<Target> {
    const bare = this.supervisor.spawn(name, process.execPath, [script, ...args], {});
    this.processes.push(bare);
    const { port } = (await firstJsonLine(bare, BARE_START_TIMEOUT_MS)) as { port: number };
    return { name, port, pid: bare.pid };
  }

  private removeAll(): Promise<void> {
    const { supervisor, prefix, admin } = this;
    return removeStand({
      supervisor,
      databaseUrl: this.options.databaseUrl,
      sourceId: this.sourceId || undefined,
      admin,
      prefix,
    });
  }
}
