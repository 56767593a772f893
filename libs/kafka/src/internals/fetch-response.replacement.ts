/**
 * The Fetch response (version 11) decoded in one pass over the bytes. kafkajs 2.2.4 decodes
 * each record from a `Decoder` of its own, reads every varlong and 64-bit sum through its
 * `Long`, and builds each header map by spreading it again per header, a visible share of a
 * consuming app's CPU. This reads the same fields (the consumer's `Batch` cannot tell them
 * apart) in less than half the time; docs/kafkajs-replacements.md has the figures. A record's
 * headers are read from the fetched bytes only when asked for ({@link FetchedMessage}).
 *
 * {@link installFetchResponseReplacement} installs it as the version 11 response's `decode`
 * (the version kafkajs 2.2.4 uses with Kafka 2.3 and later). Batches it does not read itself,
 * compressed ones (Sluice produces none) and the old message-set format, go to kafkajs's own
 * decoders. The spec compares its output with kafkajs's.
 */

import { assertPinnedKafkajs, installedKafkajsVersion } from './kafkajs-version';

/** Record-batch attributes (Kafka's DefaultRecordBatch). */
const COMPRESSION_MASK = 0x07;
const TIMESTAMP_TYPE_MASK = 0x08;
const TRANSACTIONAL_MASK = 0x10;
const CONTROL_MASK = 0x20;
/** kafkajs's `TimestampTypes`. */
const CREATE_TIME = 0;
const LOG_APPEND_TIME = 1;
const RECORD_BATCH_MAGIC = 2;
/** Where the magic byte sits in a batch (after base offset, length, leader epoch). */
const MAGIC_OFFSET = 16;
/** The bytes before a batch's first record: kafkajs stops when fewer are left. */
const RECORD_BATCH_OVERHEAD = 49;

