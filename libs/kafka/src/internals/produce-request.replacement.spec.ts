import { randomBytes } from 'node:crypto';

import { CompressionTypes, Partitioners } from 'kafkajs';

import { crc32c } from './crc32c';
import { KafkajsVersionError } from './kafkajs-version';
import { keyHashPartitioner, murmur2 } from './partitioner';
import {
  encodeProduceRequest,
  encodes,
  installProduceRequestReplacement,
  ProduceMessage,
  ProduceRequestArgs,
} from './produce-request.replacement';

/* eslint-disable @typescript-eslint/no-require-imports */
const kafkajsRequestV3 = require('kafkajs/src/protocol/requests/produce/v3/request') as (
  args: ProduceRequestArgs,
) => { encode(): Promise<{ buffer: Buffer }> };
const kafkajsCrc32c = require('kafkajs/src/protocol/recordBatch/crc32C') as (b: Buffer) => number;
const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2') as (
  key: Buffer | string,
) => number;
const kafkajsProduce = require('kafkajs/src/protocol/requests/produce') as {
  protocol: (v: { version: number }) => (args: ProduceRequestArgs) => {
    request: { apiVersion: number; encode(): Promise<{ buffer: Buffer }> };
  };
};
/* eslint-enable @typescript-eslint/no-require-imports */

const NOW = 1_795_000_000_123;

/** kafkajs's own bytes for the request, with its clock fixed at NOW. */
async function kafkajsBytes(args: ProduceRequestArgs): Promise<Buffer> {
  const clock = jest.spyOn(Date, 'now').mockReturnValue(NOW);
  try {
    return (await kafkajsRequestV3(args).encode()).buffer;
  } finally {
    clock.mockRestore();
  }
}

let seed = 7;
function random(n: number): number {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed % n;
}

const TEXTS = ['', 'a', 'track', 'Zoë → 東京 🚀', 'x'.repeat(200), '{"Webhooks":true}'];

function someBytes(): Buffer | string | null {
  switch (random(4)) {
    case 0:
      return null;
    case 1:
      return randomBytes(random(300));
    case 2:
      return TEXTS[random(TEXTS.length)] + 'y'.repeat(random(3000));
    default:
      return TEXTS[random(TEXTS.length)];
  }
}

function someMessage(): ProduceMessage {
  const headers: Record<string, Buffer | string | null | (Buffer | string)[]> = {};
  for (let i = random(5); i > 0; i -= 1) {
    headers[`h-${i}-${TEXTS[random(TEXTS.length)]}`] =
      random(5) === 0 ? ['one', Buffer.from('two')] : (someBytes() ?? 'v');
  }
  return {
    key: someBytes(),
    value: someBytes(),
    ...(random(3) === 0 ? {} : { headers }),
  };
}

function someRequest(): ProduceRequestArgs {
  return {
    acks: random(2) === 0 ? -1 : 1,
    timeout: 30_000,
    producerId: String(random(2) === 0 ? -1 : 4_000_000_000 + random(1000)),
    producerEpoch: random(3),
    topicData: Array.from({ length: 1 + random(3) }, (_, t) => ({
      topic: `topic-${t}-${TEXTS[random(TEXTS.length)]}`,
      partitions: Array.from({ length: 1 + random(4) }, (_, p) => ({
        partition: p * 3,
        firstSequence: random(100_000),
        messages: Array.from({ length: 1 + random(150) }, someMessage),
      })),
    })),
  };
}

describe('crc32c', () => {
  it('gives the check value of the Castagnoli CRC', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(Buffer.alloc(0))).toBe(0);
  });

  it("agrees with kafkajs's CRC at every length and offset", () => {
    for (let length = 0; length < 70; length += 1) {
      const bytes = randomBytes(length + 5);
      expect(crc32c(bytes, 3, 3 + length)).toBe(kafkajsCrc32c(bytes.subarray(3, 3 + length)));
    }
  });

  it.each([1_023, 1_024, 1_025, 2_048 + 7, 100_003])(
    'agrees with it across the chunks it hashes a call at (%d bytes)',
    (length) => {
      const bytes = randomBytes(length + 5);
      expect(crc32c(bytes, 3, 3 + length)).toBe(kafkajsCrc32c(bytes.subarray(3, 3 + length)));
    },
  );
});

