import { createHash, createHmac } from 'node:crypto';

import { CONNECTION_HEADERS, RESERVED_WEBHOOK_HEADERS } from '@app/contracts';
import { WebhookSettings } from '@app/settings';

import { WebhookReceiver } from '../../../../test/helpers/webhook-receiver';

import { SsrfGuard } from './ssrf-guard';
import { WebhookClient } from './webhook-client';
import {
  CLIENT_SET_HEADERS,
  MASKED_VALUE,
  maskedHeaders,
  previousSecretSigns,
  secretSigners,
  sendableHeaders,
  Signing,
  sluiceHeaders,
  StaticHeaders,
  UnsignableError,
  webhookHeaders,
  webhookId,
} from './webhook-request';

const BODY = Buffer.from('{"version":1,"type":"track","event":"Ünïcödé ✓"}');

/** A stand-in for the secret box: `sealed:` + the value. */
function open(sealed: string): string {
  if (!sealed.startsWith('sealed:')) throw new Error('not sealed');
  return sealed.slice('sealed:'.length);
}

function webhook(id: string, headers: Record<string, string>): WebhookSettings {
  return { id, position: 0, url: 'https://example.com/', headers: Object.freeze(headers) };
}

describe(maskedHeaders.name, () => {
  it("shows every name and Sluice's own values, masking static values and the signature", () => {
    const sent = webhookHeaders(
      { Authorization: 'Bearer s3cret', 'X-Team': 'a' },
      sluiceHeaders(BODY, { mode: 'x-signature', current: secretSigners('s3cret') }),
    );
    const masked = maskedHeaders(sent);
    expect(masked).toEqual({
      Authorization: MASKED_VALUE,
      'X-Team': MASKED_VALUE,
      'user-agent': 'Sluice/1.0',
      'content-type': 'application/json',
      'x-signature': MASKED_VALUE,
    });
    expect(JSON.stringify(masked)).not.toMatch(/s3cret|deadbeef/);
  });
});

describe(sendableHeaders.name, () => {
  it('keeps the same object when every header can be sent', () => {
    const headers = Object.freeze({ Authorization: 'Basic x', 'X-Team': 'a' });
    expect(sendableHeaders(headers)).toEqual({ kept: headers, dropped: [] });
    expect(sendableHeaders(headers).kept).toBe(headers);
  });

  it('drops connection-level and reserved headers in any case', () => {
    const headers = {
      'X-Team': 'a',
      'Transfer-Encoding': 'chunked',
      connection: 'close',
      'Proxy-Authorization': 'Basic y',
      'Content-Type': 'text/plain',
      te: 'trailers',
    };
    const { kept, dropped } = sendableHeaders(headers);
    expect(kept).toEqual({ 'X-Team': 'a' });
    expect(dropped).toEqual([
      'Transfer-Encoding',
      'connection',
      'Proxy-Authorization',
      'Content-Type',
      'te',
    ]);
  });
});

describe(StaticHeaders.name, () => {
  it('works a snapshot out once and warns once per webhook, naming headers, never values', () => {
    const warnings: string[] = [];
    const headers = new StaticHeaders((message) => warnings.push(message), open);
    const hook = webhook('w1', { Connection: 'keep-alive', 'X-Key': 'sealed:secret-value' });
    const first = headers.of(hook);
    expect(first).toEqual({ 'X-Key': 'secret-value' });
    expect(headers.of(hook)).toBe(first);
    // A reload makes new objects with the same headers: no second warning.
    expect(
      headers.of(webhook('w1', { Connection: 'keep-alive', 'X-Key': 'sealed:secret-value' })),
    ).toEqual(first);
    expect(warnings).toEqual([
      'webhook w1: static header(s) Connection not sent (set by Sluice or connection-level); ' +
        'remove them through the admin API',
    ]);
    headers.of(webhook('w2', { Expect: '100-continue' }));
    expect(warnings).toHaveLength(2);
    expect(warnings.join('\n')).not.toContain('secret-value');
  });

  it('opens each value once per snapshot, and throws what opening throws', () => {
    let opened = 0;
    const counting = (sealed: string) => {
      opened += 1;
      return open(sealed);
    };
    const headers = new StaticHeaders(() => undefined, counting);
    const hook = webhook('w1', { Authorization: 'sealed:Bearer a', 'X-Team': 'sealed:b' });
    expect(headers.of(hook)).toEqual({ Authorization: 'Bearer a', 'X-Team': 'b' });
    headers.of(hook);
    expect(opened).toBe(2);
    expect(() => headers.of(webhook('w2', { Authorization: 'plain' }))).toThrow('not sealed');
  });
});

const OLD = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NEW = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const NOW_MS = 1_795_392_000_123;

/** The hex HMAC-SHA1 an implementation other than the code under test computes. */
function hexOf(secret: string): string {
  return createHmac('sha1', Buffer.from(secret, 'utf8')).update(BODY).digest('hex');
}

