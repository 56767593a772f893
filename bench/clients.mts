/**
 * The client libraries' benchmark (issue 7), one command for both:
 *
 *   (1) the TypeScript client's cost of one queued call: track() with a batch size larger
 *       than the run, so nothing is sent (no network at all)
 *   (2) the TypeScript client's end-to-end calls/s into a local ingest: N track calls queued
 *       as fast as the loop goes, then close(), timed until close() resolved (ingest answers
 *       only once Kafka acknowledged)
 *   (3) the same for the Go client, through its program libs/analytics-go/internal/bench
 *   (4) Go's BenchmarkEnqueue (`go test -bench`), its cost of one queued call
 *
 * The TypeScript and Go end-to-end runs alternate round by round against the same ingest and
 * source; medians are printed, with each round's value. At the end the calls topic's record
 * count is compared with the calls sent, so a client that loses calls is seen.
 *
 * Run through `npm run bench:clients` (bench/run.sh builds, starts the services, migrates).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { envReader, progress, runBench } from './common.mts';
import { Supervisor } from './processes.mts';
import { count, fixed, median, table } from './report.mts';
import { Stand } from './stand.mts';

/** The build of libs/client (bench/run.sh runs `npm run build` first). */
const CLIENT = '../dist/libs/client/src/index.js';
const GO_MODULE = 'libs/analytics-go';
const GO_BENCH_PACKAGE = './internal/bench';
/** Longest a Go build, a Go run or `go test -bench` may take. */
const GO_TIMEOUT_MS = 600_000;
/** Calls sent (and awaited with close()) before the measured end-to-end runs. */
const WARMUP_CALLS = 2_000;
const USERS = 100;
/** Calls one enqueue-only client queues: the client's default bound of its queue. */
const ENQUEUE_CHUNK = 10_000;
/** An address nothing is sent to: the enqueue-only client never reaches its batch size. */
const NOWHERE = 'http://127.0.0.1:1';

/** The part of the client's API the benchmark uses. */
interface Client {
  track(params: { userId: string; event: string; properties: Record<string, unknown> }): string;
  close(): Promise<void>;
}
type ClientClass = new (options: {
  writeKey: string;
  endpoint: string;
  flushAt?: number;
  flushAfterMs?: number;
  maxQueuedCalls?: number;
  onError?: (error: Error) => void;
}) => Client;

const { Analytics } = createRequire(import.meta.url)(CLIENT) as { Analytics: ClientClass };

interface Settings {
  readonly rounds: number;
  readonly enqueueCalls: number;
  readonly calls: number;
  readonly flushAt: number;
  readonly partitions: number;
  readonly brokers: string;
  readonly databaseUrl: string;
}

function readSettings(env: NodeJS.ProcessEnv): Settings {
  const { number, required } = envReader(env, 'bench:clients');
  return {
    rounds: number('BENCH_ROUNDS', 3, 1, 20),
    enqueueCalls: number('BENCH_ENQUEUE_CALLS', 200_000, 1_000, 5_000_000),
    calls: number('BENCH_CLIENT_CALLS', 20_000, 100, 2_000_000),
    flushAt: number('BENCH_FLUSH_AT', 20, 1, 10_000),
    partitions: number('KAFKA_TOPIC_PARTITIONS', 6, 1, 100),
    brokers: required('KAFKA_BROKERS'),
    databaseUrl: required('DATABASE_URL'),
  };
}

/** The i-th call: a typical track call of about 200 bytes of JSON. */
function trackCall(i: number) {
  return {
    userId: `user-${i % USERS}`,
    event: 'Order Completed',
    properties: { orderId: `o-${i}`, total: 12.5, currency: 'EUR', items: 3 },
  };
}

/** What the Go bench program prints as its last line. */
interface GoRun {
  readonly calls: number;
  readonly seconds: number;
  readonly callsPerSecond: number;
}

class ClientsBench {
  readonly supervisor = new Supervisor();
  readonly stand: Stand;
  private readonly settings: Settings;
  private readonly notes: string[] = [];
  private errors = 0;
  private sent = 0;
  private goBinary?: string;
  private goDir?: string;

  constructor(settings: Settings) {
    this.settings = settings;
    this.stand = new Stand(settings, this.supervisor);
  }

