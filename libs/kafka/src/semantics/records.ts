/** A record to produce. The topic is the logical name; the deployment prefix is added on send. */
export interface OutgoingRecord {
  readonly topic: string;
  readonly key?: string | Buffer | null;
  readonly value: string | Buffer;
  readonly headers?: Readonly<Record<string, string | Buffer>>;
  /** An explicit partition; by default the key's hash chooses one. */
  readonly partition?: number;
}

/** A consumed record, as handlers see it. `topic` is the logical name (prefix removed). */
export interface IncomingRecord {
  readonly topic: string;
  readonly partition: number;
  /** Kafka offsets are 64-bit; kept as decimal strings. */
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, Buffer | undefined>>;
  /** Broker or producer timestamp, epoch milliseconds. */
  readonly timestamp: number;
  /**
   * A header's value as UTF-8 text, read without the header map, when the record can (a
   * fetched one reads it from the fetched bytes); {@link headerText} uses it.
   */
  readonly text?: (name: string) => string | undefined;
  /** Several headers' values at once, in one pass over the fetched bytes ({@link headerTexts}). */
  readonly texts?: (names: HeaderNames) => (string | undefined)[];
}

/**
 * Distinct header names a consumer reads together from every record ({@link headerTexts}), their
 * UTF-8 bytes prepared once: a record's headers are then read in one pass, each name matched by
 * its length and bytes, instead of one search per name.
 */
export class HeaderNames {
  readonly bytes: readonly Buffer[];
  /** By name length in bytes, the indexes of the names of that length (a sparse array). */
  readonly #byLength: (number[] | undefined)[] = [];
  readonly #nullName: number;

  constructor(readonly names: readonly string[]) {
    this.bytes = names.map((name) => Buffer.from(name, 'utf8'));
    this.bytes.forEach((bytes, index) => (this.#byLength[bytes.length] ??= []).push(index));
    this.#nullName = names.indexOf('null');
  }

  /**
   * The index of the name whose bytes are `bytes[at, at + length)`; -1 for none. A null name
   * (length -1) reads as "null", as kafkajs's header map has it.
   */
  indexOf(bytes: Uint8Array, at: number, length: number): number {
    if (length < 0) return this.#nullName;
    const candidates = this.#byLength[length];
    if (candidates === undefined) return -1;
    for (const index of candidates) {
      const wanted = this.bytes[index];
      // From the end: header names often share a prefix (`sluice-`), rarely an ending.
      let i = length - 1;
      while (i >= 0 && bytes[at + i] === wanted[i]) i -= 1;
      if (i < 0) return index;
    }
    return -1;
  }
}

/** A header's value as UTF-8 text, or undefined when absent. */
export function headerText(record: IncomingRecord, name: string): string | undefined {
  return record.text !== undefined ? record.text(name) : record.headers[name]?.toString('utf8');
}

/**
 * The values of `names`' headers as UTF-8 text, in their order (undefined when absent or null; a
 * repeated name's last value), as {@link headerText} reads each: in one pass over a fetched
 * record's headers.
 */
export function headerTexts(record: IncomingRecord, names: HeaderNames): (string | undefined)[] {
  if (record.texts !== undefined) return record.texts(names);
  return names.names.map((name) => headerText(record, name));
}

/** A consumed record's headers, to produce again (as they are, to be added to or changed). */
export function copyHeaders(record: IncomingRecord): Record<string, Buffer | string> {
  const headers: Record<string, Buffer | string> = {};
  for (const [name, value] of Object.entries(record.headers)) {
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

/** A header map with one value per name, as Buffers. */
export function normalizeHeaders(
  raw: Readonly<Record<string, Buffer | string | (Buffer | string)[] | undefined>> | undefined,
): Record<string, Buffer | undefined> {
  const headers: Record<string, Buffer | undefined> = {};
  for (const [name, value] of Object.entries(raw ?? {})) {
    // A repeated header keeps its last value: Sluice never repeats one.
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    // kafkajs hands header values over as Buffers already: no copy on the hot path.
    headers[name] = typeof last === 'string' ? Buffer.from(last) : last;
  }
  return headers;
}
