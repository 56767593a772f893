/**
 * What Sluice's Fetch v11 decoder (`fetch-response.replacement.ts`) makes of a fetched record,
 * and the reader it decodes with: a record as kafkajs's consumer expects it, whose headers stay
 * in the fetched bytes until asked for.
 */

/** The context kafkajs gives every record of a batch (one object per batch). */
export interface BatchContext {
  readonly firstOffset: string;
  readonly firstTimestamp: string;
  readonly partitionLeaderEpoch: number;
  readonly inTransaction: boolean;
  readonly isControlBatch: boolean;
  readonly lastOffsetDelta: number;
  readonly producerId: string;
  readonly producerEpoch: number;
  readonly firstSequence: number;
  readonly maxTimestamp: string;
  readonly timestampType: number;
  readonly magicByte: number;
}

type HeaderValue = Buffer | null;

/** Header names read together (semantics/records.ts's `HeaderNames`): what matching them takes. */
export interface WantedHeaders {
  readonly names: readonly string[];
  /**
   * The index of the name whose bytes are `bytes[at, at + length)`, -1 for none; a null name
   * (length -1) matches "null", as kafkajs's header map has it.
   */
  indexOf(bytes: Uint8Array, at: number, length: number): number;
}

/** A record as kafkajs's decoder makes it. */
export interface FetchedRecord {
  readonly magicByte: number;
  readonly attributes: number;
  readonly timestamp: string;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Record<string, HeaderValue | HeaderValue[]>;
  readonly isControlRecord: boolean;
  readonly batchContext: BatchContext;
}

/**
 * A fetched record whose headers stay in the fetched bytes until asked for: most consumers read
 * a few by name ({@link FetchedMessage.headerText}), which needs no header map, no name strings
 * and no header value views. `headers` builds kafkajs's map on first use.
 */
export class FetchedMessage implements FetchedRecord {
  readonly #bytes: Buffer;
  /** Where the record's headers start in `#bytes` (after their count), and how many. */
  readonly #headersAt: number;
  readonly #headerCount: number;
  #headers: Record<string, HeaderValue | HeaderValue[]> | undefined;
  /** The headers' positions in `#bytes` ({@link headerSpans}), found on the first read by name. */
  #spans: number[] | undefined;

  constructor(
    readonly magicByte: number,
    readonly attributes: number,
    readonly timestamp: string,
    readonly offset: string,
    readonly key: Buffer | null,
    readonly value: Buffer | null,
    readonly isControlRecord: boolean,
    readonly batchContext: BatchContext,
    bytes: Buffer,
    headersAt: number,
    headerCount: number,
  ) {
    this.#bytes = bytes;
    this.#headersAt = headersAt;
    this.#headerCount = headerCount;
  }

  /** The headers as kafkajs's decoder makes them (a repeated name's values as an array). */
  get headers(): Record<string, HeaderValue | HeaderValue[]> {
    this.#headers ??= headerMap(this.#bytes, this.#positions());
    return this.#headers;
  }

  /**
   * The last value of header `name` as UTF-8 text, read from the fetched bytes; undefined when
   * absent or null. The same as the last value in `headers`, without building them.
   */
  headerText(name: string): string | undefined {
    const spans = this.#positions();
    const bytes = this.#bytes;
    const wanted = nameBytes(name);
    // From the end: a repeated name's last value is the one the header map keeps.
    for (let at = spans.length - SPAN; at >= 0; at -= SPAN) {
      const nameLength = spans[at + 1];
      // A null name reads as "null", as kafkajs's map has it.
      const matches =
        nameLength < 0 ? name === 'null' : sameBytes(bytes, spans[at], nameLength, wanted);
      if (!matches) continue;
      const valueAt = spans[at + 2];
      const valueLength = spans[at + 3];
      return valueLength < 0 ? undefined : bytes.toString('utf8', valueAt, valueAt + valueLength);
    }
    return undefined;
  }

  /**
   * The last value of each of `names`' headers as UTF-8 text (undefined when absent or null),
   * in one pass over the fetched bytes: what {@link headerText} reads of each name.
   */
  headerTexts(names: WantedHeaders): (string | undefined)[] {
    // Pushed, not `new Array(n).fill()`, which costs more (bench/DISPATCHER.md, fourth pass).
    const texts: (string | undefined)[] = [];
    for (let i = 0; i < names.names.length; i += 1) texts.push(undefined);
    const found = FOUND;
    found.length = 0;
    let from = Infinity;
    let to = 0;
    const reader = new Reader(this.#bytes, this.#headersAt);
    const bytes = this.#bytes;
    for (let h = 0; h < this.#headerCount; h += 1) {
      const nameLength = reader.varint();
      const index = names.indexOf(bytes, reader.pos, nameLength);
      reader.pos += Math.max(nameLength, 0);
      const valueLength = reader.varint();
      const valueAt = reader.pos;
      reader.pos += Math.max(valueLength, 0);
      if (index < 0) continue;
      found.push(index, valueAt, valueLength);
      // Headers come in order: the first value found starts the span, the last ends it.
      if (valueLength > 0) {
        if (from === Infinity) from = valueAt;
        to = valueAt + valueLength;
      }
    }
    // One Latin-1 string over the values, cut into each ASCII one (ASCII reads the same in
    // both): one decoding a record instead of one a header (bench/DISPATCHER.md, fifth pass).
    const shared =
      from < to && to - from <= MAX_SHARED_TEXT ? bytes.toString('latin1', from, to) : undefined;
    for (let f = 0; f < found.length; f += FOUND_SPAN) {
      const at = found[f + 1];
      const length = found[f + 2];
      texts[found[f]] =
        length < 0
          ? undefined
          : shared !== undefined && isAscii(bytes, at, length)
            ? shared.substring(at - from, at - from + length)
            : bytes.toString('utf8', at, at + length);
    }
    return texts;
  }

  /** The headers' positions, found once: consumers read several headers of a record. */
  #positions(): number[] {
    this.#spans ??= headerSpans(this.#bytes, this.#headersAt, this.#headerCount);
    return this.#spans;
  }
}

