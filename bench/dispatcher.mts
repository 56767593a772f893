/**
 * The dispatcher benchmark (docs/performance.md, issue 5): (a) signed deliveries/s from a
 * pre-filled `sluice.deliveries.v1` to a local 200 sink divided by a bare undici
 * `Pool.request` loop posting the same bytes to the same sink, and CPU per delivery against
 * that loop's CPU per request; (b) the healthy destination's deliveries/s while another
 * destination times out on every request, divided by the all-healthy run; (c) the
 * dispatcher's CPU while only paused retry partitions exist. A/B runs interleaved, medians.
 * (a) runs with the delivery ledger's outcome records on and off, and (ledger on) with
 * OpenTelemetry traces on at 10% and 100% of new traces, exported to a local OTLP sink; then
 * the admin app's ledger writer drains one ledger-on run's outcomes, and its rows/s is set
 * against the dispatcher's. Traces off is also set against the same dispatcher built without
 * tracing (bench/untraced-build.mts).
 *
 * Run through `npm run bench:dispatcher` (bench/run.sh builds, starts the services,
 * migrates). Settings are described in bench/DISPATCHER.md.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { join } from 'node:path';

import { progress, runBench } from './common.mts';
import type { BareSpec } from './dispatcher-bare.mts';
import {
  BATCH_SIDES,
  dispatcherReport,
  type IdleSample,
  readSettings,
  type Sample,
  type Series,
  type Settings,
  type Side,
} from './dispatcher-report.mts';
import type { SinkCounts } from './dispatcher-sink.mts';
import { DispatcherStand, type Offsets, type Part } from './dispatcher-stand.mts';
import {
  cpuSeconds,
  firstJsonLine,
  freePort,
  machineSeconds,
  type Managed,
  sleep,
  Supervisor,
  waitForHttp,
} from './processes.mts';
import { count, fixed } from './report.mts';
import { type Count, phaseCosts, phaseLines, phasesEnv } from './phase-costs.mts';
import { startOtlpSink, TRACED_RATIOS, tracingEnv } from './tracing-sides.mts';
import { untracedBuild } from './untraced-build.mts';

const DISPATCHER_MAIN = 'dist/apps/dispatcher/src/main.js';
/** The dispatcher's main module inside a build (dist/ or the build without tracing). */
const DISPATCHER_IN_BUILD = 'apps/dispatcher/src/main.js';
const ADMIN_MAIN = 'dist/apps/admin/src/main.js';
const SINK = 'bench/dispatcher-sink.mts';
const BARE_LOOP = 'bench/dispatcher-bare.mts';
/** How often the sink's counts are read while a run is measured. */
const POLL_MS = 20;
/** How often the ledger's rows are counted while the writer drains. */
const WRITER_POLL_MS = 100;
/** Longest wait for a run's first 10% (process start-up and group join included). */
const START_TIMEOUT_MS = 90_000;
/** Longest wait, after the 90% mark, for the rest of a run's requests. */
const FINISH_TIMEOUT_MS = 60_000;
/** The healthy destination's webhook path, also the bare loop's; the other one's. */
const HEALTHY_PATH = '/healthy';
const OTHER_PATH = '/other';

interface Mark {
  readonly at: number;
  readonly count: number;
  readonly process?: number;
  readonly sink?: number;
  readonly machine?: number;
  readonly steal?: number;
}

/** Where the outcomes of the last ledger-on run of (a) start, and how many there are. */
interface LedgerRun {
  readonly from: Offsets;
  readonly records: number;
}

class DispatcherBench {
  readonly supervisor = new Supervisor();
  readonly stand: DispatcherStand;
  private readonly settings: Settings;
  private readonly warnings: string[] = [];
  private sink?: Managed;
  private okOrigin = '';
  private hangOrigin = '';
  private otherUrl = '';
  /** The OTLP sink the traced sides export to. */
  private otlpUrl = '';
  /** The dispatcher of the build without tracing (when its side runs). */
  private untracedMain = '';
  /** The HTTP port of the dispatcher started last. */
  private port = 0;
  private runs = 0;
  private lastLedgerRun?: LedgerRun;

