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

import { BatchContext, FetchedMessage, FetchedRecord, Reader } from './fetched-message';
import { assertPinnedKafkajs, installedKafkajsVersion } from './kafkajs-version';

export type { BatchContext, FetchedRecord } from './fetched-message';

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
