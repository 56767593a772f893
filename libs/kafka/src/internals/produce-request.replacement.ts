/**
 * The body of a Produce request (versions 3 to 7: the record-batch format, magic 2), written
 * in one pass into one buffer. kafkajs 2.2.4 builds the same bytes from an `Encoder` per
 * record and per header, each a zero-filled 512-byte allocation grown by copying, with 64-bit
 * `Long` arithmetic for every varint and a CRC a byte at a time; that encoding was most of what
 * a produced record cost. docs/kafkajs-replacements.md has the measured gain.
 *
 * {@link installProduceRequestReplacement} installs it into kafkajs for the requests it
 * covers: no compression, no transaction, no message timestamps (Sluice sends none of these);
 * any other request keeps kafkajs's own encoder. The spec checks the bytes against kafkajs's.
 */
import { crc32c } from './crc32c';
import { assertPinnedKafkajs, installedKafkajsVersion } from './kafkajs-version';

type Bytes = Buffer | string | null | undefined;

/** A message as kafkajs hands it to the request. */
export interface ProduceMessage {
  readonly key?: Bytes;
  readonly value: Bytes;
  readonly headers?: Readonly<Record<string, Bytes | readonly Bytes[]>>;
  readonly timestamp?: string | number;
}

/** What kafkajs passes to a Produce request of version 3 to 7. */
export interface ProduceRequestArgs {
  readonly acks: number;
  readonly timeout: number;
  readonly transactionalId?: string | null;
  /** A 64-bit id: kafkajs passes a decimal string, a number or its `Long`. */
  readonly producerId?: { toString(): string } | string | number;
  readonly producerEpoch?: number;
  readonly compression?: number;
  readonly topicData: readonly {
    readonly topic: string;
    readonly partitions: readonly {
      readonly partition: number;
      readonly firstSequence?: number;
      readonly messages: readonly ProduceMessage[];
    }[];
  }[];
}

const MAGIC = 2;
/** attributes int16, lastOffsetDelta int32, first and max timestamp, producer id, epoch int16, first sequence int32, record count int32 */
const BATCH_HEAD_BYTES = 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4;
/** base offset int64, batch length int32, leader epoch int32, magic int8, CRC uint32 */
const BATCH_PREFIX_BYTES = 8 + 4 + 4 + 1 + 4;

/** Whether {@link encodeProduceRequest} writes this request (otherwise kafkajs's encoder does). */
export function encodes(args: ProduceRequestArgs): boolean {
  if ((args.compression ?? 0) !== 0 || args.transactionalId != null) return false;
  return args.topicData.every((topic) =>
    topic.partitions.every((p) => p.messages.every((m) => m.timestamp == null)),
  );
}

/** The request's body, after the request header, for a request {@link encodes} accepts. */
export function encodeProduceRequest(args: ProduceRequestArgs, now = Date.now()): Buffer {
  // Pass 1: each record's size and each string's UTF-8 length, in write order; the total.
  const lengths: number[] = [];
  let size = 2 + 2 + 4 + 4; // null transactional id, acks, timeout, topic count
  for (const topic of args.topicData) {
    size += 2 + Buffer.byteLength(topic.topic) + 4;
    for (const { messages } of topic.partitions) {
      size += 4 + 4 + BATCH_PREFIX_BYTES + BATCH_HEAD_BYTES;
      messages.forEach((message, offsetDelta) => {
        const body = recordBodySize(message, offsetDelta, lengths);
        size += varIntSize(body) + body;
      });
    }
  }
  // Pass 2: write.
  const out = new Writer(Buffer.allocUnsafe(size), lengths);
  const producerId = BigInt(String(args.producerId ?? -1));
  out.int16(-1);
  out.int16(args.acks);
  out.int32(args.timeout);
  out.int32(args.topicData.length);
  for (const topic of args.topicData) {
    out.string(topic.topic);
    out.int32(topic.partitions.length);
    for (const { partition, firstSequence = 0, messages } of topic.partitions) {
      out.int32(partition);
      const sizeAt = out.skip(4);
      out.int64(0n); // base offset
      const lengthAt = out.skip(4);
      out.int32(0); // partition leader epoch
      out.int8(MAGIC);
      const crcAt = out.skip(4);
      const bodyStart = out.offset;
      out.int16(0); // attributes: no compression, create time, not transactional
      out.int32(messages.length - 1);
      out.int64(BigInt(now)); // first timestamp
      out.int64(BigInt(now)); // max timestamp
      out.int64(producerId);
      out.int16(args.producerEpoch ?? 0);
      out.int32(firstSequence);
      out.int32(messages.length);
      messages.forEach((message, offsetDelta) => out.record(message, offsetDelta));
      const end = out.offset;
      out.buffer.writeUInt32BE(crc32c(out.buffer, bodyStart, end), crcAt);
      out.buffer.writeInt32BE(end - lengthAt - 4, lengthAt);
      out.buffer.writeInt32BE(end - sizeAt - 4, sizeAt);
    }
  }
  if (out.offset !== size) throw new Error(`produce request sized ${size}, wrote ${out.offset}`);
  return out.buffer;
}

/**
 * A record's size after its length prefix; pushes that size, then each key, value and header
 * part's byte length, in the order {@link Writer.record} reads them.
 */
