import { randomUUID } from 'node:crypto';

import { HEADER, TOPIC } from '@app/contracts';
import { headerText } from '@app/kafka';

import { IngestHarness } from '../../helpers/ingest-harness';
import { eventually } from '../../helpers/services';
import { SpareBroker } from '../../helpers/spare-broker';

/**
 * Ingest against a broker of its own, which the test stops in the middle of the traffic:
 * requests Kafka cannot take are answered 503 kafka_unavailable, and every call answered 200
 * is on the topic once the broker is back.
 */
describe('Kafka stopped during requests', () => {
  const broker = new SpareBroker();
  const h = new IngestHarness();

  beforeAll(async () => {
    await broker.start();
    await h.start({ KAFKA_BROKERS: broker.brokers, INGEST_PRODUCE_TIMEOUT_MS: '2000' });
  });

  afterAll(async () => {
    await h.close();
    await broker.destroy();
  });

  it('answers 503 while Kafka is away and loses no acknowledged call', async () => {
    const source = await h.source();
    const acknowledged: string[] = [];
    const answers: { status: number; code?: unknown }[] = [];
    let stopping: Promise<void> | undefined;
    const deadline = Date.now() + 60_000;
    // Sequential batches of 5; the broker is stopped after 10 acknowledged requests.
    while (answers.filter((a) => a.status === 503).length < 3 && Date.now() < deadline) {
      const ids = Array.from({ length: 5 }, () => randomUUID());
      const answer = await h.post(
        '/v1/batch',
        { batch: ids.map((messageId) => ({ type: 'track', userId: 'u', event: 'E', messageId })) },
        { basic: source.writeKey },
      );
      answers.push({ status: answer.status, code: answer.body.code });
      if (answer.status === 200) acknowledged.push(...ids);
      if (acknowledged.length >= 50) stopping ??= broker.stop();
    }
    await stopping;
    const failed = answers.filter((a) => a.status !== 200);
    expect(failed.length).toBeGreaterThanOrEqual(3);
    expect(failed).toEqual(failed.map(() => ({ status: 503, code: 'kafka_unavailable' })));

    await broker.start();
    const seen = await eventually(
      () => {
        const ids = new Set(
          h.reader.records
            .filter((r) => r.topic === TOPIC.calls)
            .map((r) => headerText(r, HEADER.messageId)),
        );
        return acknowledged.every((id) => ids.has(id)) ? ids : undefined;
      },
      60_000,
      'every acknowledged call on the topic after the restart',
    );
    expect(acknowledged.filter((id) => !seen.has(id))).toEqual([]);
  });
});
