/**
 * How the pipeline bench measures: the CPU of its processes sampled through a phase, so it
 * can be read between any two moments (the 10% and 90% marks of a phase's deliveries), the
 * marks themselves, progress polled from Kafka, and the apps' Kafka request counters.
 */
import { readdirSync, readFileSync } from 'node:fs';

import { cpuSeconds, machineBusySeconds } from './processes.mts';

/** How often the CPU of every measured process is read. */
const SAMPLE_MS = 50;
/** The marks between which a phase is measured, as shares of its deliveries. */
export const FROM_MARK = 0.1;
export const TO_MARK = 0.9;

interface CpuSample {
  readonly at: number;
  /** Per process name: its pid then and its CPU seconds so far. */
  readonly cpu: Map<string, { pid: number; seconds: number }>;
  readonly machine: number;
}

/** A process, or only those of its threads whose names match `threads`. */
export type Watched = number | undefined | { readonly pid?: number; readonly threads: RegExp };

/** How often the thread lists of {@link Watched} thread groups are read again. */
const THREAD_SCAN_MS = 5_000;

/**
 * Reads the CPU of named processes (or groups of their threads) every 50 ms. A process
 * restarted between two moments (a new pid) has no figure for them.
 */
export class CpuSampler {
  private readonly samples: CpuSample[] = [];
  private timer?: NodeJS.Timeout;
  /** The matching thread ids of each watched thread group, by `pid:pattern`, and when read. */
  private readonly threadIds = new Map<string, { at: number; ids: string[] }>();

  private readonly pids: () => Record<string, Watched>;

  constructor(pids: () => Record<string, Watched>) {
    this.pids = pids;
  }

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Drops the samples older than `before` (a long run keeps only what it still reads). */
  forget(before: number): void {
    const keep = this.samples.findIndex((s) => s.at >= before - SAMPLE_MS * 2);
    if (keep > 0) this.samples.splice(0, keep);
  }

  /** CPU seconds each process used between `from` and `to` (linear between samples). */
  between(from: number, to: number): { perProcess: Map<string, number>; machine: number } {
    this.sample();
    const a = this.at(from);
    const b = this.at(to);
    const perProcess = new Map<string, number>();
    for (const [name, end] of b.cpu) {
      const start = a.cpu.get(name);
      perProcess.set(
        name,
        start !== undefined && start.pid === end.pid ? end.seconds - start.seconds : NaN,
      );
    }
    return { perProcess, machine: b.machine - a.machine };
  }

  /** The CPU at a moment, interpolated between the samples around it. */
  private at(moment: number): CpuSample {
    const after = this.samples.findIndex((s) => s.at >= moment);
    if (after <= 0) return this.samples[Math.max(after, 0)];
    const [x, y] = [this.samples[after - 1], this.samples[after]];
    const share = (moment - x.at) / (y.at - x.at);
    const cpu = new Map<string, { pid: number; seconds: number }>();
    for (const [name, late] of y.cpu) {
      const early = x.cpu.get(name);
      if (early === undefined || early.pid !== late.pid) cpu.set(name, late);
      else cpu.set(name, { pid: late.pid, seconds: lerp(early.seconds, late.seconds, share) });
    }
    return { at: moment, cpu, machine: lerp(x.machine, y.machine, share) };
  }

  private sample(): void {
    const cpu = new Map<string, { pid: number; seconds: number }>();
    for (const [name, watched] of Object.entries(this.pids())) {
      const pid = typeof watched === 'object' ? watched.pid : watched;
      const seconds =
        typeof watched === 'object' ? this.threadSeconds(pid, watched.threads) : cpuSeconds(pid);
      if (pid !== undefined && seconds !== undefined) cpu.set(name, { pid, seconds });
    }
    this.samples.push({ at: Date.now(), cpu, machine: machineBusySeconds() ?? NaN });
  }