/** The Standard Webhooks signature Node's createHmac computes for this id and timestamp. */
function v1Of(secret: string, id: string, seconds: number): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${seconds}.`).update(BODY);
  return `v1,${mac.digest('base64')}`;
}

const BASE = { 'user-agent': 'Sluice/1.0', 'content-type': 'application/json' };

describe(sluiceHeaders.name, () => {
  const message = { messageId: 'm-1', nowMs: NOW_MS };
  const seconds = Math.floor(NOW_MS / 1000);

  it.each<[string, Signing | undefined, Record<string, string>]>([
    ['no signing', undefined, BASE],
    ['x-signature without a secret', { mode: 'x-signature' }, BASE],
    [
      'x-signature, one secret',
      { mode: 'x-signature', current: secretSigners('s3cret') },
      { ...BASE, 'x-signature': hexOf('s3cret') },
    ],
    [
      'x-signature during an overlap: X-Signature by the previous secret, the new one beside it',
      { mode: 'x-signature', current: secretSigners(NEW), previous: secretSigners(OLD) },
      { ...BASE, 'x-signature': hexOf(OLD), 'x-signature-next': hexOf(NEW) },
    ],
    [
      'standard-webhooks without a secret: id and timestamp only',
      { mode: 'standard-webhooks' },
      { ...BASE, 'webhook-id': 'm-1', 'webhook-timestamp': String(seconds) },
    ],
    [
      'standard-webhooks, one secret',
      { mode: 'standard-webhooks', current: secretSigners(NEW) },
      {
        ...BASE,
        'webhook-id': 'm-1',
        'webhook-timestamp': String(seconds),
        'webhook-signature': v1Of(NEW, 'm-1', seconds),
      },
    ],
    [
      'standard-webhooks during an overlap: both signatures, the new one first',
      { mode: 'standard-webhooks', current: secretSigners(NEW), previous: secretSigners(OLD) },
      {
        ...BASE,
        'webhook-id': 'm-1',
        'webhook-timestamp': String(seconds),
        'webhook-signature': `${v1Of(NEW, 'm-1', seconds)} ${v1Of(OLD, 'm-1', seconds)}`,
      },
    ],
  ])('%s', (_name, signing, expected) => {
    expect(sluiceHeaders(BODY, signing, message)).toEqual(expected);
  });

  it('refuses to sign standard-webhooks with a secret that is not whsec_', () => {
    const signing: Signing = { mode: 'standard-webhooks', current: secretSigners('s3cret') };
    expect(() => sluiceHeaders(BODY, signing, message)).toThrow(UnsignableError);
  });
});

describe(previousSecretSigns.name, () => {
  it.each([
    [null, NOW_MS, false],
    [undefined, NOW_MS, false],
    [NOW_MS + 1, NOW_MS, true],
    [NOW_MS, NOW_MS, false],
    [NOW_MS - 1, NOW_MS, false],
  ])('expiry %p at %p: %p', (expiresAt, now, signs) => {
    expect(previousSecretSigns(expiresAt, now)).toBe(signs);
  });
});

describe(webhookId.name, () => {
  it.each([
    ['a messageId as it is', 'm-1', 'm-1'],
    [
      'a UUID as it is',
      '0b0e9d2c-5b9e-4f4e-9c1a-7f0c2b1d3e4f',
      '0b0e9d2c-5b9e-4f4e-9c1a-7f0c2b1d3e4f',
    ],
    [
      'a messageId with a space as a digest',
      'a b',
      `msg_${createHash('sha256').update('a b').digest('base64url')}`,
    ],
    [
      'a non-ASCII messageId as a digest',
      'ünï',
      `msg_${createHash('sha256').update('ünï').digest('base64url')}`,
    ],
    [
      'no messageId as the digest of the body',
      undefined,
      `msg_${createHash('sha256').update(BODY).digest('base64url')}`,
    ],
  ])('sends %s', (_name, messageId, expected) => {
    expect(webhookId(messageId, BODY)).toBe(expected);
  });
});

describe(webhookHeaders.name, () => {
  it("puts Sluice's headers over static ones of the same name", () => {
    const sluice = sluiceHeaders(BODY);
    expect(webhookHeaders({ 'x-team': 'a', 'user-agent': 'Other/9' }, sluice)).toEqual({
      'x-team': 'a',
      'user-agent': 'Sluice/1.0',
      'content-type': 'application/json',
    });
  });
});

describe('the reserved header names', () => {
  let receiver: WebhookReceiver | undefined;
  let client: WebhookClient | undefined;

  afterEach(async () => {
    await client?.close();
    await receiver?.stop();
  });

  // Adding a header to the request without reserving it, or reserving one that is not sent,
  // fails here: static headers could otherwise replace it, or be refused for nothing.
  it('are exactly the headers signed webhook requests of both modes carry on the wire, but their static ones', async () => {
    receiver = await new WebhookReceiver().start();
    client = new WebhookClient({
      timeoutMs: 60_000,
      connectionsPerOrigin: 1,
      guard: new SsrfGuard(['127.0.0.0/8']),
    });
    const staticHeaders = { 'X-Team': 'a', Authorization: 'Bearer t' };
    const keys = { current: secretSigners(NEW), previous: secretSigners(OLD) };
    const message = { messageId: 'm-1', nowMs: NOW_MS };
    const sluice = [
      sluiceHeaders(BODY, { mode: 'x-signature', ...keys }, message),
      sluiceHeaders(BODY, { mode: 'standard-webhooks', ...keys }, message),
    ];
    for (const own of sluice) {
      const headers = webhookHeaders(sendableHeaders(staticHeaders).kept, own);
      await expect(client.post(receiver.url(), BODY, headers)).resolves.toMatchObject({
        kind: 'success',
      });
    }
    const sent = new Set(
      receiver.requests.flatMap((request) =>
        Object.keys(request.headers).filter(
          (name) =>
            !Object.keys(staticHeaders).some((own) => own.toLowerCase() === name) &&
            !CONNECTION_HEADERS.includes(name),
        ),
      ),
    );
    expect([...sent].sort()).toEqual([...RESERVED_WEBHOOK_HEADERS].sort());
    const set = new Set([
      ...sluice.flatMap((headers) => Object.keys(headers)),
      ...CLIENT_SET_HEADERS,
    ]);
    expect([...set].sort()).toEqual([...RESERVED_WEBHOOK_HEADERS].sort());
  });
});
