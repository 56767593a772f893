import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SourceTextModule } from 'node:vm';

import {
  BATCH_LIMITS,
  MAX_SECRET_OVERLAP_SECONDS,
  ORDERING_LIMITS,
  SIGNATURE_MODES,
} from '@app/contracts';

import { CONSOLE_STATIC_DIR } from './console.routes';

/** static/delivery-rules.js's exports (a browser module of plain JS, no types). */
interface DeliveryRules {
  BATCH_BOUNDS: { key: string; min: number; max: number; byDefault: number }[];
  ORDERING_BOUNDS: { key: string; min: number; max: number; byDefault: number }[];
  SIGNATURE_MODES: { value: string }[];
  MAX_OVERLAP_SECONDS: number;
  typedNumber(text: unknown): unknown;
  batchingBody(typed: Record<string, string>): unknown;
  batchingText(batching: unknown): string;
  boundHint(bound: unknown): string;
  orderingBody(typed: Record<string, string>): unknown;
  orderingText(ordering: unknown): string;
  traceparentText(on: boolean): string;
  deliverySummary(destination: Record<string, unknown>): string;
  signatureModeText(mode: string): string;
  secretText(mode: string, secretSet: boolean): string;
  secretHint(mode: string): string;
  overlapState(iso: string | null, nowMs: number): unknown;
  rotationBody(sharedSecret: string, overlapText: string): unknown;
}

/**
 * The browser module as the browser runs it, an ES module evaluated by Node's vm (the unit
 * project runs with --experimental-vm-modules); it imports nothing.
 */
async function loadRules(): Promise<DeliveryRules> {
  const file = join(CONSOLE_STATIC_DIR, 'delivery-rules.js');
  const module = new SourceTextModule(readFileSync(file, 'utf8'), { identifier: file });
  await module.link(() => {
    throw new Error('delivery-rules.js imports nothing');
  });
  await module.evaluate();
  return module.namespace as unknown as DeliveryRules;
}

