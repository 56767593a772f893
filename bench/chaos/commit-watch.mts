/**
 * Watches the stand's consumer groups' committed offsets against their topics' end offsets, so
 * that a group whose commits stop advancing while its deliveries flow (a stall nobody sees
 * until a rebalance hands its partitions to another member, which handles everything since
 * the last commit again) shows at the phase where it starts, not as a burst of duplicates
 * later. It reads the offsets every few seconds in the background, and each check (after a
 * phase's catch-up) sums every group's lag and names the partitions whose commit stood still
 * while records waited behind it.
 */
import kafkajs, { type Admin } from 'kafkajs';

import { progress } from '../common.mts';

/** Pause between two reads of the offsets. */
const POLL_MS = 2_000;
/**
 * A partition whose committed offset stood still this long with records behind it, after the
 * pipeline caught up, has stalled (a healthy one commits within a fraction of a second).
 */
export const STALL_MS = 20_000;
/** During a fault commits may fail for a while; only a longer stall is reported at once. */
const LIVE_STALL_MS = 60_000;

/** One partition as last read: the group's commit and the topic's end. */
export interface PartitionCommitState {
  readonly group: string;
  readonly topic: string;
  readonly partition: number;
  readonly committed: bigint;
  readonly end: bigint;
  /** When the committed offset last changed (or was first read). */
  readonly movedAt: number;
}

/** A partition's state after a read: `movedAt` kept while the commit stood still. */
export function nextState(
  before: PartitionCommitState | undefined,
  read: Omit<PartitionCommitState, 'movedAt'>,
  now: number,
): PartitionCommitState {
  const moved = before === undefined || before.committed !== read.committed;
  return { ...read, movedAt: moved ? now : before.movedAt };
}

/** Whether a partition's commit stood still for `stallMs` or more with records behind it. */
export function stalled(state: PartitionCommitState, now: number, stallMs: number): boolean {
  return state.end > state.committed && now - state.movedAt >= stallMs;
}

/** One group's lag in records, and its stalled partitions (`topic[p]`). */
export interface GroupLag {
  readonly group: string;
  readonly lag: bigint;
  readonly stalls: readonly PartitionCommitState[];
}

/** Every group's lag and stalls, from the partitions' states. */
export function groupLags(
  states: Iterable<PartitionCommitState>,
  now: number,
  stallMs: number,
): GroupLag[] {
  const groups = new Map<string, { lag: bigint; stalls: PartitionCommitState[] }>();
  for (const state of states) {
    const entry = groups.get(state.group) ?? { lag: 0n, stalls: [] };
    entry.lag += state.end > state.committed ? state.end - state.committed : 0n;
    if (stalled(state, now, stallMs)) entry.stalls.push(state);
    groups.set(state.group, entry);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, { lag, stalls }]) => ({ group, lag, stalls }));
}

/** A stalled partition in words: where its commit stands and for how long. */
export function describeStall(state: PartitionCommitState, now: number): string {
  const behind = state.end - state.committed;
  const since = new Date(state.movedAt).toISOString().slice(11, 19);
  const seconds = Math.round((now - state.movedAt) / 1_000);
  return `${state.topic}[${state.partition}] committed ${state.committed}, end ${state.end} (${behind} behind), unchanged for ${seconds} s (since ${since} UTC)`;
}

/**
 * A partition whose committed offset went back between two reads: commits the group had made
 * are gone (its coordinator lost them), and the partition's owner will handle again
 * everything from there.
 */
export function describeRegression(
  before: PartitionCommitState,
  after: PartitionCommitState,
): string {
  const at = new Date(after.movedAt).toISOString().slice(11, 19);
  const back = before.committed - after.committed;
  return `${after.topic}[${after.partition}] committed ${before.committed}, then ${after.committed} at ${at} UTC (${back} records back)`;
}

