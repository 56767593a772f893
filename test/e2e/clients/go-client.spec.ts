import { randomBytes } from 'node:crypto';

import { HEADER, TOPIC } from '@app/contracts';
import { headerText } from '@app/kafka';

import { describeFailure, runGo } from '../../../libs/analytics-go/go-command';
import { IngestHarness, TestSource } from '../../helpers/ingest-harness';
import { json } from '../../helpers/topic-reader';

/** Rounds of one call per type: 306 calls, so the last batch of 20 is left for Close. */
const ROUNDS = 51;
const TYPES = ['alias', 'identify', 'track', 'page', 'screen', 'group'] as const;
const CALLS = ROUNDS * TYPES.length;
/** Compiling the program on a busy machine takes a while. */
const GO_RUN_TIMEOUT_MS = 240_000;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

type Call = Record<string, any>;

/** The round a call belongs to, from the end of its user or anonymous id. */
function roundOf(call: Call): number {
  const id = String(call.userId ?? call.anonymousId);
  return Number(/-(\d+)$/.exec(id)?.[1]);
}

/** What each type must carry, beyond the fields every call has. */
function expectFields(call: Call, run: string): void {
  const i = roundOf(call);
  const user = `go-${run}-${i}`;
  const anon = `anon-${run}-${i}`;
  switch (call.type) {
    case 'alias':
      expect(call).toMatchObject({ userId: user, previousId: anon });
      break;
    case 'identify':
      expect(call).toMatchObject({ userId: user, traits: { seq: i, plan: 'pro' } });
      break;
    case 'track':
      expect(call).toMatchObject({ userId: user, event: 'Go E2E', properties: { seq: i } });
      break;
    case 'page':
      expect(call).toMatchObject({
        userId: user,
        name: 'Pricing',
        category: 'Docs',
        properties: { seq: i, path: '/pricing' },
      });
      expect(call).not.toHaveProperty('traits');
      break;
    case 'screen':
      expect(call).toMatchObject({ anonymousId: anon, name: 'Home', properties: { seq: i } });
      break;
    case 'group':
      expect(call).toMatchObject({
        userId: user,
        groupId: `g-${run}`,
        traits: { seq: i },
        context: { locale: 'fr-FR' },
        integrations: { Webhooks: false },
      });
      break;
    default:
      throw new Error(`unexpected call type ${String(call.type)}`);
  }
}

describe('the Go client library against ingest', () => {
  const h = new IngestHarness();
  let source: TestSource;

  beforeAll(async () => {
    await h.start();
    source = await h.source();
  });

  afterAll(() => h.close());

  it(
    'delivers every call of every type to sluice.calls.v1, with nothing lost across Close',
    async () => {
      const run = randomBytes(4).toString('hex');
      const args = ['run', './internal/e2e', '-endpoint', h.url, '-writekey', source.writeKey];
      args.push('-run', run, '-n', String(ROUNDS));
      const result = await runGo(args, GO_RUN_TIMEOUT_MS - 30_000);
      if (result.code !== 0) throw new Error(describeFailure(args, result));
      // The program has exited after Close: every call was answered for.
      const summary = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '');
      expect(summary).toEqual({
        queued: CALLS + 1,
        succeeded: CALLS,
        failed: 1,
        rejected: ['invalid_call'],
      });

      const records = await h.reader.waitFor(TOPIC.calls, () => true, CALLS, 30_000);
      expect(records).toHaveLength(CALLS);
      const calls = records.map((r) => json(r) as Call);
      const messageIds = new Set(calls.map((c) => String(c.messageId)));
      expect(messageIds.size).toBe(CALLS);
      for (const [n, call] of calls.entries()) {
        expect(call.messageId).toMatch(UUID_V4);
        expect(headerText(records[n], HEADER.callType)).toBe(call.type);
        expect(call.context.library).toEqual({ name: 'analytics-go', version: '2.0.0' });
        // The library sends no timestamp: the server's time of receipt is used.
        expect(call.timestamp).toBe(call.receivedAt);
        expectFields(call, run);
      }
      for (const type of TYPES) {
        const rounds = calls.filter((c) => c.type === type).map(roundOf);
        expect([...rounds].sort((a, b) => a - b)).toEqual([...Array(ROUNDS).keys()]);
      }

      // The call with a malformed timestamp was refused alone, and recorded as rejected.
      const [rejected] = await h.reader.waitFor(
        TOPIC.ingestRejected,
        (r) => headerText(r, HEADER.reason) === 'invalid_call',
      );
      expect(json(rejected)).toMatchObject({ type: 'track', event: 'Bad' });
    },
    GO_RUN_TIMEOUT_MS,
  );
});
