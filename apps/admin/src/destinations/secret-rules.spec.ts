import { modeRefusal, planRotation, secretRefusal } from './secret-rules';

const WHSEC = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
const OTHER_WHSEC = `whsec_${Buffer.alloc(32, 4).toString('base64')}`;
const NOW_MS = 1_795_392_000_000;

describe(secretRefusal.name, () => {
  it.each([
    ['x-signature takes any secret', 'x-signature', 'plain', undefined],
    ['x-signature takes a whsec_ one too', 'x-signature', WHSEC, undefined],
    ['standard-webhooks takes a whsec_ one', 'standard-webhooks', WHSEC, undefined],
    ['standard-webhooks refuses a plain one', 'standard-webhooks', 'plain', 'secret_not_whsec'],
  ] as const)('%s', (_name, mode, secret, code) => {
    expect(secretRefusal(mode, secret)?.code).toBe(code);
  });

  it('never puts the secret in its message', () => {
    expect(secretRefusal('standard-webhooks', 'hunter2-secret')?.message).not.toContain('hunter2');
  });
});

describe(modeRefusal.name, () => {
  it.each([
    ['no secret', 'standard-webhooks', [], undefined],
    ['whsec_ secrets', 'standard-webhooks', [WHSEC, OTHER_WHSEC], undefined],
    ['a plain previous secret', 'standard-webhooks', [WHSEC, 'plain'], 409],
    ['back to x-signature', 'x-signature', ['plain'], undefined],
  ] as const)('%s', (_name, mode, secrets, status) => {
    expect(modeRefusal(mode, secrets)?.status).toBe(status);
  });
});

describe(planRotation.name, () => {
  const base = {
    mode: 'x-signature',
    current: 'old',
    next: 'new',
    overlapSeconds: 86_400,
    nowMs: NOW_MS,
  } as const;

  it.each([
    [
      'keeps the previous secret for the overlap',
      base,
      { kind: 'rotate', previousExpiresAtMs: NOW_MS + 86_400_000 },
    ],
    [
      'an overlap of 0 drops it at once',
      { ...base, overlapSeconds: 0 },
      { kind: 'rotate', previousExpiresAtMs: null },
    ],
    [
      'standard-webhooks, whsec_ to whsec_',
      { ...base, mode: 'standard-webhooks', current: WHSEC, next: OTHER_WHSEC },
      { kind: 'rotate', previousExpiresAtMs: NOW_MS + 86_400_000 },
    ],
  ] as const)('%s', (_name, input, expected) => {
    expect(planRotation(input)).toEqual(expected);
  });

  it.each([
    ['no secret to rotate', { ...base, current: undefined }, 400, 'no_secret'],
    ['the same secret again', { ...base, next: 'old' }, 400, 'same_secret'],
    [
      'a plain secret for standard-webhooks',
      { ...base, mode: 'standard-webhooks', current: WHSEC, next: 'plain' },
      400,
      'secret_not_whsec',
    ],
  ] as const)('refuses %s', (_name, input, status, code) => {
    expect(planRotation(input)).toMatchObject({ kind: 'refused', refusal: { status, code } });
  });
});