export class CommitWatch {
  private readonly admin: Admin;
  private readonly states = new Map<string, PartitionCommitState>();
  /** Partitions already reported as stalled during a fault (each once per stall). */
  private readonly told = new Set<string>();
  /** Committed offsets seen going back since the last check (a rebalance then replays). */
  private wentBack: string[] = [];
  private timer?: NodeJS.Timeout;
  private reading?: Promise<void>;
  private connected = false;
  private readonly prefix: string;

  /** @param prefix the stand's topic prefix, which its groups' ids share */
  constructor(brokers: string, prefix: string) {
    this.prefix = prefix;
    this.admin = new kafkajs.Kafka({
      clientId: 'sluice-chaos-commit-watch',
      brokers: brokers.split(','),
      logLevel: kafkajs.logLevel.NOTHING,
      requestTimeout: 5_000,
      retry: { retries: 1, initialRetryTime: 200, maxRetryTime: 1_000 },
    }).admin();
  }

  /** Reads the offsets every {@link POLL_MS} in the background. */
  start(): void {
    this.timer = setInterval(() => void this.poll(), POLL_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.reading;
    if (this.connected) await this.admin.disconnect().catch(() => undefined);
  }

  /**
   * Reads the offsets now and answers the lines for the report: each group's lag and every
   * partition that stalled. Call once the pipeline caught up (deliveries flow).
   */
  async check(label: string): Promise<string[]> {
    await this.poll();
    const now = Date.now();
    const lags = groupLags(this.states.values(), now, STALL_MS);
    const shortName = (group: string) => group.slice(this.prefix.length);
    const lines = [
      `commits ${label}: ${lags.map((g) => `${shortName(g.group)} lag ${g.lag}`).join(', ') || 'no group read'}`,
      ...lags.flatMap((g) =>
        g.stalls.map((s) => `COMMITS STALLED: ${shortName(g.group)} ${describeStall(s, now)}`),
      ),
    ];
    for (const line of lines) progress(`  ${line}`);
    // Printed when seen; the report has them with the phase's notes.
    return [...lines, ...this.wentBack.splice(0)];
  }

  /** One read of every group's commits and its topics' ends; a failed read is skipped. */
  private poll(): Promise<void> {
    this.reading ??= this.read()
      .catch(() => undefined)
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }

  private async read(): Promise<void> {
    if (!this.connected) {
      await this.admin.connect();
      this.connected = true;
    }
    const { groups } = await this.admin.listGroups();
    const ids = groups.map((g) => g.groupId).filter((id) => id.startsWith(this.prefix));
    const ends = new Map<string, Map<number, bigint>>();
    for (const group of ids) {
      const commits = await this.admin.fetchOffsets({ groupId: group });
      for (const { topic, partitions } of commits) {
        if (!ends.has(topic)) ends.set(topic, await this.ends(topic));
        for (const { partition, offset } of partitions) {
          if (offset === '-1') continue;
          this.update(group, topic, partition, BigInt(offset), ends.get(topic)?.get(partition));
        }
      }
    }
  }

  private async ends(topic: string): Promise<Map<number, bigint>> {
    const offsets = await this.admin.fetchTopicOffsets(topic);
    return new Map(offsets.map((o) => [o.partition, BigInt(o.high)]));
  }

  private update(
    group: string,
    topic: string,
    partition: number,
    committed: bigint,
    end: bigint | undefined,
  ): void {
    if (end === undefined) return;
    const key = `${group}|${topic}|${partition}`;
    const now = Date.now();
    const before = this.states.get(key);
    const state = nextState(before, { group, topic, partition, committed, end }, now);
    this.states.set(key, state);
    if (before !== undefined && committed < before.committed) {
      const line = `COMMITS WENT BACK: ${group.slice(this.prefix.length)} ${describeRegression(before, state)}`;
      this.wentBack.push(line);
      progress(`  ${line}`);
    }
    if (state.movedAt === now) this.told.delete(key);
    else if (stalled(state, now, LIVE_STALL_MS) && !this.told.has(key)) {
      this.told.add(key);
      progress(
        `  commits stand still: ${group.slice(this.prefix.length)} ${describeStall(state, now)}`,
      );
    }
  }
}
