import { createHmac } from 'node:crypto';

import { CONNECTION_HEADERS, RESERVED_WEBHOOK_HEADERS } from '@app/contracts';
import { WebhookSettings } from '@app/settings';
import { HmacSha1 } from '@app/signing';

import { WebhookReceiver } from '../../../../test/helpers/webhook-receiver';

import { SsrfGuard } from './ssrf-guard';
import { WebhookClient } from './webhook-client';
import {
  CLIENT_SET_HEADERS,
  MASKED_VALUE,
  maskedHeaders,
  sendableHeaders,
  sluiceHeaders,
  StaticHeaders,
  webhookHeaders,
} from './webhook-request';

const BODY = Buffer.from('{"version":1,"type":"track","event":"Ünïcödé ✓"}');

function webhook(id: string, headers: Record<string, string>): WebhookSettings {
  return { id, position: 0, url: 'https://example.com/', headers: Object.freeze(headers) };
}

describe(maskedHeaders.name, () => {
  it("shows every name and Sluice's own values, masking static values and the signature", () => {
    const sent = webhookHeaders(
      { Authorization: 'Bearer s3cret', 'X-Team': 'a' },
      sluiceHeaders(BODY, { hex: () => 'deadbeef' }),
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
    const headers = new StaticHeaders((message) => warnings.push(message));
    const hook = webhook('w1', { Connection: 'keep-alive', 'X-Key': 'secret-value' });
    const first = headers.of(hook);
    expect(first).toEqual({ 'X-Key': 'secret-value' });
    expect(headers.of(hook)).toBe(first);
    // A reload makes new objects with the same headers: no second warning.
    expect(
      headers.of(webhook('w1', { Connection: 'keep-alive', 'X-Key': 'secret-value' })),
    ).toEqual(first);
    expect(warnings).toEqual([
      'webhook w1: static header(s) Connection not sent (set by Sluice or connection-level); ' +
        'remove them through the admin API',
    ]);
    headers.of(webhook('w2', { Expect: '100-continue' }));
    expect(warnings).toHaveLength(2);
    expect(warnings.join('\n')).not.toContain('secret-value');
  });
});

describe(sluiceHeaders.name, () => {
  it('sets User-Agent and Content-Type, and the signature of the exact bytes with a signer', () => {
    const signature = createHmac('sha1', Buffer.from('s3cret', 'utf8')).update(BODY).digest('hex');
    expect(sluiceHeaders(BODY, new HmacSha1('s3cret'))).toEqual({
      'user-agent': 'Sluice/1.0',
      'content-type': 'application/json',
      'x-signature': signature,
    });
    expect(sluiceHeaders(BODY)).toEqual({
      'user-agent': 'Sluice/1.0',
      'content-type': 'application/json',
    });
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
  it('are exactly the headers a signed webhook request carries on the wire, but its static ones', async () => {
    receiver = await new WebhookReceiver().start();
    client = new WebhookClient({
      timeoutMs: 60_000,
      connectionsPerOrigin: 1,
      guard: new SsrfGuard(['127.0.0.0/8']),
    });
    const staticHeaders = { 'X-Team': 'a', Authorization: 'Bearer t' };
    const sluice = sluiceHeaders(BODY, new HmacSha1('s3cret'));
    const headers = webhookHeaders(sendableHeaders(staticHeaders).kept, sluice);
    await expect(client.post(receiver.url(), BODY, headers)).resolves.toMatchObject({
      kind: 'success',
    });
    const sent = Object.keys(receiver.requests[0].headers).filter(
      (name) =>
        !Object.keys(staticHeaders).some((own) => own.toLowerCase() === name) &&
        !CONNECTION_HEADERS.includes(name),
    );
    expect(sent.sort()).toEqual([...RESERVED_WEBHOOK_HEADERS].sort());
    expect([...Object.keys(sluice), ...CLIENT_SET_HEADERS].sort()).toEqual(
      [...RESERVED_WEBHOOK_HEADERS].sort(),
    );
  });
});