describe('murmur2 and the key partitioner', () => {
  it("agrees with kafkajs's (Java-compatible) murmur2 for text and bytes of every length", () => {
    for (let length = 0; length < 80; length += 1) {
      const text = `${TEXTS[length % TEXTS.length]}:user-${length}`.slice(0, length);
      expect(murmur2(text)).toBe(kafkajsMurmur2(text));
      const bytes = randomBytes(length);
      expect(murmur2(bytes)).toBe(kafkajsMurmur2(bytes));
    }
  });

  it('puts a keyed record where the default partitioner does; an explicit partition wins', () => {
    const ours = keyHashPartitioner();
    const theirs = Partitioners.DefaultPartitioner();
    const partitionMetadata = Array.from({ length: 6 }, (_, i) => ({
      partitionId: i,
      leader: 1,
      partitionErrorCode: 0,
      replicas: [1],
      isr: [1],
    }));
    for (let i = 0; i < 500; i += 1) {
      const message = { key: `6f1c2e0a-source:user-${i}`, value: 'v' };
      const args = { topic: 't', partitionMetadata, message };
      expect(ours(args)).toBe(theirs(args));
    }
    expect(ours({ topic: 't', partitionMetadata, message: { value: 'v', partition: 4 } })).toBe(4);
  });

  it('spreads records without a key over the partitions that have a leader', () => {
    const partitioner = keyHashPartitioner();
    const partitionMetadata = [0, 1, 2].map((partitionId) => ({
      partitionId,
      leader: partitionId === 1 ? -1 : 1,
      partitionErrorCode: 0,
      replicas: [1],
      isr: [1],
    }));
    const seen = new Set<number>();
    for (let i = 0; i < 10; i += 1) {
      seen.add(partitioner({ topic: 't', partitionMetadata, message: { value: 'v' } }));
    }
    expect([...seen].sort()).toEqual([0, 2]);
  });
});

describe('encodeProduceRequest', () => {
  it("writes exactly kafkajs's bytes for random requests", async () => {
    for (let i = 0; i < 40; i += 1) {
      const args = someRequest();
      expect(encodes(args)).toBe(true);
      expect(encodeProduceRequest(args, NOW).equals(await kafkajsBytes(args))).toBe(true);
    }
  });

  it("writes exactly kafkajs's bytes for a call record as ingest produces it", async () => {
    const args: ProduceRequestArgs = {
      acks: -1,
      timeout: 30_000,
      producerId: '1234',
      producerEpoch: 0,
      topicData: [
        {
          topic: 'sluice.calls.v1',
          partitions: [
            {
              partition: 2,
              firstSequence: 17,
              messages: [
                {
                  key: 'source:user-1',
                  value: JSON.stringify({ type: 'track', event: 'Order Completed' }),
                  headers: { 'sluice-source-id': 'source', 'sluice-call-type': 'track' },
                },
              ],
            },
          ],
        },
      ],
    };
    expect(encodeProduceRequest(args, NOW).equals(await kafkajsBytes(args))).toBe(true);
  });

  it('leaves compressed, transactional and timestamped requests to kafkajs', () => {
    const base = someRequest();
    expect(encodes({ ...base, compression: CompressionTypes.GZIP })).toBe(false);
    expect(encodes({ ...base, transactionalId: 'tx' })).toBe(false);
    const timed = {
      ...base,
      topicData: [
        {
          topic: 't',
          partitions: [{ partition: 0, messages: [{ value: 'v', timestamp: '1700000000000' }] }],
        },
      ],
    };
    expect(encodes(timed)).toBe(false);
  });
});

describe(installProduceRequestReplacement.name, () => {
  it("refuses another kafkajs version and leaves kafkajs's encoder in place", () => {
    const { protocol } = kafkajsProduce;
    expect(() => installProduceRequestReplacement('3.0.0')).toThrow(KafkajsVersionError);
    expect(() => installProduceRequestReplacement('3.0.0')).toThrow(
      expect.objectContaining({ code: 'KAFKAJS_VERSION_UNSUPPORTED', found: '3.0.0' }),
    );
    expect(kafkajsProduce.protocol).toBe(protocol);
  });

  it("makes kafkajs's Produce v3 to v7 requests send the same bytes through this encoder", async () => {
    const { protocol } = kafkajsProduce;
    installProduceRequestReplacement();
    expect(kafkajsProduce.protocol).not.toBe(protocol);
    const args = someRequest();
    const expected = await kafkajsBytes(args);
    for (const version of [3, 5, 7]) {
      const { request } = kafkajsProduce.protocol({ version })(args);
      const clock = jest.spyOn(Date, 'now').mockReturnValue(NOW);
      try {
        const encoded = await request.encode();
        expect(request.apiVersion).toBe(version);
        expect(encoded.buffer.equals(expected)).toBe(true);
      } finally {
        clock.mockRestore();
      }
    }
  });

  it('keeps kafkajs encoding a compressed request', async () => {
    installProduceRequestReplacement();
    const args = { ...someRequest(), compression: CompressionTypes.GZIP };
    const { request } = kafkajsProduce.protocol({ version: 7 })(args);
    // kafkajs's gzip output starts its record batch like any other; only the length of what
    // it returns shows that its own (compressing) encoder ran.
    const plain = encodeProduceRequest({ ...args, compression: undefined }, NOW);
    expect((await request.encode()).buffer.length).not.toBe(plain.length);
  });
});