/** A wanted header found by `headerTexts`: its name's index, value at, value length (-1: null). */
const FOUND_SPAN = 3;
/** `headerTexts`' list of found headers, reused: it runs once a record, never reentered. */
const FOUND: number[] = [];
/**
 * The most bytes from a record's first wanted value to its last decoded as one string: a cut
 * value keeps the whole string alive, so a wider span is decoded value by value.
 */
const MAX_SHARED_TEXT = 1024;

/** Whether `bytes[at, at + length)` is ASCII. */
function isAscii(bytes: Buffer, at: number, length: number): boolean {
  for (let i = at + length - 1; i >= at; i -= 1) if (bytes[i] >= 0x80) return false;
  return true;
}

/** A header's numbers in its record's positions: name at, name length, value at, value length. */
const SPAN = 4;

/** Where each of `count` headers from `at` has its name and value (lengths -1 for null). */
function headerSpans(bytes: Buffer, at: number, count: number): number[] {
  const reader = new Reader(bytes, at);
  const spans: number[] = [];
  for (let h = 0; h < count; h += 1) {
    const nameLength = reader.varint();
    spans.push(reader.pos, nameLength);
    reader.pos += Math.max(nameLength, 0);
    const valueLength = reader.varint();
    spans.push(reader.pos, valueLength);
    reader.pos += Math.max(valueLength, 0);
  }
  return spans;
}

/** Header names as UTF-8, for the few names consumers ask for by name. */
const NAME_BYTES = new Map<string, Buffer>();
const MAX_CACHED_NAMES = 256;

function nameBytes(name: string): Buffer {
  let bytes = NAME_BYTES.get(name);
  if (bytes === undefined) {
    bytes = Buffer.from(name, 'utf8');
    if (NAME_BYTES.size < MAX_CACHED_NAMES) NAME_BYTES.set(name, bytes);
  }
  return bytes;
}

/** Compared from the end: header names often share a prefix (`sluice-`), rarely an ending. */
function sameBytes(bytes: Buffer, at: number, length: number, wanted: Buffer): boolean {
  if (length !== wanted.length) return false;
  for (let i = length - 1; i >= 0; i -= 1) if (bytes[at + i] !== wanted[i]) return false;
  return true;
}

/** The headers at `spans` ({@link headerSpans}) as kafkajs decodes them. */
function headerMap(bytes: Buffer, spans: number[]): Record<string, HeaderValue | HeaderValue[]> {
  const headers: Record<string, HeaderValue | HeaderValue[]> = {};
  for (let at = 0; at < spans.length; at += SPAN) {
    // A null name is kept as "null", and a repeated one collects its values in order, as
    // kafkajs does.
    const nameLength = spans[at + 1];
    const valueAt = spans[at + 2];
    const valueLength = spans[at + 3];
    const slot =
      nameLength < 0 ? 'null' : bytes.toString('utf8', spans[at], spans[at] + nameLength);
    const headerValue = valueLength < 0 ? null : bytes.subarray(valueAt, valueAt + valueLength);
    const previous = headers[slot];
    headers[slot] =
      previous === undefined
        ? headerValue
        : Array.isArray(previous)
          ? [...previous, headerValue]
          : [previous, headerValue];
  }
  return headers;
}

/** A read position in a buffer. */
export class Reader {
  constructor(
    readonly buffer: Buffer,
    public pos = 0,
  ) {}

  int8(): number {
    const value = this.buffer.readInt8(this.pos);
    this.pos += 1;
    return value;
  }

  int16(): number {
    const value = this.buffer.readInt16BE(this.pos);
    this.pos += 2;
    return value;
  }

  int32(): number {
    const value = this.buffer.readInt32BE(this.pos);
    this.pos += 4;
    return value;
  }

  int64(): bigint {
    const value = this.buffer.readBigInt64BE(this.pos);
    this.pos += 8;
    return value;
  }

  /** A zigzag varint or varlong, exact up to 2^53 (Kafka's lengths, deltas and counts). */
  varint(): number {
    const buffer = this.buffer;
    let raw = 0;
    let scale = 1;
    let byte: number;
    do {
      byte = buffer[this.pos++];
      raw += (byte & 0x7f) * scale;
      scale *= 128;
    } while (byte >= 0x80);
    return raw % 2 === 0 ? raw / 2 : -(raw + 1) / 2;
  }

  /** Varint-prefixed bytes, or null for length -1; a view, not a copy (as kafkajs's). */
  varBytes(): Buffer | null {
    const length = this.varint();
    if (length < 0) return null;
    const start = this.pos;
    this.pos += length;
    return this.buffer.subarray(start, this.pos);
  }

  /** An int16-prefixed UTF-8 string, or null for length -1. */
  string(): string | null {
    return this.text(this.int16());
  }

  /** The next `length` bytes as UTF-8, or null for a negative length. */
  private text(length: number): string | null {
    if (length < 0) return null;
    const start = this.pos;
    this.pos += length;
    return this.buffer.toString('utf8', start, this.pos);
  }
}
