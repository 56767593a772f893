import { randomBytes } from 'node:crypto';

import { CompressionTypes } from 'kafkajs';

import { installFetchResponseReplacement } from './fetch-response.replacement';
import { FetchedMessage } from './fetched-message';
import { KafkajsVersionError } from './kafkajs-version';

/* eslint-disable @typescript-eslint/no-require-imports */
type Encoder = {
  buffer: Buffer;
  writeInt8(v: number): Encoder;
  writeInt16(v: number): Encoder;
  writeInt32(v: number): Encoder;
  writeInt64(v: string | number): Encoder;
  writeString(v: string | null): Encoder;
  writeBuffer(v: Buffer): Encoder;
};
const Encoder = require('kafkajs/src/protocol/encoder') as new () => Encoder;
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as {
  RecordBatch: (args: object) => Promise<{ buffer: Buffer }>;
};
const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (args: object) => unknown;
const v11 = require('kafkajs/src/protocol/requests/fetch/v11/response') as {
  decode: (data: Buffer) => Promise<unknown>;
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** kafkajs's own decoder, kept before the replacement is installed. */
const kafkajsDecode = v11.decode;

let seed = 11;
function random(n: number): number {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed % n;
}

const NAMES = ['sluice-destination-id', 'sluice-attempt', 'Zoë → 東京', 'x', ''];

function someBytes(): Buffer | null {
  return random(6) === 0 ? null : randomBytes(random(4) === 0 ? random(3000) : random(60));
}

function someRecord(i: number): unknown {
  const headers: Record<string, Buffer | string | Buffer[]> = {};
  for (let h = random(5); h > 0; h -= 1) {
    const name = NAMES[random(NAMES.length)];
    // Now and then a name repeated: kafkajs keeps its values as an array.
    headers[name] = random(5) === 0 ? [randomBytes(3), randomBytes(0)] : randomBytes(random(40));
  }
  return Record({
    offsetDelta: i,
    timestampDelta: random(3) === 0 ? -random(1000) : random(100_000),
    key: someBytes(),
    value: someBytes(),
    headers,
  });
}

/** A record batch; `attributes` bits OR-ed in afterwards (the CRC is not checked on fetch). */
async function someBatch(firstOffset: string, compression = 0, attributes = 0): Promise<Buffer> {
  const records = Array.from({ length: 1 + random(8) }, (_, i) => someRecord(i));
  const { buffer } = await RecordBatch({
    compression,
    firstOffset,
    firstTimestamp: 1_795_000_000_000 + random(1000),
    maxTimestamp: 1_795_000_100_000,
    producerId: random(2) === 0 ? -1 : 4_242,
    producerEpoch: random(3),
    firstSequence: random(100),
    partitionLeaderEpoch: random(9),
    records,
  });
  if (attributes !== 0) buffer.writeInt16BE(buffer.readInt16BE(21) | attributes, 21);
  return buffer;
}

interface PartitionSpec {
  readonly records: Buffer;
  readonly aborted?: number;
}

/** A Fetch v11 response body with the given record sets per topic and partition. */
function response(topics: readonly { name: string; partitions: PartitionSpec[] }[]): Buffer {
  const encoder = new Encoder().writeInt32(7).writeInt16(0).writeInt32(1_234);
  encoder.writeInt32(topics.length);
  for (const topic of topics) {
    encoder.writeString(topic.name).writeInt32(topic.partitions.length);
    topic.partitions.forEach((p, index) => {
      encoder
        .writeInt32(index)
        .writeInt16(0)
        .writeInt64('9007199254741000')
        .writeInt64('12')
        .writeInt64('3');
      encoder.writeInt32(p.aborted ?? 0);
      for (let a = 0; a < (p.aborted ?? 0); a += 1) encoder.writeInt64(77).writeInt64(5 + a);
      encoder.writeInt32(-1).writeInt32(p.records.length).writeBuffer(p.records);
    });
  }
  return encoder.buffer;
}

interface Decoded {
  responses: { partitions: { messages: Record<string, unknown>[] }[] }[];
}

/**
 * Our decoding with each record's headers read (they stay in the fetched bytes until asked
 * for), to compare with kafkajs's plain records.
 */
async function ours(body: Buffer): Promise<Decoded> {
  const decoded = (await v11.decode(body)) as Decoded;
  for (const response of decoded.responses) {
    for (const partition of response.partitions) {
      partition.messages = partition.messages.map((m) =>
        m instanceof FetchedMessage ? { ...m, headers: m.headers } : m,
      );
    }
  }
  return decoded;
}

/** Every record of a decoded response. */
function messagesOf(decoded: Decoded): Record<string, unknown>[] {
  return decoded.responses.flatMap((r) => r.partitions.flatMap((p) => p.messages));
}

describe(`${installFetchResponseReplacement.name} on another kafkajs`, () => {
  it("refuses and leaves kafkajs's decoder in place", () => {
    expect(() => installFetchResponseReplacement('2.2.3')).toThrow(KafkajsVersionError);
    expect(() => installFetchResponseReplacement('2.2.3')).toThrow(
      expect.objectContaining({ code: 'KAFKAJS_VERSION_UNSUPPORTED', found: '2.2.3' }),
    );
    expect(v11.decode).toBe(kafkajsDecode);
  });
});

describe(installFetchResponseReplacement.name, () => {
  beforeAll(() => {
    installFetchResponseReplacement();
    expect(v11.decode).not.toBe(kafkajsDecode);
  });

  it('decodes random uncompressed batches exactly as kafkajs does', async () => {
    for (let round = 0; round < 30; round += 1) {
      const partitions: PartitionSpec[] = [];
      for (let p = random(4); p >= 0; p -= 1) {
        const batches: Buffer[] = [];
        let offset = random(1_000_000);
        for (let b = random(4); b > 0; b -= 1) {
          batches.push(await someBatch(String(offset)));
          offset += 20;
        }
        partitions.push({ records: Buffer.concat(batches), aborted: random(3) });
      }
      const body = response([
        { name: 'sluice.deliveries.v1', partitions },
        { name: 'other', partitions: [{ records: Buffer.alloc(0) }] },
      ]);
      await expect(ours(body)).resolves.toEqual(await kafkajsDecode(body));
    }
  });

  it('stops at a batch cut off by the fetch size, as kafkajs does', async () => {
    const whole = Buffer.concat([await someBatch('100'), await someBatch('120')]);
    for (const cut of [1, 30, 70]) {
      const body = response([{ name: 't', partitions: [{ records: whole.subarray(0, -cut) }] }]);
      const decoded = await ours(body);
      expect(decoded).toEqual(await kafkajsDecode(body));
      expect(decoded.responses[0].partitions[0].messages.length).toBeGreaterThan(0);
    }
  });

  it('reads offsets and timestamps beyond 2^53, broker-stamped times, control and transactional batches', async () => {
    const body = response([
      {
        name: 't',
        partitions: [
          { records: await someBatch('9007199254740990') },
          { records: await someBatch('5', 0, 0x08) },
          { records: await someBatch('6', 0, 0x20 | 0x10) },
        ],
      },
    ]);
    const decoded = await ours(body);
    expect(decoded).toEqual(await kafkajsDecode(body));
    expect(JSON.stringify(decoded)).toContain('"offset":"9007199254740991"');
  });

  it("leaves compressed batches to kafkajs's decoder, among its own", async () => {
    const records = Buffer.concat([
      await someBatch('10'),
      await someBatch('30', CompressionTypes.GZIP),
      await someBatch('50'),
    ]);
    const body = response([{ name: 't', partitions: [{ records }] }]);
    const decoded = await ours(body);
    expect(decoded).toEqual(await kafkajsDecode(body));
    expect(decoded.responses[0].partitions[0].messages.map((m) => m.offset)).toContain('30');
  });

  it("reads a header's last value by name from the fetched bytes, as the header map has it", async () => {
    const records = Buffer.concat([
      await someBatch('10'),
      await someBatch('30'),
      await someBatch('50'),
    ]);
    const body = response([{ name: 't', partitions: [{ records }] }]);
    const fetched = messagesOf((await v11.decode(body)) as Decoded) as unknown as FetchedMessage[];
    let found = 0;
    // Matched by name as semantics/records.ts's HeaderNames matches them.
    const wanted = [...NAMES, 'null', 'absent'];
    const names = {
      names: wanted,
      indexOf: (bytes: Uint8Array, at: number, length: number) =>
        wanted.indexOf(length < 0 ? 'null' : Buffer.from(bytes).toString('utf8', at, at + length)),
    };
    for (const message of fetched) {
      expect(message).toBeInstanceOf(FetchedMessage);
      expect(message.headerTexts(names)).toEqual(
        names.names.map((name) => message.headerText(name)),
      );
      for (const name of [...NAMES, 'null', 'absent']) {
        const value = message.headers[name];
        const last = Array.isArray(value) ? value[value.length - 1] : value;
        expect(message.headerText(name)).toBe(last?.toString('utf8'));
        if (last) found += 1;
      }
    }
    expect(found).toBeGreaterThan(0);
  });
});