describe("the console's delivery rules (static/delivery-rules.js)", () => {
  let rules: DeliveryRules;

  beforeAll(async () => {
    rules = await loadRules();
  });

  /** Bounds as `@app/contracts` states its limits, by key. */
  const asLimits = (bounds: DeliveryRules['BATCH_BOUNDS']) =>
    Object.fromEntries(
      bounds.map(({ key, min, max, byDefault }) => [key, { min, max, default: byDefault }]),
    );

  it("states the API's batching and ordering bounds, signature modes and longest overlap", () => {
    expect(asLimits(rules.BATCH_BOUNDS)).toEqual(BATCH_LIMITS);
    expect(asLimits(rules.ORDERING_BOUNDS)).toEqual(ORDERING_LIMITS);
    expect(rules.SIGNATURE_MODES.map((m) => m.value)).toEqual([...SIGNATURE_MODES]);
    expect(rules.MAX_OVERLAP_SECONDS).toBe(MAX_SECRET_OVERLAP_SECONDS);
  });

  it.each([
    ['', undefined],
    ['   ', undefined],
    [undefined, undefined],
    ['500', 500],
    [' 42 ', 42],
    ['0', 0],
    ['-3', -3],
    ['1.5', 1.5],
    ['abc', 'abc'],
    ['12 calls', '12 calls'],
    ['Infinity', 'Infinity'],
  ])('typedNumber(%j) is %j: numerals as numbers, the rest as typed', (text, expected) => {
    expect(rules.typedNumber(text)).toEqual(expected);
  });

  it.each([
    [{ maxCalls: '', maxBytes: '', maxWaitMs: '' }, { batching: {} }],
    [{ maxCalls: '500', maxBytes: '', maxWaitMs: '' }, { batching: { maxCalls: 500 } }],
    [
      { maxCalls: '10', maxBytes: '2048', maxWaitMs: '0' },
      { batching: { maxCalls: 10, maxBytes: 2048, maxWaitMs: 0 } },
    ],
    [
      { maxCalls: '5000', maxBytes: 'x', maxWaitMs: '' },
      { batching: { maxCalls: 5000, maxBytes: 'x' } },
    ],
  ])('batchingBody(%j) is %j (the API checks the ranges)', (typed, expected) => {
    expect(rules.batchingBody(typed)).toEqual(expected);
  });

  it.each([
    [null, 'Off: one call a request.'],
    [
      { maxCalls: 100, maxBytes: 1_048_576, maxWaitMs: 1000 },
      'On: up to 100 calls or 1,048,576 bytes a request, the first call waiting at most 1,000 ms for more.',
    ],
  ])('batchingText(%j)', (batching, expected) => {
    expect(rules.batchingText(batching)).toBe(expected);
  });

  it.each([
    [{ maxPendingCalls: '', maxHoldSeconds: '' }, { ordering: {} }],
    [{ maxPendingCalls: '', maxHoldSeconds: ' 300 ' }, { ordering: { maxHoldSeconds: 300 } }],
    [
      { maxPendingCalls: '1000', maxHoldSeconds: '1' },
      { ordering: { maxPendingCalls: 1000, maxHoldSeconds: 1 } },
    ],
    [
      { maxPendingCalls: '0', maxHoldSeconds: 'an hour' },
      { ordering: { maxPendingCalls: 0, maxHoldSeconds: 'an hour' } },
    ],
  ])('orderingBody(%j) is %j (the API checks the ranges)', (typed, expected) => {
    expect(rules.orderingBody(typed)).toEqual(expected);
  });

  it.each([
    [null, /^Off: a failed call goes to the retry tiers, and its user's later calls may reach/],
    [undefined, /^Off: /],
    [
      { maxPendingCalls: 100, maxHoldSeconds: 600 },
      /^On: each user's calls reach the receiver in order; .* up to 100 of that user's later calls wait behind it, for at most 600 seconds, before the user's ordering is suspended\.$/,
    ],
    [{ maxPendingCalls: 1000, maxHoldSeconds: 3600 }, /up to 1,000 .* at most 3,600 seconds/],
  ])('orderingText(%j)', (ordering, expected) => {
    expect(rules.orderingText(ordering)).toMatch(expected);
  });

  it.each([
    [
      'batching',
      [
        '1 to 4,000 calls; empty: 100',
        '1,024 to 16,777,216 bytes; empty: 1,048,576',
        '0 to 60,000 ms; empty: 1,000',
      ],
    ],
    ['ordering', ['1 to 1,000 calls; empty: 100', '1 to 3,600 seconds; empty: 600']],
  ] as const)("gives each of %s's bounds its range and default as its hint", (setting, hints) => {
    const bounds = setting === 'batching' ? rules.BATCH_BOUNDS : rules.ORDERING_BOUNDS;
    expect(bounds.map((bound) => rules.boundHint(bound))).toEqual(hints);
  });

  it.each([
    ['x-signature', true, /^A shared secret is set: every POST carries X-Signature/],
    ['x-signature', false, /^No shared secret is set: POSTs are not signed/],
    ['standard-webhooks', true, /^A shared secret is set: .*webhook-signature/],
    ['standard-webhooks', false, /^No shared secret is set: .*no webhook-signature/],
  ])('secretText(%s, %s) says what is signed', (mode, set, expected) => {
    expect(rules.secretText(mode, set)).toMatch(expected);
  });

  it('asks for a whsec_ secret in standard-webhooks mode only', () => {
    expect(rules.secretHint('standard-webhooks')).toContain('whsec_');
    expect(rules.secretHint('x-signature')).not.toContain('whsec_');
  });

  it('names each mode, and shows an unknown one as given', () => {
    expect(rules.signatureModeText('x-signature')).toMatch(/^x-signature: .*X-Signature/);
    expect(rules.signatureModeText('standard-webhooks')).toMatch(/^standard-webhooks: .*whsec_/);
    expect(rules.signatureModeText('v2')).toBe('v2');
  });

  it('says whether a traceparent is sent', () => {
    expect(rules.traceparentText(true)).toMatch(/^On: .*traceparent/);
    expect(rules.traceparentText(false)).toBe('Off: POSTs carry no traceparent.');
  });

  it.each([
    [{ signatureMode: 'x-signature', batching: null, ordering: null }, 'x-signature'],
    [
      { signatureMode: 'standard-webhooks', batching: { maxCalls: 1500 }, sendTraceparent: true },
      'standard-webhooks, batches of up to 1,500, traceparent',
    ],
    [
      { signatureMode: 'x-signature', ordering: { maxPendingCalls: 100 } },
      'x-signature, ordered per user',
    ],
  ])('deliverySummary(%j) is %j', (destination, expected) => {
    expect(rules.deliverySummary(destination)).toBe(expected);
  });

  const NOW = Date.parse('2026-11-27T12:00:00.000Z');
  it.each([
    [null, { kind: 'none' }],
    ['not a time', { kind: 'none' }],
    ['2026-11-28T12:00:00.000Z', { kind: 'overlap', until: '2026-11-28T12:00:00.000Z' }],
    ['2026-11-27T12:00:00.001Z', { kind: 'overlap', until: '2026-11-27T12:00:00.001Z' }],
    ['2026-11-27T12:00:00.000Z', { kind: 'ended', at: '2026-11-27T12:00:00.000Z' }],
    ['2026-11-26T12:00:00.000Z', { kind: 'ended', at: '2026-11-26T12:00:00.000Z' }],
  ])('overlapState(%j) at noon is %j', (iso, expected) => {
    expect(rules.overlapState(iso, NOW)).toEqual(expected);
  });

  it.each([
    ['', { sharedSecret: 's' }],
    ['3600', { sharedSecret: 's', overlapSeconds: 3600 }],
    ['0', { sharedSecret: 's', overlapSeconds: 0 }],
    ['a day', { sharedSecret: 's', overlapSeconds: 'a day' }],
  ])('rotationBody(s, %j) is %j', (overlap, expected) => {
    expect(rules.rotationBody('s', overlap)).toEqual(expected);
  });
});