  async run(): Promise<string> {
    const { settings } = this;
    progress('(1) TypeScript client, one queued call');
    const enqueueNs = this.measureEnqueue();
    progress(`setting up (topic prefix ${this.stand.prefix})`);
    await this.stand.setUp();
    const endpoint = `http://127.0.0.1:${this.stand.ingest?.port}`;
    await this.prepareGo();
    progress('warming up');
    await this.runTs(endpoint, WARMUP_CALLS);
    if (this.goBinary) await this.runGoOrNote(endpoint, WARMUP_CALLS);
    const ts: number[] = [];
    const go: number[] = [];
    for (let round = 1; round <= settings.rounds; round++) {
      progress(`round ${round}/${settings.rounds}: (2) TypeScript, (3) Go`);
      ts.push(await this.runTs(endpoint, settings.calls));
      if (this.goBinary) go.push(...(await this.runGoOrNote(endpoint, settings.calls)));
    }
    const goEnqueue = await this.goEnqueue();
    const delivered = await this.recordsOnCallsTopic();
    return this.report(enqueueNs, ts, go, goEnqueue, delivered);
  }

  /**
   * Nanoseconds per track() call, one sample per round, after a warm-up. Each client queues
   * at most `ENQUEUE_CHUNK` calls (the default queue bound) and one more than that is its
   * batch size, so it never sends; a sample is the time of all of its clients' calls.
   */
  private measureEnqueue(): number[] {
    const { enqueueCalls, rounds } = this.settings;
    const queueOnly = (calls: number) => {
      let elapsedMs = 0;
      for (let done = 0; done < calls; done += ENQUEUE_CHUNK) {
        const client = new Analytics({
          writeKey: 'bench',
          endpoint: NOWHERE,
          flushAt: ENQUEUE_CHUNK + 1,
          maxQueuedCalls: ENQUEUE_CHUNK + 1,
          flushAfterMs: 3_600_000,
        });
        const chunk = Math.min(ENQUEUE_CHUNK, calls - done);
        const started = performance.now();
        for (let i = done; i < done + chunk; i++) client.track(trackCall(i));
        elapsedMs += performance.now() - started;
      }
      return (elapsedMs * 1e6) / calls;
    };
    queueOnly(Math.min(enqueueCalls, 50_000));
    return Array.from({ length: rounds }, () => queueOnly(enqueueCalls));
  }

  /** Calls/s of `calls` track calls and close(), into ingest. */
  private async runTs(endpoint: string, calls: number): Promise<number> {
    const client = new Analytics({
      writeKey: this.stand.writeKey,
      endpoint,
      flushAt: this.settings.flushAt,
      maxQueuedCalls: calls,
      onError: (error) => {
        this.errors++;
        progress(`TypeScript client: ${error.message}`);
      },
    });
    const started = performance.now();
    for (let i = 0; i < calls; i++) client.track(trackCall(i));
    await client.close();
    this.sent += calls;
    return calls / ((performance.now() - started) / 1_000);
  }

  /** Builds the Go bench program once, when the Go module and the program exist. */
  private async prepareGo(): Promise<void> {
    if (!existsSync(join(GO_MODULE, 'internal', 'bench'))) {
      this.notes.push(
        `(3) Go client: not measured: ${GO_MODULE}/${GO_BENCH_PACKAGE.slice(2)} does not exist yet`,
      );
      return;
    }
    progress('building the Go bench program');
    this.goDir = mkdtempSync(join(tmpdir(), 'sluice-bench-go-'));
    const binary = join(this.goDir, 'clients-bench');
    try {
      await run('go', ['build', '-o', binary, GO_BENCH_PACKAGE], GO_MODULE);
      this.goBinary = binary;
    } catch (error) {
      this.notes.push(`(3) Go client: not measured: the build failed: ${message(error)}`);
    }
  }

  /** One Go run's calls/s; none, with a note, when the program fails (no more Go runs). */
  private async runGoOrNote(endpoint: string, calls: number): Promise<number[]> {
    try {
      return [(await this.runGo(endpoint, calls)).callsPerSecond];
    } catch (error) {
      this.notes.push(`(3) Go client: a run failed, no more Go runs: ${message(error)}`);
      this.goBinary = undefined;
      return [];
    }
  }