  /**
   * CPU seconds of a process's threads named like `pattern`. Their list is read every 5 s,
   * since reading a hundred threads' names blocks the sender and the receiver of this process
   * (a thread that ended since takes its seconds with it: the figure can only fall short).
   */
  private threadSeconds(pid: number | undefined, pattern: RegExp): number | undefined {
    if (pid === undefined) return undefined;
    const key = `${pid}:${pattern.source}`;
    let found = this.threadIds.get(key);
    if (!found || Date.now() - found.at > THREAD_SCAN_MS) {
      try {
        const ids = readdirSync(`/proc/${pid}/task`).filter((tid) => {
          try {
            return pattern.test(readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim());
          } catch {
            return false;
          }
        });
        found = { at: Date.now(), ids };
        this.threadIds.set(key, found);
      } catch {
        return undefined;
      }
    }
    let seconds = 0;
    for (const tid of found.ids) seconds += cpuSeconds(`${pid}/task/${tid}`) ?? 0;
    return seconds;
  }
}

function lerp(a: number, b: number, share: number): number {
  return a + (b - a) * share;
}

/** A phase's measuring window: from its 10% mark to its 90% mark. */
export interface Marks {
  readonly from: number;
  readonly to: number;
  /** Deliveries (calls handled) between the marks. */
  readonly count: number;
}

/** The marks of a phase whose `times` (sorted) are when each of its calls was handled. */
export function marksOf(times: readonly number[]): Marks | undefined {
  const first = Math.floor(times.length * FROM_MARK);
  const last = Math.ceil(times.length * TO_MARK) - 1;
  if (last <= first) return undefined;
  return { from: times[first], to: times[last], count: last - first };
}

/**
 * Progress read by polling (records routed, offsets committed), and when it reached a given
 * count, interpolated between polls.
 */
export class ProgressPoll {
  private readonly seen: { at: number; done: number }[] = [];
  private active = false;
  private loop?: Promise<void>;

  private readonly read: () => Promise<number>;
  private readonly everyMs: number;

  constructor(read: () => Promise<number>, everyMs = SAMPLE_MS) {
    this.read = read;
    this.everyMs = everyMs;
  }

  start(): void {
    this.active = true;
    this.loop = (async () => {
      while (this.active) {
        try {
          this.seen.push({ at: Date.now(), done: await this.read() });
        } catch {
          // a failed read is simply made again
        }
        await new Promise((resolve) => setTimeout(resolve, this.everyMs));
      }
    })();
  }

  async stop(): Promise<void> {
    this.active = false;
    await this.loop;
  }

  get done(): number {
    return this.seen[this.seen.length - 1]?.done ?? 0;
  }

  /** When progress first reached `count`; undefined when it never did. */
  timeOf(count: number): number | undefined {
    const i = this.seen.findIndex((s) => s.done >= count);
    if (i < 0) return undefined;
    if (i === 0) return this.seen[0].at;
    const [x, y] = [this.seen[i - 1], this.seen[i]];
    return lerp(x.at, y.at, (count - x.done) / (y.done - x.done));
  }

  /** The marks for `total` calls whose progress this polled. */
  marks(total: number): Marks | undefined {
    const from = this.timeOf(total * FROM_MARK);
    const to = this.timeOf(total * TO_MARK);
    if (from === undefined || to === undefined || to <= from) return undefined;
    return { from, to, count: total * (TO_MARK - FROM_MARK) };
  }
}

/** The `q` quantile of sorted values. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** `sluice_kafka_requests_total` of an app's /metrics, by API. */
export async function kafkaRequests(appUrl: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  try {
    const text = await (
      await fetch(`${appUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })
    ).text();
    for (const match of text.matchAll(/^sluice_kafka_requests_total\{([^}]*)\} (\S+)$/gm)) {
      const api = /api="([^"]*)"/.exec(match[1])?.[1];
      if (api !== undefined) out.set(api, (out.get(api) ?? 0) + Number(match[2]));
    }
  } catch {
    // an app that does not answer has no figures
  }
  return out;
}

/** `after - before`, API by API. */
export function requestsBetween(
  before: Map<string, number>,
  after: Map<string, number>,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const [api, n] of after) out.set(api, n - (before.get(api) ?? 0));
  return out;
}
