/**
 * The router benchmark (docs/performance.md): calls/s the router app routes from a pre-filled
 * `sluice.calls.v1` to `sluice.deliveries.v1`, divided by the records/s of a bare kafkajs
 * consume-and-produce loop (bench/router-bare.mts) moving the same records between the same
 * kind of topics, measured in the same run, A/B runs interleaved, medians printed.
 *
 * Run through `npm run bench:router` (bench/run.sh builds, starts the services, migrates).
 * Settings are described in bench/ROUTER.md.
 */
import {
  cpuSeconds,
  freePort,
  machineBusySeconds,
  type Managed,
  sleep,
  Supervisor,
} from './processes.mts';
import { progress, runBench } from './common.mts';
import { count, fixed } from './report.mts';
import type { BareSpec } from './router-bare.mts';
import {
  readSettings,
  routerReport,
  type Sample,
  type Series,
  type Settings,
} from './router-report.mts';
import { FILTERED_DESTINATIONS, RouterStand } from './router-stand.mts';

const ROUTER_MAIN = 'dist/apps/router/src/main.js';
const BARE_LOOP = 'bench/router-bare.mts';
/** How often the deliveries' end offsets are read while a run is measured. */
const POLL_MS = 20;
/** Longest wait for a run's first delivery (process start-up and group join included). */
const START_TIMEOUT_MS = 60_000;
/** Longest wait, after the last delivery, for the group to commit the last offsets. */
const COMMIT_TIMEOUT_MS = 30_000;

interface Mark {
  readonly at: number;
  readonly count: number;
  readonly process?: number;
  readonly broker?: number;
  readonly machine?: number;
}

/**
 * The router as configured (de-duplication on), with it off, with the filtered destinations
 * enabled beside the plain one, and the bare loop.
 */
type Side = 'router' | 'router-nodedup' | 'router-filters' | 'bare';

class RouterBench {
  readonly supervisor = new Supervisor();
  readonly stand: RouterStand;
  private readonly settings: Settings;
  private readonly warnings: string[] = [];
  private fillPerSecond = 0;
  private runs = 0;

  constructor(settings: Settings) {
    this.settings = settings;
    this.stand = new RouterStand(settings, this.supervisor);
  }

  /** Sets up, measures, and returns the report (the caller tears down). */
  async run(): Promise<string> {
    const s = this.settings;
    progress(
      `setting up (topic prefix ${this.stand.prefix}), pre-filling ${count(s.records)} calls`,
    );
    this.fillPerSecond = await this.stand.setUp();
    progress(`pre-filled at ${count(this.fillPerSecond)} records/s`);
    const series: Record<Side, Series> = {
      router: { label: 'router calls/s (de-duplication on)', samples: [] },
      'router-nodedup': { label: 'router calls/s, de-duplication off', samples: [] },
      'router-filters': {
        label: `router calls/s, ${FILTERED_DESTINATIONS} filtered destinations beside`,
        samples: [],
      },
      bare: { label: 'bare kafkajs loop records/s', samples: [] },
    };
    const sides: Side[] = ['router', 'router-nodedup', 'router-filters', 'bare'];
    for (let round = 1; round <= s.warmupRounds; round += 1) {
      progress(`warm-up round ${round}/${s.warmupRounds} (not counted)`);
      for (const side of sides) await this.measure(side);
    }
    for (let round = 1; round <= s.rounds; round += 1) {
      progress(`round ${round}/${s.rounds}`);
      // Rotating the order every round keeps a drift of the shared machine from favouring a side.
      const order = sides.map((_, i) => sides[(i + round - 1) % sides.length]);
      for (const side of order) series[side].samples.push(await this.measure(side));
    }
    return routerReport({
      settings: s,
      router: series.router,
      routerNoDedup: series['router-nodedup'],
      routerFilters: series['router-filters'],
      filteredDestinations: FILTERED_DESTINATIONS,
      bare: series.bare,
      shape: this.stand.shape,
      fillPerSecond: this.fillPerSecond,
      warnings: this.warnings,
      pollMs: POLL_MS,
    });
  }

  /** One run of one side over every record of the calls topic, from a fresh group. */
  private async measure(side: Side): Promise<Sample> {
    this.runs += 1;
    const isRouter = side !== 'bare';
    const target = isRouter ? this.stand.deliveriesTopic : this.stand.bareTopic;
    const groupId = isRouter ? this.stand.routerGroup : `${this.stand.prefix}bare-${this.runs}`;
    const base = await this.stand.recordsOn(target);
    await this.stand.filtered(side === 'router-filters');
    const child = isRouter
      ? await this.startRouter(side === 'router-nodedup' ? '0' : undefined)
      : this.startBare(groupId);
    try {
      const [first, last] = await this.window(child, target, base);
      await this.waitForCommits(child, groupId);
      const sample = this.sample(first, last);
      const moved = (await this.stand.recordsOn(target)) - base;
      if (moved !== this.settings.records) {
        this.warnings.push(
          `${side} run ${this.runs}: ${count(moved)} records produced for ` +
            `${count(this.settings.records)} calls`,
        );
      }
      progress(
        `  ${side}: ${count(sample.perSecond)}/s over ${sample.seconds.toFixed(2)} s, ` +
          `${fixed(sample.processCores ?? NaN, 2)} cores, ` +
          `${fixed(sample.cpuUsPerRecord ?? NaN, 1)} µs CPU/record`,
      );
      return sample;
    } finally {
      await this.supervisor.stop(child);
      // The router's group id is fixed by its prefix: removed, so the next run starts fresh.
      if (isRouter) await this.deleteGroup(groupId);
    }
  }

