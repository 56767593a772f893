import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';

import { HEADER, TOPIC } from '@app/contracts';
import { headerText } from '@app/kafka';

import { IngestHarness, TestSource } from '../../helpers/ingest-harness';
import { json } from '../../helpers/topic-reader';

/**
 * The wire format of Segment's mobile library analytics-kotlin (release 1.25.0), taken from
 * its sources (github.com/segmentio/analytics-kotlin):
 * - core/src/main/java/com/segment/analytics/kotlin/core/HTTPClient.kt: the settings come
 *   from `https://$cdnHost/projects/$writeKey/settings` (GET, `Content-Type: application/json;
 *   charset=utf-8`); batches go to `https://$apiHost/b` as `Content-Type: text/plain` with
 *   `Content-Encoding: gzip`; `User-Agent: analytics-kotlin/<version>`.
 * - core/src/main/java/com/segment/analytics/kotlin/core/Constants.kt: the defaults
 *   `api.segment.io/v1` and `cdn-settings.segment.com/v1`, so `cdnHost` and `apiHost` both
 *   end in `/v1`.
 * - core/src/main/java/com/segment/analytics/kotlin/core/platform/plugins/SegmentDestination.kt:
 *   `integrations["Segment.io"].apiHost` of the settings replaces the configured apiHost.
 * - core/src/main/java/com/segment/analytics/kotlin/core/utilities/StorageImpl.kt: a batch file
 *   is `{"batch":[...],"sentAt":"...","writeKey":"..."}`, sentAt once per batch.
 * - core/src/main/java/com/segment/analytics/kotlin/core/Events.kt: every event has
 *   `userId` ("" until identify), `anonymousId`, `messageId`, `timestamp`, `context`,
 *   `integrations` and `_metadata`.
 * - Commit 504b948 ("move writeKey from auth header to batch body") shows that earlier
 *   releases sent the key as `Authorization: Basic` instead; both forms are tested.
 * The library always uses https; here ingest is plain http, the only difference.
 */
const h = new IngestHarness();
let source: TestSource;

const USER_AGENT = 'analytics-kotlin/1.24.1';

beforeAll(async () => {
  await h.start();
  source = await h.source();
});

afterAll(() => h.close());

/** The context ContextPlugin and the Android plugins put on every event (abridged). */
const CONTEXT = {
  app: { name: 'Shop', version: '3.2.0', namespace: 'com.example.shop', build: '320' },
  device: { id: 'device-1', manufacturer: 'Google', model: 'Pixel 8', type: 'android' },
  os: { name: 'Android', version: '15' },
  screen: { density: 2.75, height: 2400, width: 1080 },
  network: { wifi: true, cellular: false, bluetooth: false },
  locale: 'de-DE',
  timezone: 'Europe/Berlin',
  userAgent: 'Dalvik/2.1.0 (Linux; U; Android 15; Pixel 8)',
  library: { name: 'analytics-kotlin', version: '1.24.1' },
  instanceId: '9b1e4a2c-57a5-4a7b-9a89-6a8f5fd2a1d1',
};

/** SegmentInstant.now()'s format: milliseconds and `Z`. */
function segmentInstant(ms: number): string {
  return new Date(ms).toISOString();
}

/** One event as analytics-kotlin serializes it. */
function event(
  type: 'track' | 'screen' | 'identify',
  fields: Record<string, unknown>,
  timestamp: string,
): Record<string, unknown> {
  return {
    type,
    messageId: randomUUID(),
    anonymousId: 'anon-kotlin-1',
    integrations: {},
    context: CONTEXT,
    userId: '',
    _metadata: { bundled: [], unbundled: [], bundledIds: [] },
    timestamp,
    ...fields,
  };
}

/** Fetches the settings as the library does and returns `Segment.io`'s part. */
async function fetchSettings(writeKey: string): Promise<{ apiKey: string; apiHost: string }> {
  const cdnHost = `${new URL(h.url).host}/v1`;
  const res = await fetch(`http://${cdnHost}/projects/${writeKey}/settings`, {
    headers: { 'content-type': 'application/json; charset=utf-8', 'user-agent': USER_AGENT },
  });
  expect(res.status).toBe(200);
  const settings = (await res.json()) as { integrations: Record<string, any> };
  return settings.integrations['Segment.io'] as { apiKey: string; apiHost: string };
}