  constructor(settings: Settings) {
    this.settings = settings;
    this.stand = new DispatcherStand(settings, this.supervisor);
  }

  /** Sets up, measures, and returns the report (the caller tears down). */
  async run(): Promise<string> {
    const s = this.settings;
    await this.startSink();
    this.otlpUrl = (await startOtlpSink(this.supervisor)).url;
    if (s.sides.includes('untraced')) {
      this.untracedMain = join(untracedBuild(), DISPATCHER_IN_BUILD);
    }
    progress(`setting up (topic prefix ${this.stand.prefix})`);
    this.otherUrl = `${this.okOrigin}${OTHER_PATH}`;
    await this.stand.setUp(`${this.okOrigin}${HEALTHY_PATH}`, this.otherUrl);
    // Part d only when a batching side runs: filling it takes a while.
    const batchRecords = s.sides.some((side) => BATCH_SIDES[side]) ? s.batchDeliveries : 0;
    progress(`pre-filling 2 x ${count(s.deliveries)} + ${count(batchRecords)} deliveries`);
    const otherEvery = Math.round(100 / s.otherPercent);
    const fillPerSecond = await this.stand.fillMain(s.deliveries, batchRecords, otherEvery);
    const empty = await this.measureIdle('nothing to consume', 0);
    await this.stand.fillPausedTiers(s.pausedPerTier);
    const series = (label: string): Series => ({ label, samples: [] });
    const all: Record<Side, Series> = {
      dispatcher: series('(a) dispatcher deliveries/s, ledger on'),
      ledgerOff: series('(a) dispatcher deliveries/s, ledger off'),
      traced10: series('(a) dispatcher deliveries/s, traces 10%'),
      traced100: series('(a) dispatcher deliveries/s, traces 100%'),
      traced0: series('(a) dispatcher deliveries/s, traces 0%'),
      phases10: series('(a) traces 10%, switched on and off'),
      untraced: series('(a) dispatcher built without tracing'),
      bare: series('(a) bare undici loop requests/s'),
      healthy: series('(b) healthy dest., other healthy'),
      failing: series('(b) healthy dest., other times out'),
      batch100: series('(a) batching N=100 calls/s, ledger on'),
      batch1000: series('(a) batching N=1,000 calls/s, ledger on'),
    };
    for (let round = 1; round <= s.rounds; round += 1) {
      progress(`round ${round}/${s.rounds}`);
      // Swapping places every round keeps a drift of the shared machine from favouring a side.
      const odd = round % 2 === 1;
      const order: Side[] = odd
        ? [
            'dispatcher',
            'traced10',
            'untraced',
            'batch100',
            'ledgerOff',
            'bare',
            'traced100',
            'traced0',
            'phases10',
            'batch1000',
            'healthy',
            'failing',
          ]
        : [
            'bare',
            'batch1000',
            'phases10',
            'traced0',
            'traced100',
            'ledgerOff',
            'dispatcher',
            'batch100',
            'untraced',
            'traced10',
            'failing',
            'healthy',
          ];
      for (const side of order.filter((one) => s.sides.includes(one))) {
        all[side].samples.push(await this.measure(side));
      }
    }
    const writer = await this.measureWriter();
    const idle = await this.measureIdle('only paused retry partitions', s.pausedPerTier);
    const { badSignatures, checked, batchesParsed, badCounts } = await this.counts();
    if (checked === 0 || badSignatures > 0) {
      this.warnings.push(
        `${badSignatures} of ${checked} signatures checked at the sink were wrong`,
      );
    }
    if (badCounts > 0) {
      this.warnings.push(`${badCounts} of ${batchesParsed} batches parsed at the sink miscounted`);
    }
    return dispatcherReport({
      settings: s,
      ...all,
      writer,
      idle,
      empty,
      signatures: { checked, bad: badSignatures },
      fillPerSecond,
      warnings: this.warnings,
      pollMs: POLL_MS,
    });
  }