function recordBodySize(message: ProduceMessage, offsetDelta: number, lengths: number[]): number {
  const slot = lengths.push(0) - 1;
  // attributes int8, timestamp delta (always 0: one varint byte)
  let size = 1 + 1 + varIntSize(offsetDelta);
  size += bytesFieldSize(message.key, lengths) + bytesFieldSize(message.value, lengths);
  const headers = headerList(message.headers);
  size += varIntSize(headers.length / 2);
  for (const part of headers) size += bytesFieldSize(part, lengths);
  lengths[slot] = size;
  return size;
}

/** Header names and values, alternating; a repeated header gives one pair per value. */
function headerList(headers: ProduceMessage['headers']): Bytes[] {
  const list: Bytes[] = [];
  if (!headers) return list;
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (Array.isArray(value)) for (const each of value as Bytes[]) list.push(name, each);
    else list.push(name, value as Bytes);
  }
  return list;
}

function bytesFieldSize(value: Bytes, lengths: number[]): number {
  if (value == null) return 1; // varint -1
  const length = Buffer.isBuffer(value) ? value.length : Buffer.byteLength(String(value));
  lengths.push(length);
  return varIntSize(length) + length;
}

const zigZag = (n: number): number => (n << 1) ^ (n >> 31);

function varIntSize(n: number): number {
  let value = zigZag(n);
  let size = 1;
  while ((value & 0xffffff80) !== 0) {
    size += 1;
    value >>>= 7;
  }
  return size;
}

/** Writes into a buffer of the exact size; `lengths` are pass 1's, consumed in order. */
class Writer {
  offset = 0;
  private next = 0;

  constructor(
    readonly buffer: Buffer,
    private readonly lengths: readonly number[],
  ) {}

  skip(bytes: number): number {
    const at = this.offset;
    this.offset += bytes;
    return at;
  }

  int8(n: number): void {
    this.buffer[this.offset++] = n;
  }

  int16(n: number): void {
    this.offset = this.buffer.writeInt16BE(n, this.offset);
  }

  int32(n: number): void {
    this.offset = this.buffer.writeInt32BE(n, this.offset);
  }

  int64(n: bigint): void {
    this.offset = this.buffer.writeBigInt64BE(n, this.offset);
  }

  string(text: string): void {
    const length = Buffer.byteLength(text);
    this.int16(length);
    this.offset += this.buffer.write(text, this.offset, length, 'utf8');
  }

  varInt(n: number): void {
    let value = zigZag(n);
    while ((value & 0xffffff80) !== 0) {
      this.buffer[this.offset++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    this.buffer[this.offset++] = value & 0x7f;
  }

  bytes(value: Bytes): void {
    if (value == null) return this.varInt(-1);
    const length = this.lengths[this.next++];
    this.varInt(length);
    if (Buffer.isBuffer(value)) this.offset += value.copy(this.buffer, this.offset);
    else this.offset += this.buffer.write(String(value), this.offset, length, 'utf8');
  }

  record(message: ProduceMessage, offsetDelta: number): void {
    const headers = headerList(message.headers);
    this.varInt(this.lengths[this.next++]);
    this.int8(0); // attributes
    this.int8(0); // timestamp delta 0, as a varlong
    this.varInt(offsetDelta);
    this.bytes(message.key);
    this.bytes(message.value);
    this.varInt(headers.length / 2);
    for (const part of headers) this.bytes(part);
  }
}

/** A request as kafkajs's connection sends it. */
interface KafkajsRequest {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly apiName: string;
  readonly expectResponse: () => boolean;
  encode(): Promise<unknown>;
}

/** The parts of kafkajs's Produce request module this replaces. */
interface ProduceDefinition {
  protocol(version: { version: number }): (args: ProduceRequestArgs) => {
    request: KafkajsRequest;
    response: unknown;
  };
}

let applied = false;

/**
 * Makes kafkajs's Produce requests of versions 3 to 7 use {@link encodeProduceRequest} when
 * {@link encodes} accepts them; once per process, before any client exists
 * (`installKafkajsReplacements` does).
 * @param found the kafkajs version to check (the installed one; specs pass another)
 * @throws {KafkajsVersionError} on any kafkajs but the pinned one, replacing nothing
 */
export function installProduceRequestReplacement(found = installedKafkajsVersion()): void {
  assertPinnedKafkajs('Produce request encoder', found);
  if (applied) return;
  /* eslint-disable @typescript-eslint/no-require-imports */
  const produce = require('kafkajs/src/protocol/requests/produce') as ProduceDefinition;
  const Encoder = require('kafkajs/src/protocol/encoder') as new (size: number) => {
    buf: Buffer;
    offset: number;
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
  const original = produce.protocol.bind(produce);
  produce.protocol = ({ version: apiVersion }) => {
    const build = original({ version: apiVersion });
    if (apiVersion < 3 || apiVersion > 7) return build;
    return (args) => {
      const built = build(args);
      if (!encodes(args)) return built;
      // A request object of its own: replacing `encode` on kafkajs's kept the produce path's
      // objects alive through young-generation collections (bench/README.md).
      const { apiKey, apiName, expectResponse } = built.request;
      const request: KafkajsRequest = {
        apiKey,
        apiVersion,
        apiName,
        expectResponse,
        encode: () => {
          const buf = encodeProduceRequest(args);
          return Promise.resolve(Object.assign(new Encoder(0), { buf, offset: buf.length }));
        },
      };
      return { request, response: built.response };
    };
  };
  applied = true;
}
