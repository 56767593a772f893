/**
 * The (source, user, messageId) keys one partition of the calls topic saw within a time window, as
 * 64-bit fingerprints in open-addressing tables of typed arrays (16 bytes a slot, no object per
 * entry), one table per slice of the window so that expiry drops whole tables.
 */

/** Slices of the window: an entry lives between the window and 1.25 times it. */
const SLICES = 4;
/** A table grows (doubling) past this share of its slots in use. */
const MAX_LOAD = 0.7;
const FIRST_CAPACITY = 1_024;

/** What a call's fingerprint met. */
export type SeenVerdict =
  /** Not seen within the window: the call is routed (and now seen). */
  | 'first'
  /** Seen at this very offset: the same record handled again (a replay), routed again. */
  | 'again'
  /** Seen at another offset within the window: a duplicate, not routed. */
  | 'duplicate';

/**
 * Two seeded 32-bit murmur3 hashes of a call's `messageId` (UTF-8 bytes), each seeded with its
 * own seed mixed with a hash of `caller` (the record key, source and user), written to `out` as
 * [high, low]. The seeds come from the process's randomness, so nobody can craft a messageId
 * that collides with another caller's call.
 */
export function fingerprint(
  seeds: readonly [number, number],
  caller: Buffer,
  messageId: Buffer,
  out: Uint32Array,
): void {
  out[0] = murmur3(murmur3(seeds[0], caller), messageId);
  out[1] = murmur3(murmur3(seeds[1], caller), messageId);
}

/** murmur3_32 (x86) of `data` with `seed`, unsigned. */
function murmur3(seed: number, data: Buffer): number {
  let h = seed | 0;
  const length = data.length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    h ^= mixK(data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24));
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  const rest = length & 3;
  if (rest === 3) k ^= data[whole + 2] << 16;
  if (rest >= 2) k ^= data[whole + 1] << 8;
  if (rest >= 1) h ^= mixK(k ^ data[whole]);
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function mixK(k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, 0x1b873593);
}

/**
 * A set of 64-bit fingerprints, each with the offset of the record it was first seen in.
 * Linear probing; a slot whose fingerprint is 0 is empty (a real 0 is stored as 1: one in
 * 2^64 calls shares a slot with another for it).
 */
export class FingerprintTable {
  private keys: Uint32Array;
  private offsets: Float64Array;
  private mask: number;
  size = 0;

  constructor(capacity = FIRST_CAPACITY) {
    this.keys = new Uint32Array(capacity * 2);
    this.offsets = new Float64Array(capacity);
    this.mask = capacity - 1;
  }

  /** Bytes its arrays take. */
  get bytes(): number {
    return this.keys.byteLength + this.offsets.byteLength;
  }

  /** The offset stored with the fingerprint, or -1 when absent. */
  find(high: number, low: number): number {
    const l = low === 0 && high === 0 ? 1 : low;
    for (let slot = this.slotOf(high, l); ; slot = (slot + 1) & this.mask) {
      const h = this.keys[slot * 2];
      const lo = this.keys[slot * 2 + 1];
      if (h === high && lo === l) return this.offsets[slot];
      if (h === 0 && lo === 0) return -1;
    }
  }

  /** Stores the fingerprint with `offset`; the caller checked it is absent. */
  add(high: number, low: number, offset: number): void {
    if ((this.size + 1) / (this.mask + 1) > MAX_LOAD) this.grow();
    this.put(high, low === 0 && high === 0 ? 1 : low, offset);
    this.size += 1;
  }

  private put(high: number, low: number, offset: number): void {
    let slot = this.slotOf(high, low);
    while (this.keys[slot * 2] !== 0 || this.keys[slot * 2 + 1] !== 0) {
      slot = (slot + 1) & this.mask;
    }
    this.keys[slot * 2] = high;
    this.keys[slot * 2 + 1] = low;
    this.offsets[slot] = offset;
  }

  private slotOf(high: number, low: number): number {
    return (high ^ Math.imul(low, 0x9e3779b1)) & this.mask;
  }

  private grow(): void {
    const { keys, offsets } = this;
    const capacity = (this.mask + 1) * 2;
    this.keys = new Uint32Array(capacity * 2);
    this.offsets = new Float64Array(capacity);
    this.mask = capacity - 1;
    for (let slot = 0; slot < offsets.length; slot += 1) {
      if (keys[slot * 2] !== 0 || keys[slot * 2 + 1] !== 0) {
        this.put(keys[slot * 2], keys[slot * 2 + 1], offsets[slot]);
      }
    }
  }
}

/**
 * The fingerprints one partition saw within `windowMs` of its newest record's time (the
 * partition's own clock: a backlog older than the window is still de-duplicated within
 * itself). Kept in tables by slice of record time; a slice is dropped once all of it is older
 * than the window.
 */
export class SeenWindow {
  private readonly sliceMs: number;
  /** Tables by slice number (record time divided by the slice's length). */
  private readonly slices = new Map<number, FingerprintTable>();
  private newestMs = -Infinity;

  constructor(private readonly windowMs: number) {
    this.sliceMs = Math.max(1, Math.ceil(windowMs / SLICES));
  }

  /** Fingerprints held (some up to a slice older than the window). */
  get size(): number {
    let size = 0;
    for (const table of this.slices.values()) size += table.size;
    return size;
  }

  /** Bytes the tables take. */
  get bytes(): number {
    let bytes = 0;
    for (const table of this.slices.values()) bytes += table.bytes;
    return bytes;
  }

  /**
   * Checks a call seen at `offset` with record time `timeMs` and remembers it when new.
   * @returns whether it is new, the same record again, or a duplicate of another
   */
  check(high: number, low: number, offset: number, timeMs: number): SeenVerdict {
    if (timeMs > this.newestMs) this.advance(timeMs);
    for (const table of this.slices.values()) {
      const at = table.find(high, low);
      if (at !== -1) return at === offset ? 'again' : 'duplicate';
    }
    const slice = Math.floor(timeMs / this.sliceMs);
    // A record older than the window (by the partition's clock) is checked, not remembered.
    if (slice >= this.oldestSlice()) this.table(slice).add(high, low, offset);
    return 'first';
  }

  private advance(timeMs: number): void {
    const before = this.oldestSlice();
    this.newestMs = timeMs;
    const oldest = this.oldestSlice();
    if (oldest === before) return;
    for (const slice of this.slices.keys()) if (slice < oldest) this.slices.delete(slice);
  }

  /** The oldest slice still (partly) within the window. */
  private oldestSlice(): number {
    return Math.floor((this.newestMs - this.windowMs) / this.sliceMs);
  }

  private table(slice: number): FingerprintTable {
    let table = this.slices.get(slice);
    if (table === undefined) {
      table = new FingerprintTable();
      this.slices.set(slice, table);
    }
    return table;
  }
}