  private async startSink(): Promise<void> {
    const sink = this.supervisor.spawn(
      'sink',
      process.execPath,
      [SINK, JSON.stringify({ secret: this.stand.secret })],
      {},
    );
    this.sink = sink;
    const { okPort, hangPort } = (await firstJsonLine(sink, 10_000)) as {
      okPort: number;
      hangPort: number;
    };
    this.okOrigin = `http://127.0.0.1:${okPort}`;
    this.hangOrigin = `http://127.0.0.1:${hangPort}`;
  }

  /** One run of one side: the sink's healthy requests counted from 10% to 90%. */
  private async measure(side: Side): Promise<Sample> {
    this.runs += 1;
    const s = this.settings;
    const part: Part =
      side === 'healthy' || side === 'failing' ? 'b' : BATCH_SIDES[side] ? 'd' : 'a';
    const expected =
      part === 'a'
        ? s.deliveries
        : part === 'd'
          ? s.batchDeliveries
          : s.deliveries - Math.floor(s.deliveries / Math.round(100 / s.otherPercent));
    await fetch(`${this.okOrigin}/__reset`, { method: 'POST' });
    const outcomes = this.stand.outcomesTopic('a');
    // The single-call ledger-on run's outcomes are the ones the writer drains.
    const ledgerFrom = side === 'dispatcher' ? await this.stand.endOffsets(outcomes) : undefined;
    let child: Managed;
    if (side === 'bare') {
      child = this.startBare();
    } else {
      await this.stand.setOtherUrl(
        side === 'failing' ? `${this.hangOrigin}${OTHER_PATH}` : this.otherUrl,
      );
      await this.retrying(() => this.stand.resetGroups(part));
      // Every side sets it: the healthy destination is among (b)'s too.
      await this.stand.setBatching(BATCH_SIDES[side] ?? null);
      const traces =
        side === 'traced10' || side === 'traced100' || side === 'traced0'
          ? tracingEnv(this.otlpUrl, TRACED_RATIOS[side])
          : side === 'phases10'
            ? phasesEnv(this.otlpUrl)
            : {};
      const main = side === 'untraced' ? this.untracedMain : DISPATCHER_MAIN;
      child = await this.startDispatcher(part, side === 'ledgerOff' ? 0 : 1, traces, main);
    }
    // The phases10 side's phases, and the sink's counts to divide their CPU by.
    const phased =
      side === 'phases10' ? { phases: phaseLines(child), counts: [] as Count[] } : null;
    try {
      const windowed = await this.window(
        child,
        expected,
        () => this.healthyCount(),
        POLL_MS,
        phased?.counts,
      );
      const sample = phased
        ? { ...windowed, phases: phaseCosts(phased.phases, phased.counts) }
        : windowed;
      if (phased && sample.phases === undefined) {
        this.warnings.push(
          `phases10 run ${this.runs}: no sampled and unsampled phase both within the window; ` +
            'raise BENCH_DELIVERIES (600000 gives about ten phases)',
        );
      }
      // One outcome per delivery; the writer's window waits for every one of them as a row.
      if (ledgerFrom) this.lastLedgerRun = { from: ledgerFrom, records: expected };
      progress(
        `  ${side}: ${count(sample.perSecond)}/s over ${sample.seconds.toFixed(2)} s, ` +
          `${fixed(sample.processCores ?? NaN, 2)} cores, ` +
          `${fixed(sample.cpuUsPerRequest ?? NaN, 1)} µs CPU/request, ` +
          `${fixed(sample.stealCores ?? NaN, 2)} cores stolen`,
      );
      return sample;
    } finally {
      await this.supervisor.stop(child);
    }
  }

  /**
   * The admin app of part `a` (its ledger writer) drains the last ledger-on run's outcomes:
   * rows/s from the rows in PostgreSQL, counted from 10% to 90% like a delivery run.
   */
  private async measureWriter(): Promise<Sample | undefined> {
    const run = this.lastLedgerRun;
    if (!run) {
      this.warnings.push('ledger writer: no ledger-on run left outcomes to write');
      return undefined;
    }
    progress(`ledger writer: ${count(run.records)} outcomes`);
    await this.stand.startLedgerAt('a', run.from);
    const child = await this.startAdmin('a');
    try {
      const sample = await this.window(
        child,
        run.records,
        () => this.stand.ledgerRows(),
        WRITER_POLL_MS,
      );
      progress(
        `  ledger writer: ${count(sample.perSecond)} rows/s, ` +
          `${fixed(sample.cpuUsPerRequest ?? NaN, 1)} µs CPU/row`,
      );
      return sample;
    } finally {
      await this.supervisor.stop(child);
    }
  }