/** Uploads a batch file to `{apiHost}/b` as EventPipeline does, gzipped. */
async function upload(
  apiHost: string,
  file: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`http://${apiHost}/b`, {
    method: 'POST',
    headers: {
      'content-type': 'text/plain',
      'content-encoding': 'gzip',
      'user-agent': USER_AGENT,
      ...headers,
    },
    body: gzipSync(Buffer.from(file)),
  });
  return { status: res.status, body: await res.json() };
}

describe('analytics-kotlin', () => {
  it('fetches its settings, then uploads a batch file with the write key in it', async () => {
    const segment = await fetchSettings(source.writeKey);
    expect(segment).toEqual({
      apiKey: source.writeKey,
      apiHost: `${new URL(h.url).host}/v1`,
      protocol: 'http',
    });
    // The device's clock runs 2 minutes late; the events happened 20 s and 3 s before upload.
    const sentAt = Date.now() - 120_000;
    const events = [
      event(
        'screen',
        { name: 'Home', category: '', properties: {} },
        segmentInstant(sentAt - 20_000),
      ),
      event(
        'track',
        { event: 'Added To Cart', properties: { sku: 'A-1' } },
        segmentInstant(sentAt - 3_000),
      ),
    ];
    const file = `{"batch":[${events.map((e) => JSON.stringify(e)).join(',')}],"sentAt":"${segmentInstant(sentAt)}","writeKey":"${source.writeKey}"}`;
    await expect(upload(segment.apiHost, file)).resolves.toEqual({
      status: 200,
      body: { success: true },
    });
    const records = await Promise.all(
      events.map(async (e) => {
        const [record] = await h.reader.waitFor(
          TOPIC.calls,
          (r) => headerText(r, HEADER.messageId) === e.messageId,
        );
        return record;
      }),
    );
    // Keyed by the anonymousId: the empty userId counts as none.
    expect(records.map((r) => r.key?.toString())).toEqual([
      `${source.id}:anon-kotlin-1`,
      `${source.id}:anon-kotlin-1`,
    ]);
    const [screen, track] = records.map(json);
    expect(screen).toMatchObject({
      version: 1,
      type: 'screen',
      name: 'Home',
      _metadata: { bundled: [] },
      context: { ...CONTEXT, ip: '127.0.0.1' },
    });
    expect(screen).not.toHaveProperty('writeKey');
    // Corrected by the batch's sentAt: the events stand 20 s and 3 s before receipt.
    const behind = (call: Record<string, unknown>) =>
      Date.parse(call.receivedAt as string) - Date.parse(call.timestamp as string);
    expect([behind(screen), behind(track)]).toEqual([20_000, 3_000]);
    expect(track.originalTimestamp).toBe(events[1].timestamp);
  });

  it('takes the same upload with the key as Basic auth (releases before 504b948)', async () => {
    const segment = await fetchSettings(source.writeKey);
    const identify = event(
      'identify',
      { userId: 'u-42', traits: { plan: 'pro' } },
      segmentInstant(Date.now()),
    );
    const file = `{"batch":[${JSON.stringify(identify)}],"sentAt":"${segmentInstant(Date.now())}"}`;
    const basic = `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`;
    await expect(upload(segment.apiHost, file, { authorization: basic })).resolves.toEqual({
      status: 200,
      body: { success: true },
    });
    const [record] = await h.reader.waitFor(
      TOPIC.calls,
      (r) => headerText(r, HEADER.messageId) === identify.messageId,
    );
    expect(record.key?.toString()).toBe(`${source.id}:u-42`);
    expect(json(record)).toMatchObject({ type: 'identify', traits: { plan: 'pro' } });
  });

  it('gets 404 for the settings of an unknown key, and 401 for its uploads', async () => {
    const res = await fetch(`${h.url}/v1/projects/no-such-key/settings`, {
      headers: { 'user-agent': USER_AGENT },
    });
    expect(res.status).toBe(404);
    const file = `{"batch":[${JSON.stringify(event('track', { event: 'E', properties: {} }, segmentInstant(Date.now())))}],"sentAt":"${segmentInstant(Date.now())}","writeKey":"no-such-key"}`;
    await expect(upload(`${new URL(h.url).host}/v1`, file)).resolves.toMatchObject({
      status: 401,
    });
  });
});
