/**
 * The chaos suite (`npm run chaos`, docs/operations.md "Chaos suite"): the four apps as
 * separate processes against a Kafka broker and a PostgreSQL cluster of the suite's own, an
 * open-loop sender and a signature-checking receiver on loopback, and one fault at a time.
 * For each fault it prints what was acknowledged, delivered, lost and duplicated, how long
 * until deliveries flowed again, and what each app's readiness said meanwhile.
 *
 * Settings (environment): CHAOS_FAULTS (`all`, `short`, or a comma list of fault ids),
 * CHAOS_RATE calls/s (100), CHAOS_BROKER_DOWN_SECONDS (20), CHAOS_POSTGRES_DOWN_SECONDS (30),
 * CHAOS_RECEIVER_DOWN_SECONDS (20), CHAOS_JSON (a file to write the results to), CHAOS_LOG_DIR (a folder for each app's log).
 */
import { writeFileSync } from 'node:fs';

import { progress, runBench } from '../common.mts';
import { type AppName, Apps, APPS, ReadinessWatch } from './apps.mts';
import { DRAIN_TIMEOUT_MS, drained, firstDelivery, recovered } from './phases.mts';
import { type ChaosReport, type PhaseTimes, results, resultsTable } from './results.mts';
import { kafkaLibs, Stand } from './stand.mts';
import { Sender, sleep } from './traffic.mts';

/** Steady traffic before each fault. */
const LEAD_MS = 5_000;
/** Steady traffic after deliveries flow again, before the next fault. */
const TAIL_MS = 3_000;
/** The whole suite stops starting faults past this (it must end within 15 minutes). */
const BUDGET_MS = 13 * 60_000;

/** A fault: what it does; resolves with the time the service it took away is back. */
interface Fault {
  readonly id: string;
  readonly name: string;
  act(): Promise<number>;
}

interface Settings {
  readonly faults: string;
  readonly rate: number;
  readonly brokerDownMs: number;
  readonly postgresDownMs: number;
  readonly receiverDownMs: number;
  readonly jsonFile?: string;
  readonly kafkaLibs: string;
}

function settings(env: NodeJS.ProcessEnv): Settings {
  const seconds = (name: string, fallback: number) => Number(env[name] ?? fallback) * 1_000;
  return {
    faults: env.CHAOS_FAULTS ?? 'all',
    rate: Number(env.CHAOS_RATE ?? 100),
    brokerDownMs: seconds('CHAOS_BROKER_DOWN_SECONDS', 20),
    postgresDownMs: seconds('CHAOS_POSTGRES_DOWN_SECONDS', 30),
    receiverDownMs: seconds('CHAOS_RECEIVER_DOWN_SECONDS', 20),
    jsonFile: env.CHAOS_JSON,
    kafkaLibs: kafkaLibs(env),
  };
}

class ChaosSuite {
  private readonly s: Settings;
  private readonly stand: Stand;

  constructor(s: Settings) {
    this.s = s;
    this.stand = new Stand('chaos', s.kafkaLibs, {
      KAFKA_TOPIC_PARTITIONS: '3',
      // Short tiers, so a receiver back after 20 s gets its retries within seconds.
      DISPATCHER_RETRY_DELAYS: '2s,5s,10s',
    });
  }

  private get receiver() {
    return this.stand.receiver;
  }

  async run(): Promise<ChaosReport> {
    const started = Date.now();
    const writeKey = await this.stand.setUp();
    const apps = this.stand.apps;
    const sender = new Sender(() => apps.url('ingest'), writeKey, this.s.rate);
    await firstDelivery(sender, this.receiver);
    const phases: PhaseTimes[] = [];
    const faults = this.faults(apps);
    sender.start();
    for (const [index, fault] of faults.entries()) {
      if (Date.now() - started > BUDGET_MS) {
        progress(`time budget spent: ${fault.name} and the faults after it are skipped`);
        break;
      }
      sender.phase = index + 1;
      phases.push(await this.phase(apps, sender, fault));
    }
    sender.stop();
    progress('draining: every acknowledged call should arrive');
    await sender.drain(DRAIN_TIMEOUT_MS);
    await drained(sender, this.receiver);
    return results(phases, sender, this.receiver);
  }

  tearDown(): Promise<void> {
    return this.stand.tearDown();
  }

  killNow(): void {
    this.stand.killNow();
  }

  private faults(apps: Apps): Fault[] {
    const restart = (app: AppName, how: 'SIGKILL' | 'SIGTERM'): Fault => ({
      id: `${how === 'SIGKILL' ? 'kill' : 'term'}-${app}`,
      name: `${how} ${app}`,
      act: async () => {
        if (how === 'SIGKILL') await apps.kill(app);
        else await apps.terminate(app);
        const back = Date.now();
        await apps.start(app);
        return back;
      },
    });
    const outage = (
      id: string,
      name: string,
      downMs: number,
      service: { stop(): Promise<void>; start(): Promise<void> },
    ): Fault => ({
      id,
      name: `${name} down ${downMs / 1_000} s`,
      act: async () => {
        await service.stop();
        await sleep(downMs);
        await service.start();
        return Date.now();
      },
    });
    const all: Fault[] = [
      ...APPS.flatMap((app) => [restart(app, 'SIGKILL'), restart(app, 'SIGTERM')]),
      outage('broker', 'broker', this.s.brokerDownMs, this.stand.broker),
      outage('postgres', 'PostgreSQL', this.s.postgresDownMs, this.stand.postgres),
      outage('receiver', 'receiver', this.s.receiverDownMs, this.receiver),
    ];
    const wanted =
      this.s.faults === 'all'
        ? all.map((f) => f.id)
        : this.s.faults === 'short'
          ? ['kill-dispatcher', 'broker']
          : this.s.faults.split(',').map((id) => id.trim());
    const unknown = wanted.filter((id) => !all.some((f) => f.id === id));
    if (unknown.length > 0) throw new Error(`CHAOS_FAULTS: unknown fault(s) ${unknown.join(', ')}`);
    return wanted.map((id) => all.find((f) => f.id === id)!);
  }

  /** Steady traffic, the fault, and traffic until deliveries of new calls flow again. */
  private async phase(apps: Apps, sender: Sender, fault: Fault): Promise<PhaseTimes> {
    const phaseStart = Date.now();
    progress(`${fault.name}`);
    await sleep(LEAD_MS);
    const readiness = new ReadinessWatch(apps);
    readiness.start();
    const faultStart = Date.now();
    const faultEnd = await fault.act();
    const recoveredAt = await recovered(sender, this.receiver, faultEnd);
    await sleep(TAIL_MS);
    const ready = await readiness.stop();
    for (const { app } of apps.crashed()) {
      progress(`  ${app} stopped by itself; started again\n${apps.lastOutput(app)}`);
      await apps.start(app);
    }
    return {
      id: fault.id,
      name: fault.name,
      phaseStart,
      faultStart,
      faultEnd,
      recoveredAt,
      readiness: ready,
    };
  }
}

function main(): void {
  const chaos = settings(process.env);
  const suite = new ChaosSuite(chaos);
  runBench({
    supervisor: { killAllNow: () => suite.killNow() },
    stand: suite,
    async run() {
      const report = await suite.run();
      if (chaos.jsonFile) writeFileSync(chaos.jsonFile, JSON.stringify(report, null, 2));
      return resultsTable(report, chaos.rate);
    },
  });
}

// `npm run chaos -- --cluster`: the three-broker stand (cluster.mts) instead.
if (process.argv.includes('--cluster')) await import('./cluster.mts');
else main();
