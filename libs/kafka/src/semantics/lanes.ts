/**
 * A 32-bit FNV-1a hash of a record's key, naming the lane its records run in, one at a time;
 * undefined without a key. Hashing costs less than making a string of the key per record.
 */
export function laneOf(key: Buffer | null): number | undefined {
  if (key === null) return undefined;
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) hash = Math.imul(hash ^ key[i], 0x01000193);
  return hash >>> 0;
}

/**
 * Keys with a record running (or holding its lane), by a hash of the key ({@link laneOf}), with
 * the records of that key waiting behind it in order. Two keys with one hash share a lane: they
 * run one after the other, which keeps each key's order. Records waiting in lines hold no slot.
 */
export class Lanes<T> {
  /** By lane, the records waiting behind the running one (null when none waits). */
  private readonly lines = new Map<number, T[] | null>();
  private waitingCount = 0;

  /** Records waiting in the lines. */
  get queued(): number {
    return this.waitingCount;
  }

  /** Whether no record of any lane is running. */
  get empty(): boolean {
    return this.lines.size === 0;
  }

  /** Whether a record of `lane` is running: a later one of it must wait in its line. */
  has(lane: number): boolean {
    return this.lines.has(lane);
  }

  /** A record of `lane` runs: its key's later records line up behind it. */
  open(lane: number): void {
    this.lines.set(lane, null);
  }

  /**
   * Lines a record up behind the records of its lane admitted before it.
   * @returns how many records now wait in the lane
   */
  enqueue(lane: number, item: T): number {
    this.waitingCount += 1;
    const waiting = this.lines.get(lane);
    if (waiting) waiting.push(item);
    else this.lines.set(lane, [item]);
    return waiting?.length ?? 1;
  }

  /** How many records wait in `lane`. */
  waiting(lane: number): number {
    return this.lines.get(lane)?.length ?? 0;
  }

  /** Takes the next record of a lane off its line; the lane ends when none waits. */
  next(lane: number): T | undefined {
    const waiting = this.lines.get(lane);
    const next = waiting?.shift();
    if (next === undefined) {
      this.lines.delete(lane);
      return undefined;
    }
    if (waiting!.length === 0) this.lines.set(lane, null);
    this.waitingCount -= 1;
    return next;
  }

  /**
   * Ends a lane with the records waiting in it (they will be read again).
   * @returns how many records waited in it
   */
  drop(lane: number): number {
    const dropped = this.lines.get(lane)?.length ?? 0;
    this.waitingCount -= dropped;
    this.lines.delete(lane);
    return dropped;
  }

  /** Ends every lane (the partition is read again from a failed record). */
  clear(): void {
    this.lines.clear();
    this.waitingCount = 0;
  }
}
