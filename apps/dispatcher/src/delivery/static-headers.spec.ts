import { WebhookSettings } from '@app/settings';

import { sendableHeaders, StaticHeaders } from './static-headers';

function webhook(id: string, headers: Record<string, string>): WebhookSettings {
  return { id, position: 0, url: 'https://example.com/', headers: Object.freeze(headers) };
}

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