  private async runGo(endpoint: string, calls: number): Promise<GoRun> {
    const args = ['-endpoint', endpoint, '-writekey', this.stand.writeKey, '-n', String(calls)];
    const output = await run(this.goBinary as string, args, GO_MODULE);
    const lines = output.trim().split('\n');
    const result = JSON.parse(lines[lines.length - 1]) as GoRun;
    if (!(result.callsPerSecond > 0) || result.calls !== calls) {
      throw new Error(`the Go bench program printed ${lines[lines.length - 1]}`);
    }
    this.sent += calls;
    return result;
  }

  /** The `Benchmark...` lines of Go's BenchmarkEnqueue, or why there are none. */
  private async goEnqueue(): Promise<string[]> {
    if (!existsSync(join(GO_MODULE, 'go.mod'))) return [`${GO_MODULE}/go.mod does not exist yet`];
    progress('(4) go test -bench BenchmarkEnqueue');
    try {
      const output = await run(
        'go',
        ['test', '-run', '^$', '-bench', 'BenchmarkEnqueue', '-benchmem', './...'],
        GO_MODULE,
      );
      const lines = output.split('\n').filter((l) => l.startsWith('Benchmark'));
      return lines.length > 0 ? lines : ['no BenchmarkEnqueue in the Go module yet'];
    } catch (error) {
      return [`go test failed: ${message(error)}`];
    }
  }

  /** Records on the run's calls topic: every call sent, when no client lost one. */
  private async recordsOnCallsTopic(): Promise<number> {
    const admin = this.stand.kafka.admin();
    await admin.connect();
    try {
      const offsets = await admin.fetchTopicOffsets(this.stand.callsTopic);
      return offsets.reduce((sum, o) => sum + Number(o.high) - Number(o.low), 0);
    } finally {
      await admin.disconnect();
    }
  }

  private report(
    enqueueNs: number[],
    ts: number[],
    go: number[],
    goEnqueue: string[],
    delivered: number,
  ): string {
    const { settings } = this;
    const perSecond = (ns: number) => 1e9 / ns;
    const rows = [
      ['measurement', 'median', 'rounds'],
      [
        '(1) TypeScript, one queued call, ns',
        fixed(median(enqueueNs), 0),
        enqueueNs.map((v) => fixed(v, 0)).join(' '),
      ],
      [
        '    the same as calls/s',
        count(perSecond(median(enqueueNs))),
        enqueueNs.map((v) => count(perSecond(v))).join(' '),
      ],
      ['(2) TypeScript into ingest, calls/s', count(median(ts)), ts.map(count).join(' ')],
      ['(3) Go into ingest, calls/s', count(median(go)), go.map(count).join(' ')],
    ];
    const check =
      delivered === this.sent
        ? `every call arrived: ${count(delivered)} records on the calls topic`
        : `MISMATCH: ${count(delivered)} records on the calls topic for ${count(this.sent)} calls sent`;
    return [
      `Client libraries: (1) ${count(settings.enqueueCalls)} calls queued without sending; ` +
        `(2), (3) ${count(settings.calls)} track calls then close(), flushAt ${settings.flushAt}, ` +
        `ingest with ${settings.partitions} partitions; ${settings.rounds} round(s), medians`,
      table(rows),
      '(4) Go, go test -run ^$ -bench BenchmarkEnqueue -benchmem:',
      ...goEnqueue.map((line) => `    ${line}`),
      ...this.notes,
      `${check}; errors reported by the TypeScript client: ${this.errors}`,
    ].join('\n');
  }

  /** Removes the Go build, then the stand. */
  async tearDown(): Promise<void> {
    if (this.goDir) rmSync(this.goDir, { recursive: true, force: true });
    await this.stand.tearDown();
  }
}

/** Runs a command to its end; resolves with its stdout, rejects with its stderr's tail. */
function run(command: string, args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      command,
      args,
      { cwd, timeout: GO_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const tail = `${stdout}\n${stderr}`.trim().split('\n').slice(-8).join('\n  ');
        reject(new Error(`${command} ${args.join(' ')}: ${error.message}\n  ${tail}`));
      },
    ),
  );
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const bench = new ClientsBench(readSettings(process.env));
runBench({
  supervisor: bench.supervisor,
  stand: { tearDown: () => bench.tearDown() },
  run: () => bench.run(),
});