  /**
   * Marks the polls that first see 10% and 90% of `expected` (counted by `read`), then
   * waits for all of it.
   */
  private async window(
    child: Managed,
    expected: number,
    read: () => Promise<number>,
    pollMs = POLL_MS,
    counts?: Count[],
  ): Promise<Sample> {
    const low = Math.ceil(expected * 0.1);
    const high = Math.floor(expected * 0.9);
    let deadline = Date.now() + START_TIMEOUT_MS;
    let first: Mark | undefined;
    let last: Mark | undefined;
    for (;;) {
      if (!child.running) throw new Error(child.describeExit());
      const received = await read();
      if (!first && received >= low) first = this.mark(child, received);
      if (first && !last) counts?.push({ at: Date.now(), count: received });
      if (first && !last && received >= high) {
        last = this.mark(child, received);
        deadline = Date.now() + FINISH_TIMEOUT_MS;
      }
      if (received >= expected) break;
      if (Date.now() > deadline) {
        if (!last) throw new Error(`${child.name}: ${count(received)} of ${count(expected)} sent`);
        this.warnings.push(
          `${child.name} run ${this.runs}: ${count(received)} of ${count(expected)} received`,
        );
        break;
      }
      await sleep(pollMs);
    }
    if (first!.count === last!.count) {
      this.warnings.push(`${child.name}: 10% to 90% within one poll; raise BENCH_DELIVERIES`);
    }
    return sample(first!, last!);
  }

  private mark(child: Managed, received: number): Mark {
    const machine = machineSeconds();
    return {
      at: performance.now(),
      count: received,
      process: cpuSeconds(child.pid),
      sink: cpuSeconds(this.sink?.pid),
      machine: machine?.busy,
      steal: machine?.steal,
    };
  }

  private async healthyCount(): Promise<number> {
    return (await this.counts()).counts[HEALTHY_PATH] ?? 0;
  }

  private async counts(): Promise<SinkCounts> {
    const response = await fetch(`${this.okOrigin}/__count`);
    return (await response.json()) as SinkCounts;
  }

  /**
   * (c): the dispatcher of part `c` (nothing on its main topic; `perTier` records due in an
   * hour on each tier), settled, then measured. Part `c`'s groups are never reset: nothing
   * is consumed, so they start from the first record.
   */
  private async measureIdle(what: string, perTier: number): Promise<IdleSample> {
    const s = this.settings;
    progress(`(c) ${what}: settling ${s.idleSettleSeconds} s`);
    await fetch(`${this.okOrigin}/__reset`, { method: 'POST' });
    const child = await this.startDispatcher('c');
    try {
      await waitForHttp(`http://127.0.0.1:${this.port}/health/ready`, child, START_TIMEOUT_MS);
      await sleep(s.idleSettleSeconds * 1000);
      progress(`(c) measuring ${s.idleSeconds} s`);
      const from = this.mark(child, 0);
      await sleep(s.idleSeconds * 1000);
      const to = this.mark(child, 0);
      if (!child.running) throw new Error(child.describeExit());
      const sent = Object.values((await this.counts()).counts).reduce((a, b) => a + b, 0);
      if (sent > 0) this.warnings.push(`(c): ${sent} requests reached the sink; none should`);
      const seconds = (to.at - from.at) / 1000;
      const tiers = this.stand.tierTopics('c').length;
      return {
        seconds,
        processCores:
          from.process === undefined || to.process === undefined
            ? undefined
            : (to.process - from.process) / seconds,
        pausedRecords: perTier * tiers,
        tiers,
      };
    } finally {
      await this.supervisor.stop(child);
    }
  }

