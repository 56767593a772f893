import { readdirSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';

import { CALL_TYPES, HEADER, RoutedCallType, TOPIC } from '@app/contracts';
import { headerText } from '@app/kafka';

import { TestSource } from '../../helpers/ingest-harness';
import { RouterHarness, TestDestination } from '../../helpers/router-harness';

const GOLDEN_DIR = join(__dirname, '..', '..', 'fixtures', 'golden');
const ROUTED_TYPES: readonly RoutedCallType[] = [...CALL_TYPES, 'delete'];
/** Placeholders of fields that differ per run (see test/fixtures/golden/README.md). */
const RECEIVED_AT = '<receivedAt>';
const CONTEXT_IP = '<context.ip>';
const WRITE_KEY = '<writeKey>';
const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const LOOPBACK = ['127.0.0.1', '::1', '::ffff:127.0.0.1'];

type Json = Record<string, unknown>;

interface Golden {
  readonly input: Json;
  readonly expected: Json;
}

function golden(type: RoutedCallType): Golden {
  return JSON.parse(readFileSync(join(GOLDEN_DIR, `${type}.json`), 'utf8')) as Golden;
}

/**
 * The expected body with its placeholders replaced by the delivered values, after checking
 * that those have the right form: `receivedAt` a UTC time within the request, `context.ip`
 * the test client's address.
 */
function resolve(expected: Json, actual: Json, sentWithin: { from: number; to: number }): Json {
  const resolved = structuredClone(expected);
  if (resolved.receivedAt === RECEIVED_AT) {
    const receivedAt = actual.receivedAt as string;
    expect(receivedAt).toMatch(ISO_UTC_MS);
    expect(Date.parse(receivedAt)).toBeGreaterThanOrEqual(sentWithin.from);
    expect(Date.parse(receivedAt)).toBeLessThanOrEqual(sentWithin.to);
    resolved.receivedAt = receivedAt;
  }
  const context = resolved.context as Json | undefined;
  if (context?.ip === CONTEXT_IP) {
    const ip = (actual.context as Json | undefined)?.ip as string;
    expect(isIP(ip)).not.toBe(0);
    expect(LOOPBACK).toContain(ip);
    context.ip = ip;
  }
  expect(JSON.stringify(resolved)).not.toMatch(/"<[a-zA-Z.]+>"/);
  return resolved;
}

const h = new RouterHarness();
let source: TestSource;
let destination: TestDestination;

beforeAll(async () => {
  await h.start();
  source = await h.source();
  destination = await h.destination(source.id);
});

afterAll(() => h.close());

describe('golden outbound bodies (test/fixtures/golden)', () => {
  it('has one fixture per call type, delete included', () => {
    const files = readdirSync(GOLDEN_DIR).filter((name) => name.endsWith('.json'));
    expect(files.sort()).toEqual(ROUTED_TYPES.map((type) => `${type}.json`).sort());
  });

  it.each(CALL_TYPES)(
    '%s: the webhook body is the expected one, the call record passed on byte for byte',
    async (type) => {
      const { input, expected } = golden(type);
      const bodyKey = input.writeKey === WRITE_KEY;
      const body = bodyKey ? { ...input, writeKey: source.writeKey } : input;
      const from = Date.now();
      const answer = await h.post(`/v1/${type}`, body, bodyKey ? {} : { basic: source.writeKey });
      const to = Date.now();
      expect(answer).toEqual({ status: 200, body: { success: true } });
      const messageId = input.messageId as string;
      const call = await h.callRecord(messageId);
      const delivery = await h.delivery(messageId);
      expect(delivery.value?.equals(call.value as Buffer)).toBe(true);
      expect(headerText(delivery, HEADER.destinationId)).toBe(destination.id);
      const actual = JSON.parse(delivery.value?.toString('utf8') ?? 'null') as Json;
      expect(actual).toStrictEqual(resolve(expected, actual, { from, to }));
    },
  );

  it('delete: the notification the admin app publishes reaches the webhook unchanged', async () => {
    const { input, expected } = golden('delete');
    const userId = input.userId as string;
    const value = JSON.stringify(input);
    await h.publishCalls([
      {
        key: `${source.id}:${userId}`,
        value,
        headers: { [HEADER.sourceId]: source.id, [HEADER.callType]: 'delete' },
      },
    ]);
    const [delivery] = await h.deliveries.waitFor(
      TOPIC.deliveries,
      (r) =>
        r.key?.toString() === `${destination.id}:${userId}` &&
        headerText(r, HEADER.callType) === 'delete',
    );
    expect(delivery.value?.toString('utf8')).toBe(value);
    expect(JSON.parse(value)).toStrictEqual(expected);
  });
});
