import { MAX_CALL_BYTES, MAX_CALL_DEPTH } from '@app/contracts';

import { EnrichContext } from './enrich';
import { serializeRejected, takeBatch, takeCall } from './intake';

const ctx: EnrichContext = { receivedAt: 0, newMessageId: () => 'm' };

/** `{ "a": { "a": ... 1 } }` with `levels` objects, the outermost one included. */
function nested(levels: number): Record<string, unknown> {
  let value: unknown = 1;
  for (let i = 0; i < levels; i += 1) value = { a: value };
  return value as Record<string, unknown>;
}

/** A track call whose properties make it `levels` deep in all. */
function trackOfDepth(levels: number): Record<string, unknown> {
  return { type: 'track', userId: 'u', event: 'E', properties: nested(levels - 1) };
}

describe(takeCall.name, () => {
  it('serializes the enriched call once and reads the integrations verdict', () => {
    const accepted = takeCall(
      'track',
      { anonymousId: 7, event: 'E', integrations: { Webhooks: false } },
      ctx,
    );
    expect(accepted).toMatchObject({
      type: 'track',
      messageId: 'm',
      userKey: '7',
      integrations: { webhooks: false, named: undefined },
    });
    expect(JSON.parse(accepted.value)).toMatchObject({ anonymousId: '7', type: 'track' });
  });

  it('throws invalid_call with the field and rule', () => {
    expect(thrownCode(() => takeCall('alias', { userId: 'u' }, ctx))).toBe('invalid_call');
  });

  it('takes a call nested to the limit and refuses one a level deeper', () => {
    expect(takeCall('track', trackOfDepth(MAX_CALL_DEPTH), ctx).type).toBe('track');
    expect(thrownCode(() => takeCall('track', trackOfDepth(MAX_CALL_DEPTH + 1), ctx))).toBe(
      'call_too_deep',
    );
  });

  it('refuses a call thousands of levels deep without overflowing the stack', () => {
    // Deep enough that JSON.stringify throws a RangeError in a request handler.
    expect(thrownCode(() => takeCall('track', trackOfDepth(20_000), ctx))).toBe('call_too_deep');
  });

  it('keys the call by anonymousId when userId is empty, as analytics-kotlin sends it', () => {
    const accepted = takeCall('track', { userId: '', anonymousId: 'a-1', event: 'E' }, ctx);
    expect(accepted.userKey).toBe('a-1');
    expect(accepted).toMatchObject({ userId: undefined, anonymousId: 'a-1' });
  });

  it('keeps both ids for the ledger when the call has both', () => {
    const accepted = takeCall('track', { userId: 42, anonymousId: 'a-1', event: 'E' }, ctx);
    expect(accepted).toMatchObject({ userKey: '42', userId: '42', anonymousId: 'a-1' });
  });
});