  /** `ledgerSample`: DISPATCHER_LEDGER_SUCCESS_SAMPLE (0: successes leave no outcome record). */
  private async startDispatcher(
    part: Part,
    ledgerSample = 1,
    traces: Record<string, string> = {},
    main = DISPATCHER_MAIN,
  ): Promise<Managed> {
    const s = this.settings;
    this.port = await freePort();
    return this.startApp(`dispatcher (${part})`, main, part, {
      DISPATCHER_PORT: String(this.port),
      DISPATCHER_ALLOWED_CIDRS: '127.0.0.0/8',
      DISPATCHER_CONNECTIONS_PER_ORIGIN: String(s.connections),
      DISPATCHER_MAX_IN_FLIGHT_PER_DESTINATION: String(s.inFlight),
      DISPATCHER_REQUEST_TIMEOUT_MS: String(s.requestTimeoutMs),
      DISPATCHER_RETRY_DELAYS: s.retryDelays,
      DISPATCHER_LEDGER_SUCCESS_SAMPLE: String(ledgerSample),
      ...traces,
    });
  }

  /** The admin app with `part`'s prefix, answering /health/ready (its ledger writer runs). */
  private async startAdmin(part: Part): Promise<Managed> {
    const port = await freePort();
    const child = this.startApp(`admin (${part})`, ADMIN_MAIN, part, {
      ADMIN_PORT: String(port),
      ADMIN_TOKENS: randomBytes(24).toString('base64url'),
    });
    await waitForHttp(`http://127.0.0.1:${port}/health/ready`, child, START_TIMEOUT_MS);
    return child;
  }

  /** One of the apps from dist/, on the run's services with `part`'s prefix, and `own` variables. */
  private startApp(
    name: string,
    main: string,
    part: Part,
    own: { readonly [name: string]: string },
  ): Managed {
    const s = this.settings;
    return this.supervisor.spawn(name, process.execPath, [...s.nodeArgs, main], {
      env: {
        ...process.env,
        KAFKA_BROKERS: s.brokers,
        DATABASE_URL: s.databaseUrl,
        KAFKA_TOPIC_PREFIX: this.stand.partPrefix(part),
        KAFKA_TOPIC_PARTITIONS: String(s.partitions),
        SECRETS_ENCRYPTION_KEY: this.stand.secretsKey,
        HTTP_HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        ...own,
      },
    });
  }

  private startBare(): Managed {
    const s = this.settings;
    // The same bytes and headers the dispatcher sends: record 0 of part a, signed once here.
    const body = Buffer.from(this.stand.delivery(0, this.stand.healthy).value as string);
    const spec: BareSpec = {
      origin: this.okOrigin,
      path: HEALTHY_PATH,
      body: body.toString('utf8'),
      headers: {
        'user-agent': 'Sluice/1.0',
        'content-type': 'application/json',
        'x-signature': createHmac('sha1', this.stand.secret).update(body).digest('hex'),
      },
      connections: s.connections,
      concurrency: s.inFlight,
      requests: s.deliveries,
    };
    return this.supervisor.spawn(
      'bare undici loop',
      process.execPath,
      [...s.nodeArgs, BARE_LOOP, JSON.stringify(spec)],
      {},
    );
  }

  /** Group offsets can be set only once the stopped dispatcher has left its groups. */
  private async retrying(step: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await step();
      } catch (error) {
        if (attempt >= 40) throw error;
        await sleep(250);
      }
    }
  }
}

function sample(first: Mark, last: Mark): Sample {
  const seconds = (last.at - first.at) / 1000;
  const requests = last.count - first.count;
  const cores = (from?: number, to?: number) =>
    from === undefined || to === undefined || seconds <= 0 ? undefined : (to - from) / seconds;
  const processCores = cores(first.process, last.process);
  return {
    perSecond: requests / seconds,
    seconds,
    processCores,
    sinkCores: cores(first.sink, last.sink),
    machineCores: cores(first.machine, last.machine),
    stealCores: cores(first.steal, last.steal),
    cpuUsPerRequest:
      processCores === undefined ? undefined : ((processCores * seconds) / requests) * 1e6,
  };
}

runBench(new DispatcherBench(readSettings(process.env)));
