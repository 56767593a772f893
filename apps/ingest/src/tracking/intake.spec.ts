import { MAX_CALL_BYTES } from '@app/contracts';

import { EnrichContext } from './enrich';
import { serializeRejected, takeBatch, takeCall } from './intake';

const ctx: EnrichContext = { receivedAt: 0, newMessageId: () => 'm' };

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
      webhooks: false,
    });
    expect(JSON.parse(accepted.value)).toMatchObject({ anonymousId: '7', type: 'track' });
  });

  it('throws invalid_call with the field and rule', () => {
    expect(thrownCode(() => takeCall('alias', { userId: 'u' }, ctx))).toBe('invalid_call');
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
