import { randomUUID } from 'node:crypto';

import { HEADER } from '@app/contracts';
import { headerText } from '@app/kafka';

import { TestSource } from '../../helpers/ingest-harness';
import { RouterHarness } from '../../helpers/router-harness';

/**
 * The integrations rules (docs/architecture.md, "Security") end to end: a call sent to ingest with these
 * fields is delivered by the router, or not. The verdict is computed once at ingest and
 * travels in a header; this checks the two together.
 */
const CASES: readonly { name: string; fields: Record<string, unknown>; delivered: boolean }[] = [
  { name: 'no integrations object', fields: {}, delivered: true },
  { name: 'an empty object', fields: { integrations: {} }, delivered: true },
  { name: 'All false', fields: { integrations: { All: false } }, delivered: false },
  {
    name: 'All false, Webhooks true',
    fields: { integrations: { All: false, Webhooks: true } },
    delivered: true,
  },
  {
    name: 'All false, Webhooks an object',
    fields: { integrations: { All: false, Webhooks: { x: 1 } } },
    delivered: true,
  },
  {
    name: 'All false, Webhooks an empty object',
    fields: { integrations: { All: false, Webhooks: {} } },
    delivered: true,
  },
  { name: 'Webhooks false', fields: { integrations: { Webhooks: false } }, delivered: false },
  {
    name: 'All true, Webhooks false',
    fields: { integrations: { All: true, Webhooks: false } },
    delivered: false,
  },
  { name: 'All true', fields: { integrations: { All: true } }, delivered: true },
  {
    name: 'another destination false',
    fields: { integrations: { Amplitude: false } },
    delivered: true,
  },
  {
    name: 'All false, another destination true',
    fields: { integrations: { All: false, Amplitude: true } },
    delivered: false,
  },
  {
    name: 'Webhooks a string: ignored',
    fields: { integrations: { Webhooks: 'false' } },
    delivered: true,
  },
  {
    name: 'Webhooks a number: ignored',
    fields: { integrations: { Webhooks: 0 } },
    delivered: true,
  },
  { name: 'Webhooks null: ignored', fields: { integrations: { Webhooks: null } }, delivered: true },
  {
    name: 'Webhooks an array: ignored',
    fields: { integrations: { Webhooks: [] } },
    delivered: true,
  },
  {
    name: 'All false, Webhooks a string: ignored',
    fields: { integrations: { All: false, Webhooks: 'yes' } },
    delivered: false,
  },
  {
    name: 'All false, Webhooks 1: ignored',
    fields: { integrations: { All: false, Webhooks: 1 } },
    delivered: false,
  },
  { name: 'All a string: ignored', fields: { integrations: { All: 'false' } }, delivered: true },
  {
    name: 'case-sensitive: webhooks false',
    fields: { integrations: { webhooks: false } },
    delivered: true,
  },
  {
    name: 'case-sensitive: WEBHOOKS false',
    fields: { integrations: { WEBHOOKS: false } },
    delivered: true,
  },
  {
    name: 'case-sensitive: All false, webhooks true',
    fields: { integrations: { All: false, webhooks: true } },
    delivered: false,
  },
  { name: 'case-sensitive: all false', fields: { integrations: { all: false } }, delivered: true },
  {
    name: 'context.integrations Webhooks false',
    fields: { context: { integrations: { Webhooks: false } } },
    delivered: false,
  },
  {
    name: 'context.integrations All false',
    fields: { context: { integrations: { All: false } } },
    delivered: false,
  },
  {
    name: 'context.integrations All false, Webhooks true',
    fields: { context: { integrations: { All: false, Webhooks: true } } },
    delivered: true,
  },
  {
    name: 'top level wins over context.integrations',
    fields: { integrations: { Webhooks: true }, context: { integrations: { Webhooks: false } } },
    delivered: true,
  },
  {
    name: 'an empty top level still wins over context.integrations',
    fields: { integrations: {}, context: { integrations: { All: false } } },
    delivered: true,
  },
];

const h = new RouterHarness();
let source: TestSource;
/** Message id of each case's call. */
const ids = new Map<string, string>();

beforeAll(async () => {
  await h.start();
  source = await h.source();
  await h.destination(source.id);
  for (const { name, fields } of CASES) {
    const messageId = randomUUID();
    ids.set(name, messageId);
    const body = { userId: 'u-integrations', event: 'E', messageId, ...fields };
    const answer = await h.post('/v1/track', body, { basic: source.writeKey });
    if (answer.status !== 200) throw new Error(`case "${name}" answered ${answer.status}`);
  }
  await h.settled();
});

afterAll(() => h.close());

describe('the integrations object through ingest and the router', () => {
  it.each(CASES)('$name: delivered $delivered', ({ name, delivered }) => {
    const messageId = ids.get(name) as string;
    expect(h.deliveriesOf(messageId)).toHaveLength(delivered ? 1 : 0);
  });

  it('a batch-level integrations object applies to messages without their own', async () => {
    const [inherits, overrides] = [randomUUID(), randomUUID()];
    const answer = await h.post(
      '/v1/batch',
      {
        integrations: { All: false },
        batch: [
          { type: 'track', userId: 'u-batch', event: 'E', messageId: inherits },
          {
            type: 'track',
            userId: 'u-batch',
            event: 'E',
            messageId: overrides,
            integrations: { Webhooks: true },
          },
        ],
      },
      { basic: source.writeKey },
    );
    expect(answer.status).toBe(200);
    await h.settled();
    expect(h.deliveriesOf(inherits)).toHaveLength(0);
    expect(h.deliveriesOf(overrides)).toHaveLength(1);
  });

  it('counts the calls the integrations object filtered', async () => {
    const filtered = CASES.filter(({ delivered }) => !delivered).length;
    await expect(
      h.routerMetric('sluice_router_calls_filtered_total', { reason: 'integrations' }),
    ).resolves.toBe(filtered + 1);
    const record = await h.callRecord(ids.get('All false') as string);
    expect(headerText(record, HEADER.integrations)).toBe('{"Webhooks":false}');
  });
});