describe(takeBatch.name, () => {
  it('measures each message only when the body could hold one too large', () => {
    const big = {
      type: 'track',
      userId: 'u',
      event: 'E',
      properties: { pad: 'p'.repeat(MAX_CALL_BYTES) },
    };
    const intake = takeBatch(
      { batch: [big, { type: 'page', userId: 'u' }] },
      ctx,
      2 * MAX_CALL_BYTES,
    );
    expect(intake.rejected).toEqual([
      expect.objectContaining({ index: 0, code: 'call_too_large' }),
    ]);
    expect(intake.accepted).toHaveLength(1);
  });

  it('lists a call nested too deep by its index and takes the others', () => {
    const intake = takeBatch(
      {
        batch: [
          { type: 'page', userId: 'u' },
          { ...trackOfDepth(4_400), writeKey: 'k' },
          trackOfDepth(MAX_CALL_DEPTH),
        ],
      },
      ctx,
      100_000,
    );
    expect(intake.accepted.map((call) => call.type)).toEqual(['page', 'track']);
    expect(intake.rejected).toEqual([
      {
        index: 1,
        code: 'call_too_deep',
        message: `a call may nest objects and arrays at most ${MAX_CALL_DEPTH} levels deep`,
        value: expect.any(String) as string,
      },
    ]);
    // For the rejected topic: cut at the limit, without the write key.
    const value = JSON.parse(intake.rejected[0].value) as Record<string, unknown>;
    expect(value).not.toHaveProperty('writeKey');
    expect(value.event).toBe('E');
  });

  it('refuses a batch whose context nests too deep for any of its calls', () => {
    const body = { context: nested(MAX_CALL_DEPTH), batch: [{ type: 'page', userId: 'u' }] };
    expect(thrownCode(() => takeBatch(body, ctx, 10))).toBe('call_too_deep');
    const fits = { ...body, context: nested(MAX_CALL_DEPTH - 1) };
    expect(takeBatch(fits, ctx, 10).accepted).toHaveLength(1);
  });

  it("corrects each call's clock skew with the batch's sentAt", () => {
    const intake = takeBatch(
      {
        sentAt: '2026-01-01T10:00:10.000Z',
        batch: [
          { type: 'track', userId: 'u', event: 'E', timestamp: '2026-01-01T10:00:00.000Z' },
          {
            type: 'track',
            userId: 'u',
            event: 'E',
            timestamp: '2026-01-01T10:00:00.000Z',
            sentAt: '2026-01-01T10:00:01.000Z',
          },
        ],
      },
      { ...ctx, receivedAt: Date.parse('2026-01-01T12:00:00.000Z') },
      1_000,
    );
    const [first, second] = intake.accepted.map(
      (call) => JSON.parse(call.value) as Record<string, unknown>,
    );
    // Sent 10 s after it happened, by the batch's clock: 10 s before receipt.
    expect(first).toMatchObject({
      timestamp: '2026-01-01T11:59:50.000Z',
      originalTimestamp: '2026-01-01T10:00:00.000Z',
      sentAt: '2026-01-01T10:00:10.000Z',
    });
    // A call's own sentAt wins over the batch's.
    expect(second.timestamp).toBe('2026-01-01T11:59:59.000Z');
  });

  it("ignores a batch's sentAt that is not a date-time", () => {
    const call = { type: 'track', userId: 'u', event: 'E', timestamp: '2026-01-01T10:00:00Z' };
    for (const sentAt of ['yesterday', 12, null]) {
      const [accepted] = takeBatch({ sentAt, batch: [{ ...call }] }, ctx, 1_000).accepted;
      expect(JSON.parse(accepted.value)).toMatchObject({ timestamp: call.timestamp });
      expect(JSON.parse(accepted.value)).not.toHaveProperty('originalTimestamp');
    }
  });

  it('refuses a batch that is not a non-empty array', () => {
    for (const batch of [undefined, [], {}, 'x']) {
      expect(thrownCode(() => takeBatch({ batch }, ctx, 10))).toBe('invalid_batch');
    }
  });
});

describe(serializeRejected.name, () => {
  it('drops a write key and keeps the rest', () => {
    expect(serializeRejected({ writeKey: 'k', a: 1 })).toBe('{"a":1}');
    expect(serializeRejected('text')).toBe('"text"');
    expect(serializeRejected(undefined)).toBe('null');
  });

  it('cuts a message nested too deep at the limit, deeper containers as null', () => {
    const deep = { writeKey: 'k', a: nested(10_000) };
    const value = JSON.parse(serializeRejected(deep)) as Record<string, unknown>;
    expect(value).not.toHaveProperty('writeKey');
    let depth = 0;
    for (let v: unknown = value; v !== null && typeof v === 'object'; v = (v as { a: unknown }).a) {
      depth += 1;
    }
    expect(depth).toBe(MAX_CALL_DEPTH);
  });
});

/** The `code` of what `fn` throws. */
function thrownCode(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return (error as { code?: unknown }).code;
  }
  return undefined;
}