  /** Marks the first poll that sees a delivery and the one that sees all of them. */
  private async window(child: Managed, topic: string, base: number): Promise<[Mark, Mark]> {
    const records = this.settings.records;
    const startDeadline = Date.now() + START_TIMEOUT_MS;
    let first: Mark | undefined;
    for (;;) {
      if (!child.running) throw new Error(child.describeExit());
      const moved = (await this.stand.recordsOn(topic)) - base;
      if (moved > 0 && !first) first = this.mark(child, moved);
      if (first && moved >= records) return [first, this.mark(child, moved)];
      if (!first && Date.now() > startDeadline) {
        throw new Error(`${child.name} produced nothing within ${START_TIMEOUT_MS} ms`);
      }
      await sleep(POLL_MS);
    }
  }

  private mark(child: Managed, moved: number): Mark {
    return {
      at: performance.now(),
      count: moved,
      process: cpuSeconds(child.pid),
      broker: cpuSeconds(this.settings.brokerPid),
      machine: machineBusySeconds(),
    };
  }

  private sample(first: Mark, last: Mark): Sample {
    const seconds = (last.at - first.at) / 1000;
    const records = last.count - first.count;
    const cores = (from?: number, to?: number) =>
      from === undefined || to === undefined || seconds <= 0 ? undefined : (to - from) / seconds;
    const processCores = cores(first.process, last.process);
    return {
      perSecond: records / seconds,
      seconds,
      processCores,
      brokerCores: cores(first.broker, last.broker),
      machineCores: cores(first.machine, last.machine),
      cpuUsPerRecord:
        processCores === undefined ? undefined : ((processCores * seconds) / records) * 1e6,
    };
  }

  /** Everything delivered is also committed before the process is stopped (lag 0). */
  private async waitForCommits(child: Managed, groupId: string): Promise<void> {
    const deadline = Date.now() + COMMIT_TIMEOUT_MS;
    while ((await this.stand.lag(groupId)) > 0) {
      if (!child.running) throw new Error(child.describeExit());
      if (Date.now() > deadline) {
        this.warnings.push(`${child.name} run ${this.runs}: offsets not all committed`);
        return;
      }
      await sleep(POLL_MS * 5);
    }
  }

  private async deleteGroup(groupId: string): Promise<void> {
    // The group is empty once the stopped consumer has left; give the coordinator a moment.
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.stand.deleteGroup(groupId);
        return;
      } catch (error) {
        if (attempt >= 20) throw error;
        await sleep(250);
      }
    }
  }

  /**
   * The router process; `dedupWindowSeconds` '0' turns its de-duplication off (by default it
   * is the app's default). Every run starts from offset 0 with a fresh process, so the
   * de-duplicating router reads nothing back: the cost measured is the per-call check.
   */
  private async startRouter(dedupWindowSeconds?: string): Promise<Managed> {
    const s = this.settings;
    const port = await freePort();
    return this.supervisor.spawn('router', process.execPath, [...s.nodeArgs, ROUTER_MAIN], {
      env: {
        ...process.env,
        KAFKA_BROKERS: s.brokers,
        DATABASE_URL: s.databaseUrl,
        KAFKA_TOPIC_PREFIX: this.stand.prefix,
        KAFKA_TOPIC_PARTITIONS: String(s.partitions),
        ROUTER_PORT: String(port),
        ROUTER_PARTITIONS_CONCURRENTLY: String(s.partitionsConcurrently),
        ROUTER_MAX_IN_FLIGHT: String(s.maxInFlight),
        ...(dedupWindowSeconds === undefined
          ? {}
          : { ROUTER_DEDUP_WINDOW_SECONDS: dedupWindowSeconds }),
        HTTP_HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
      },
    });
  }

  private startBare(groupId: string): Managed {
    const spec: BareSpec = {
      brokers: this.settings.brokers,
      groupId,
      sourceTopic: this.stand.callsTopic,
      targetTopic: this.stand.bareTopic,
      destinationId: this.stand.destinationId,
      partitionsConcurrently: this.settings.partitionsConcurrently,
    };
    return this.supervisor.spawn(
      'bare kafkajs loop',
      process.execPath,
      [
        '--disable-warning=TimeoutNegativeWarning',
        ...this.settings.nodeArgs,
        BARE_LOOP,
        JSON.stringify(spec),
      ],
      {},
    );
  }
}

runBench(new RouterBench(readSettings(process.env)));
