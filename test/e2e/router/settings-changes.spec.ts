import { randomUUID } from 'node:crypto';

import { HEADER } from '@app/contracts';

import { TestSource } from '../../helpers/ingest-harness';
import { RouterHarness } from '../../helpers/router-harness';

/** A settings change must be followed by the router within this long, without a restart. */
const TAKES_EFFECT_MS = 1_000;
/** Calls keep being sent this long after the change (the last half second is checked). */
const SEND_FOR_MS = 1_500;

const h = new RouterHarness();
let source: TestSource;

beforeAll(async () => {
  await h.start();
});

beforeEach(async () => {
  source = await h.source();
  await h.destination(source.id);
});

afterAll(() => h.close());

/** Message ids of calls sent up to, and more than, one second after a change committed. */
interface Sent {
  readonly early: string[];
  readonly late: string[];
}

/**
 * Commits `change`, then sends calls one after another (each awaited, no sleeping) for
 * SEND_FOR_MS, and waits until the router has routed all of them.
 */
async function sendAround(change: string, send: () => Promise<string>): Promise<Sent> {
  await h.sql(change, [source.id]);
  const committedAt = Date.now();
  const sent: Sent = { early: [], late: [] };
  while (Date.now() < committedAt + SEND_FOR_MS) {
    const sentAt = Date.now();
    const messageId = await send();
    (sentAt - committedAt > TAKES_EFFECT_MS ? sent.late : sent.early).push(messageId);
  }
  await h.settled();
  return sent;
}

/** One call through ingest's HTTP API; returns its message id. */
async function postCall(): Promise<string> {
  const messageId = randomUUID();
  const body = { userId: `u-${messageId.slice(0, 4)}`, event: 'E', messageId };
  const answer = await h.post('/v1/track', body, { basic: source.writeKey });
  if (answer.status !== 200) throw new Error(`ingest answered ${answer.status}`);
  return messageId;
}

/**
 * One call record published straight to the calls topic, as one accepted before its source
 * was disabled would be (ingest refuses the calls of a disabled source).
 */
async function publishCall(): Promise<string> {
  const messageId = randomUUID();
  await h.publishCalls([
    {
      key: `${source.id}:u-${messageId.slice(0, 4)}`,
      value: JSON.stringify({ version: 1, type: 'track', event: 'E', messageId }),
      headers: {
        [HEADER.sourceId]: source.id,
        [HEADER.callType]: 'track',
        [HEADER.messageId]: messageId,
        [HEADER.integrations]: '{"Webhooks":true}',
      },
    },
  ]);
  return messageId;
}

const delivered = (ids: readonly string[]) => ids.filter((id) => h.deliveriesOf(id).length > 0);

describe('settings changes reach the router within one second, without a restart', () => {
  it('disabling the destination filters calls sent more than 1 s later', async () => {
    const before = await postCall();
    await h.delivery(before);
    const sent = await sendAround(
      `UPDATE destination SET enabled = false WHERE source_id = $1`,
      postCall,
    );
    expect(sent.late.length).toBeGreaterThan(0);
    expect(delivered(sent.late)).toEqual([]);
  });

  it('enabling it again delivers calls sent more than 1 s later', async () => {
    await h.sql(`UPDATE destination SET enabled = false WHERE source_id = $1`, [source.id]);
    await h.routerSees('the disabled destination', (d) => d?.enabled === false, source.id);
    const sent = await sendAround(
      `UPDATE destination SET enabled = true WHERE source_id = $1`,
      postCall,
    );
    expect(sent.late.length).toBeGreaterThan(0);
    expect(delivered(sent.late)).toEqual(sent.late);
  });

  it('disabling the source filters its calls still on the topic', async () => {
    const before = await publishCall();
    await h.delivery(before);
    const filtered = () =>
      h.routerMetric('sluice_router_calls_filtered_total', { reason: 'source_disabled' });
    const filteredBefore = await filtered();
    const sent = await sendAround(`UPDATE source SET enabled = false WHERE id = $1`, publishCall);
    expect(sent.late.length).toBeGreaterThan(0);
    expect(delivered(sent.late)).toEqual([]);
    expect(await filtered()).toBeGreaterThanOrEqual(filteredBefore + sent.late.length);
  });

  it('removing the destination filters calls sent more than 1 s later', async () => {
    const sent = await sendAround(`DELETE FROM destination WHERE source_id = $1`, postCall);
    expect(sent.late.length).toBeGreaterThan(0);
    expect(delivered(sent.late)).toEqual([]);
  });
});
