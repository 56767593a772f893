import { randomUUID } from 'node:crypto';

import { HEADER, TOPIC } from '@app/contracts';
import { BatchProducer, headerText, OutgoingRecord } from '@app/kafka';

import { IngestHarness, TestSource } from '../../helpers/ingest-harness';
import { json } from '../../helpers/topic-reader';

/** Records published straight to sluice.ingest.v1 end on the calls or the rejected topic. */
describe('the Kafka ingress', () => {
  const h = new IngestHarness();
  let producer: BatchProducer;
  let source: TestSource;

  beforeAll(async () => {
    await h.start();
    source = await h.source();
    producer = new BatchProducer(h.connection);
    await producer.connect();
  });

  afterAll(async () => {
    await producer?.disconnect();
    await h.close();
  });

  const publish = (records: Omit<OutgoingRecord, 'topic'>[]) =>
    producer.send(records.map((r) => ({ ...r, topic: TOPIC.ingest })));

  it('accepts a call with the write key in a header, and a batch with it in the body', async () => {
    const single = randomUUID();
    const batched = [randomUUID(), randomUUID()];
    await publish([
      {
        key: 'k1',
        value: JSON.stringify({ type: 'track', userId: 'k-u1', event: 'E', messageId: single }),
        headers: { [HEADER.writeKey]: source.writeKey },
      },
      {
        key: 'k2',
        value: JSON.stringify({
          writeKey: source.writeKey,
          batch: batched.map((messageId) => ({ type: 'identify', userId: 'k-u2', messageId })),
        }),
      },
    ]);
    for (const messageId of [single, ...batched]) {
      const [record] = await h.reader.waitFor(
        TOPIC.calls,
        (r) => headerText(r, HEADER.messageId) === messageId,
      );
      expect(headerText(record, HEADER.sourceId)).toBe(source.id);
      const call = json(record);
      expect(call).toMatchObject({ messageId });
      expect(call).not.toHaveProperty('writeKey');
      expect(call.context).toEqual({});
    }
  });

  it.each([
    [
      'an invalid call',
      JSON.stringify({ type: 'track', userId: 'x', marker: 'invalid-call' }),
      'invalid_call',
    ],
    ['a body without a type', JSON.stringify({ userId: 'x', marker: 'no-type' }), 'invalid_call'],
  ])('sends %s to the rejected topic with its reason', async (_what, value, reason) => {
    const key = randomUUID();
    await publish([{ key, value, headers: { [HEADER.writeKey]: source.writeKey } }]);
    const [record] = await h.reader.waitFor(TOPIC.ingestRejected, (r) => r.key?.toString() === key);
    expect(headerText(record, HEADER.reason)).toBe(reason);
    expect(record.value?.toString()).toBe(value);
  });

  it('sends bytes that are not JSON to the rejected topic, with the write key blanked', async () => {
    const key = randomUUID();
    const value = `{"writeKey":"${source.writeKey}","type":"track",`;
    await publish([{ key, value }]);
    const [record] = await h.reader.waitFor(TOPIC.ingestRejected, (r) => r.key?.toString() === key);
    expect(headerText(record, HEADER.reason)).toBe('invalid_json');
    expect(record.value?.toString()).toBe('{"writeKey":"[removed]","type":"track",');
  });

  it('rejects a record over the request limit, and one with an unknown key', async () => {
    const big = randomUUID();
    const unknown = randomUUID();
    await publish([
      {
        key: big,
        value: JSON.stringify({ type: 'track', userId: 'u', event: 'E', pad: 'z'.repeat(520_000) }),
      },
      {
        key: unknown,
        value: JSON.stringify({ type: 'track', userId: 'u', event: 'E' }),
        headers: { [HEADER.writeKey]: 'nope' },
      },
    ]);
    const [tooBig] = await h.reader.waitFor(TOPIC.ingestRejected, (r) => r.key?.toString() === big);
    expect(headerText(tooBig, HEADER.reason)).toBe('request_too_large');
    expect(tooBig.value?.length ?? 0).toBe(0);
    const [refused] = await h.reader.waitFor(
      TOPIC.ingestRejected,
      (r) => r.key?.toString() === unknown,
    );
    expect(headerText(refused, HEADER.reason)).toBe('unauthorized');
  });

  it('keeps consuming after garbage: a valid call behind it still arrives', async () => {
    const messageId = randomUUID();
    await publish([
      { key: 'g', value: Buffer.from([0xff, 0x00, 0x13]) },
      { key: 'g', value: null as unknown as string },
      {
        key: 'g',
        value: JSON.stringify({ type: 'page', userId: 'g', messageId }),
        headers: { [HEADER.writeKey]: source.writeKey },
      },
    ]);
    await h.reader.waitFor(TOPIC.calls, (r) => headerText(r, HEADER.messageId) === messageId);
  });
});