/** What kafkajs's decoders share with this one. */
export interface KafkajsDecoding {
  /** kafkajs's record-batch decoder, for a batch this one does not read (compressed). */
  readonly recordBatch: (decoder: { buffer: Buffer; offset: number }) => Promise<{
    records: unknown[];
  }>;
  /** kafkajs's message-set decoder (magic 0 and 1). */
  readonly messageSet: (decoder: { buffer: Buffer; offset: number }, size: number) => unknown;
  /** Makes a kafkajs `Decoder` over a buffer. */
  readonly decoder: (buffer: Buffer) => { buffer: Buffer; offset: number };
  /** kafkajs's error for a batch cut off at the end of a fetch. */
  readonly isPartial: (error: unknown) => boolean;
}

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
    this.#headers ??= readHeaders(new Reader(this.#bytes, this.#headersAt), this.#headerCount);
    return this.#headers;
  }

  /**
   * The last value of header `name` as UTF-8 text, read from the fetched bytes; undefined when
   * absent or null. The same as the last value in `headers`, without building them.
   */
  headerText(name: string): string | undefined {
    const bytes = this.#bytes;
    const wanted = nameBytes(name);
    const reader = new Reader(bytes, this.#headersAt);
    let found: string | undefined;
    for (let h = 0; h < this.#headerCount; h += 1) {
      const nameLength = reader.varint();
      const nameAt = reader.pos;
      reader.pos += Math.max(nameLength, 0);
      const valueLength = reader.varint();
      const valueAt = reader.pos;
      reader.pos += Math.max(valueLength, 0);
      // A null name reads as "null", as kafkajs's map has it.
      const matches =
        nameLength < 0 ? name === 'null' : sameBytes(bytes, nameAt, nameLength, wanted);
      if (matches)
        found = valueLength < 0 ? undefined : bytes.toString('utf8', valueAt, reader.pos);
    }
    return found;
  }
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

/** `count` headers from `reader.pos`, as kafkajs decodes them. */
function readHeaders(reader: Reader, count: number): Record<string, HeaderValue | HeaderValue[]> {
  const headers: Record<string, HeaderValue | HeaderValue[]> = {};
  for (let h = 0; h < count; h += 1) {
    // A null name is kept as "null", and a repeated one collects its values in order, as
    // kafkajs does.
    const slot = String(reader.varString());
    const headerValue = reader.varBytes();
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
class Reader {
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

  /** A varint-prefixed UTF-8 string, or null for length -1. */
  varString(): string | null {
    return this.text(this.varint());
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

/** `base + delta` as kafkajs writes it: a decimal string of the 64-bit sum. */
function plus(base: bigint, baseNumber: number, delta: number): string {
  const sum = baseNumber + delta;
  return Number.isSafeInteger(sum) && Number.isSafeInteger(baseNumber)
    ? String(sum)
    : (base + BigInt(delta)).toString();
}

/**
 * Decodes one uncompressed batch's records starting at `reader.pos` (its base offset) into
 * `into`. Reads nothing and returns 'compressed' for a compressed batch, or 'partial' when the
 * batch runs past `end`, where the fetched bytes end.
 */
function readBatch(
  reader: Reader,
  end: number,
  into: FetchedRecord[],
): 'read' | 'compressed' | 'partial' {
  const start = reader.pos;
  const length = reader.buffer.readInt32BE(start + 8);
  const batchEnd = start + 12 + length;
  if (batchEnd > end) return 'partial';
  const attributes = reader.buffer.readInt16BE(start + 21);
  if ((attributes & COMPRESSION_MASK) !== 0) return 'compressed';
  const firstOffsetBig = reader.int64();
  reader.pos += 4; // length
  const partitionLeaderEpoch = reader.int32();
  const magicByte = reader.int8();
  reader.pos += 4 + 2; // CRC (not checked, as by kafkajs), attributes
  const lastOffsetDelta = reader.int32();
  const firstTimestampBig = reader.int64();
  const maxTimestampBig = reader.int64();
  const producerId = reader.int64().toString();
  const producerEpoch = reader.int16();
  const firstSequence = reader.int32();
  const isControlBatch = (attributes & CONTROL_MASK) > 0;
  const timestampType = (attributes & TIMESTAMP_TYPE_MASK) > 0 ? LOG_APPEND_TIME : CREATE_TIME;
  const maxTimestamp = maxTimestampBig.toString();
  const batchContext: BatchContext = {
    firstOffset: firstOffsetBig.toString(),
    firstTimestamp: firstTimestampBig.toString(),
    partitionLeaderEpoch,
    inTransaction: (attributes & TRANSACTIONAL_MASK) > 0,
    isControlBatch,
    lastOffsetDelta,
    producerId,
    producerEpoch,
    firstSequence,
    maxTimestamp,
    timestampType,
    magicByte,
  };
  const firstOffset = Number(firstOffsetBig);
  const firstTimestamp = Number(firstTimestampBig);
  // kafkajs uses the batch's max timestamp for every record when the broker stamped it.
  const appendTime = timestampType === LOG_APPEND_TIME && maxTimestamp ? maxTimestamp : undefined;
  const count = reader.int32();
  for (let i = 0; i < count; i += 1) {
    const recordLength = reader.varint();
    const recordEnd = reader.pos + recordLength;
    const recordAttributes = reader.int8();
    const timestampDelta = reader.varint();
    const offsetDelta = reader.varint();
    const key = reader.varBytes();
    const value = reader.varBytes();
    const headerCount = reader.varint();
    into.push(
      new FetchedMessage(
        magicByte,
        recordAttributes,
        appendTime ?? plus(firstTimestampBig, firstTimestamp, timestampDelta),
        plus(firstOffsetBig, firstOffset, offsetDelta),
        key,
        value,
        isControlBatch,
        batchContext,
        reader.buffer,
        reader.pos,
        headerCount,
      ),
    );
    reader.pos = recordEnd;
  }
  reader.pos = batchEnd;
  return 'read';
}

/** A partition's record set: every whole batch in it, as kafkajs's `decodeMessages`. */
async function readMessages(reader: Reader, kafkajs: KafkajsDecoding): Promise<unknown[]> {
  const size = reader.int32();
  if (size <= 0 || reader.pos + size > reader.buffer.length) return [];
  const end = reader.pos + size;
  const magic = reader.buffer.readInt8(reader.pos + MAGIC_OFFSET);
  if (magic !== RECORD_BATCH_MAGIC) {
    const messages = kafkajs.decoder(reader.buffer.subarray(reader.pos, end));
    reader.pos = end;
    return kafkajs.messageSet(messages, size) as unknown[];
  }
  const records: FetchedRecord[] = [];
  while (end - reader.pos >= RECORD_BATCH_OVERHEAD) {
    const outcome = readBatch(reader, end, records);
    if (outcome === 'partial') break;
    if (outcome === 'compressed') {
      const decoder = kafkajs.decoder(reader.buffer.subarray(reader.pos, end));
      try {
        const batch = await kafkajs.recordBatch(decoder);
        records.push(...(batch.records as FetchedRecord[]));
      } catch (error) {
        if (kafkajs.isPartial(error)) break;
        throw error;
      }
      reader.pos += decoder.offset;
    }
  }
  reader.pos = end;
  return records;
}

/** The Fetch v11 response body (after the response header), as kafkajs's `decode` returns it. */
export async function decodeFetchResponse(data: Buffer, kafkajs: KafkajsDecoding) {
  const reader = new Reader(data);
  const clientSideThrottleTime = reader.int32();
  const errorCode = reader.int16();
  const sessionId = reader.int32();
  const topicCount = reader.int32();
  const responses = [];
  for (let t = 0; t < topicCount; t += 1) {
    const topicName = reader.string();
    const partitionCount = reader.int32();
    const partitions = [];
    for (let p = 0; p < partitionCount; p += 1) {
      const partition = reader.int32();
      const partitionError = reader.int16();
      const highWatermark = reader.int64().toString();
      const lastStableOffset = reader.int64().toString();
      const lastStartOffset = reader.int64().toString();
      const abortedCount = reader.int32();
      const abortedTransactions = [];
      for (let a = 0; a < abortedCount; a += 1) {
        abortedTransactions.push({
          producerId: reader.int64().toString(),
          firstOffset: reader.int64().toString(),
        });
      }
      const preferredReadReplica = reader.int32();
      partitions.push({
        partition,
        errorCode: partitionError,
        highWatermark,
        lastStableOffset,
        lastStartOffset,
        abortedTransactions,
        preferredReadReplica,
        messages: await readMessages(reader, kafkajs),
      });
    }
    responses.push({ topicName, partitions });
  }
  // kafkajs reports 0: the broker did not throttle; `clientSideThrottleTime` asks the client to.
  return { throttleTime: 0, clientSideThrottleTime, errorCode, sessionId, responses };
}

let applied = false;

/**
 * Installs {@link decodeFetchResponse} as kafkajs's Fetch v11 response decoder, once per
 * process, before any client exists (`installKafkajsReplacements` does).
 * @param found the kafkajs version to check (the installed one; specs pass another)
 * @throws {KafkajsVersionError} on any kafkajs but the pinned one, replacing nothing
 */
export function installFetchResponseReplacement(found = installedKafkajsVersion()): void {
  assertPinnedKafkajs('Fetch v11 response decoder', found);
  if (applied) return;
  /* eslint-disable @typescript-eslint/no-require-imports */
  const response = require('kafkajs/src/protocol/requests/fetch/v11/response') as {
    decode: (data: Buffer) => Promise<unknown>;
  };
  const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => {
    buffer: Buffer;
    offset: number;
  };
  const recordBatch =
    require('kafkajs/src/protocol/recordBatch/v0/decoder') as KafkajsDecoding['recordBatch'];
  const messageSet =
    require('kafkajs/src/protocol/messageSet/decoder') as KafkajsDecoding['messageSet'];
  /* eslint-enable @typescript-eslint/no-require-imports */
  const kafkajs: KafkajsDecoding = {
    recordBatch,
    messageSet,
    decoder: (buffer) => new Decoder(buffer),
    isPartial: (error) => (error as { name?: string })?.name === 'KafkaJSPartialMessageError',
  };
  response.decode = (data) => decodeFetchResponse(data, kafkajs);
  applied = true;
}
