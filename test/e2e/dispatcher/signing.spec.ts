import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { TOPIC } from '@app/contracts';

import { callAdmin, startAdminBeside } from '../../helpers/admin-harness';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { eventually } from '../../helpers/services';
import {
  GoVerifier,
  Verdicts,
  verifyWithNode,
  verifyWithPython,
} from '../../helpers/standard-webhooks';
import { ReceivedRequest, WebhookReceiver } from '../../helpers/webhook-receiver';

/** Compiling the Go verifier on a busy machine takes a while. */
const GO_BUILD_TIMEOUT_MS = 240_000;
/** The overlap the rotations here keep: long enough for a round of calls to arrive within it. */
const OVERLAP_SECONDS = 15;
const CALLS = 30;

const whsec = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * The `X-Signature` receiver of docs/api.md ("Secret rotation"): a delivery is genuine when the
 * HMAC-SHA1 by the secret it holds is `X-Signature` or, during an overlap, `X-Signature-Next`.
 */
function verifyXSignature(secret: string, request: ReceivedRequest): boolean {
  const expected = createHmac('sha1', secret).update(request.body).digest();
  return ['x-signature', 'x-signature-next'].some((name) => {
    const sent = Buffer.from(String(request.headers[name] ?? ''), 'hex');
    return sent.length === expected.length && timingSafeEqual(sent, expected);
  });
}

/** A receiver that knows only today's header: X-Signature, nothing else. */
function verifyXSignatureOnly(secret: string, request: ReceivedRequest): boolean {
  const expected = createHmac('sha1', secret).update(request.body).digest('hex');
  return request.headers['x-signature'] === expected;
}

const all = (verdicts: boolean[]): boolean => verdicts.length > 0 && verdicts.every(Boolean);
const none = (verdicts: boolean[]): boolean => verdicts.length > 0 && verdicts.every((v) => !v);

describe('signatures: Standard Webhooks and secret rotation, verified by the official libraries (overlap 15 s)', () => {
  const h = new DispatcherHarness();
  const receivers: WebhookReceiver[] = [];
  let admin: NestFastifyApplication;
  let adminUrl: string;
  let go: GoVerifier;

  beforeAll(async () => {
    [go] = await Promise.all([
      GoVerifier.build(GO_BUILD_TIMEOUT_MS),
      (async () => {
        await h.start();
        admin = await startAdminBeside(h);
        adminUrl = `${await admin.getUrl()}/admin/v1`;
      })(),
    ]);
  }, GO_BUILD_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    await admin?.close();
    await h.close();
    go?.remove();
  });

  async function api(method: string, path: string, body?: unknown): Promise<any> {
    const answer = await callAdmin(adminUrl, method, path, body);
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
    return answer.body;
  }

  /** A source whose enabled destination (through the admin API) posts to a new receiver. */
  async function destination(signatureMode: string, secret: string) {
    const sink = await new WebhookReceiver().start();
    receivers.push(sink);
    const source = await api('POST', '/sources', { name: `signing-${signatureMode}` });
    const path = `/sources/${source.id}/destinations`;
    const created = await api('POST', path, { name: 'hooks', signatureMode });
    const dest = `${path}/${created.id}`;
    await api('POST', `${dest}/webhooks`, { url: sink.url() });
    await api('PUT', `${dest}/shared-secret`, { sharedSecret: secret });
    await api('POST', `${dest}/enable`);
    await h.routerSeesDestination(created.id, (d) => d?.enabled === true);
    await h.dispatcherSees(created.id, (d) => d?.enabled === true);
    return { sink, writeKey: source.writeKey as string, id: created.id as string, path: dest };
  }

  /** Sends `CALLS` calls and returns their requests once all arrived. */
  async function round(target: { sink: WebhookReceiver; writeKey: string }) {
    const before = target.sink.requests.length;
    for (let i = 0; i < CALLS; i += 1) await h.track(target.writeKey, randomUUID());
    await target.sink.received(before + CALLS, 30_000);
    return target.sink.requests.slice(before, before + CALLS);
  }

  /** Rotates to `next`; resolves once the dispatcher signs with it, with the overlap's end. */
  async function rotate(target: { id: string; path: string }, next: string): Promise<number> {
    const body = { sharedSecret: next, overlapSeconds: OVERLAP_SECONDS };
    const answer = await callAdmin(adminUrl, 'POST', `${target.path}/shared-secret/rotate`, body);
    expect(answer.status).toBe(200);
    expect(answer.text).not.toContain(next);
    const until = Date.parse(answer.body.previousSecretExpiresAt as string);
    await h.dispatcherSees(target.id, (d) => d?.previousSecretExpiresAt === until);
    return until;
  }

  /** What the three official libraries make of `requests` with each secret. */
  async function officialVerdicts(
    secrets: Record<string, string>,
    requests: readonly ReceivedRequest[],
  ): Promise<Record<'node' | 'python' | 'go', Verdicts>> {
    const [python, goVerdicts] = await Promise.all([
      verifyWithPython(secrets, requests),
      go.verify(secrets, requests),
    ]);
    return { node: verifyWithNode(secrets, requests), python, go: goVerdicts };
  }

  it('standard-webhooks: webhook-id is the messageId; during the overlap a receiver with only the old secret and one with only the new verify every delivery; after it only the new', async () => {
    const [oldSecret, newSecret] = [whsec(), whsec()];
    const target = await destination('standard-webhooks', oldSecret);
    const first = await round(target);
    for (const request of first) {
      expect(request.headers['webhook-id']).toBe(JSON.parse(request.body.toString()).messageId);
      expect(request.headers).not.toHaveProperty('x-signature');
    }
    for (const verdicts of Object.values(await officialVerdicts({ old: oldSecret }, first))) {
      expect(all(verdicts.old)).toBe(true);
    }

    const until = await rotate(target, newSecret);
    const during = await round(target);
    // Every one of them was signed within the overlap (else the test's premise is broken).
    for (const r of during)
      expect(Number(r.headers['webhook-timestamp']) * 1000).toBeLessThan(until);
    const secrets = { old: oldSecret, new: newSecret };
    for (const [library, verdicts] of Object.entries(await officialVerdicts(secrets, during))) {
      expect([library, all(verdicts.old), all(verdicts.new)]).toEqual([library, true, true]);
    }

    await eventually(
      () => (Date.now() > until + 1_000 ? true : undefined),
      30_000,
      'the overlap to end',
    );
    const after = await round(target);
    for (const [library, verdicts] of Object.entries(await officialVerdicts(secrets, after))) {
      expect([library, none(verdicts.old), all(verdicts.new)]).toEqual([library, true, true]);
    }
  }, 120_000);

  it("x-signature: X-Signature stays the old secret's during the overlap and X-Signature-Next carries the new one's; both receivers verify every delivery; after it only the new", async () => {
    const [oldSecret, newSecret] = ['old-shared-secret-ü', 'new-shared-secret-ß'];
    const target = await destination('x-signature', oldSecret);
    const first = await round(target);
    expect(first.every((r) => verifyXSignatureOnly(oldSecret, r))).toBe(true);
    expect(first.every((r) => r.headers['x-signature-next'] === undefined)).toBe(true);

    const until = await rotate(target, newSecret);
    const during = await round(target);
    expect(during.every((r) => verifyXSignature(oldSecret, r))).toBe(true);
    expect(during.every((r) => verifyXSignature(newSecret, r))).toBe(true);
    // A receiver that knows only X-Signature and holds the old secret keeps working.
    expect(during.every((r) => verifyXSignatureOnly(oldSecret, r))).toBe(true);

    await eventually(
      () => (Date.now() > until + 1_000 ? true : undefined),
      30_000,
      'the overlap to end',
    );
    const after = await round(target);
    expect(after.every((r) => r.headers['x-signature-next'] === undefined)).toBe(true);
    expect(after.every((r) => verifyXSignatureOnly(newSecret, r))).toBe(true);
    expect(after.some((r) => verifyXSignature(oldSecret, r))).toBe(false);
    // Nothing the dispatcher wrote to Kafka (outcomes, tiers, dead letters) carries a secret.
    await h.outbound.waitFor(TOPIC.deliveryOutcomes, () => true);
    const written = h.outbound.records
      .map((r) => [...Object.values(r.headers).map(String), r.value?.toString() ?? ''].join('\n'))
      .join('\n');
    for (const secret of [oldSecret, newSecret]) expect(written).not.toContain(secret);
  }, 120_000);

  it('refuses bad input with a 400 (or 409) and a code, storing nothing, and never answers a secret', async () => {
    const plain = 'plain-secret-never-shown';
    const target = await destination('x-signature', plain);
    const source = await api('POST', '/sources', { name: 'signing-bad-input' });
    const unknownMode = await callAdmin(adminUrl, 'POST', `/sources/${source.id}/destinations`, {
      name: 'hooks',
      signatureMode: 'hmac-md5',
    });
    expect(unknownMode).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    expect(unknownMode.text).toContain('signatureMode');
    expect(await api('GET', `/sources/${source.id}/destinations`)).toEqual([]);
    const cases: [string, string, unknown, number, string][] = [
      ['PATCH', '', { signatureMode: 'v2' }, 400, 'invalid_request'],
      // The destination's secret is not a whsec_ one: it cannot move to standard-webhooks.
      ['PATCH', '', { signatureMode: 'standard-webhooks' }, 409, 'secret_not_whsec'],
      ['POST', '/shared-secret/rotate', { sharedSecret: plain }, 400, 'same_secret'],
      [
        'POST',
        '/shared-secret/rotate',
        { sharedSecret: 'x', overlapSeconds: -1 },
        400,
        'invalid_request',
      ],
      [
        'POST',
        '/shared-secret/rotate',
        { sharedSecret: 'x', overlapSeconds: 2_592_001 },
        400,
        'invalid_request',
      ],
    ];
    for (const [method, suffix, body, status, code] of cases) {
      const answer = await callAdmin(adminUrl, method, `${target.path}${suffix}`, body);
      expect([method, suffix, answer.status, answer.body?.code]).toEqual([
        method,
        suffix,
        status,
        code,
      ]);
      expect(answer.text).not.toContain(plain);
    }
    expect(await api('GET', target.path)).toMatchObject({
      signatureMode: 'x-signature',
      sharedSecretSet: true,
      previousSecretExpiresAt: null,
    });

    // Without a secret there is nothing to rotate.
    await api('DELETE', `${target.path}/shared-secret`);
    const rotateNothing = await callAdmin(adminUrl, 'POST', `${target.path}/shared-secret/rotate`, {
      sharedSecret: whsec(),
    });
    expect(rotateNothing).toMatchObject({ status: 400, body: { code: 'no_secret' } });

    // A standard-webhooks destination takes only whsec_ secrets, when set and when rotated.
    expect(await api('PATCH', target.path, { signatureMode: 'standard-webhooks' })).toMatchObject({
      signatureMode: 'standard-webhooks',
    });
    const notWhsec = await callAdmin(adminUrl, 'PUT', `${target.path}/shared-secret`, {
      sharedSecret: plain,
    });
    expect(notWhsec).toMatchObject({ status: 400, body: { code: 'secret_not_whsec' } });
    const secret = whsec();
    await api('PUT', `${target.path}/shared-secret`, { sharedSecret: secret });
    const rotatePlain = await callAdmin(adminUrl, 'POST', `${target.path}/shared-secret/rotate`, {
      sharedSecret: plain,
    });
    expect(rotatePlain).toMatchObject({ status: 400, body: { code: 'secret_not_whsec' } });
    // The default overlap is 24 h; the answers and listings never show a secret.
    const next = whsec();
    const rotated = await callAdmin(adminUrl, 'POST', `${target.path}/shared-secret/rotate`, {
      sharedSecret: next,
    });
    expect(rotated.status).toBe(200);
    const until = Date.parse(rotated.body.previousSecretExpiresAt as string);
    expect(Math.abs(until - Date.now() - 86_400_000)).toBeLessThan(60_000);
    const listing = await callAdmin(adminUrl, 'GET', target.path.replace(/\/[^/]+$/, ''));
    for (const text of [
      rotated.text,
      listing.text,
      (await callAdmin(adminUrl, 'GET', target.path)).text,
    ]) {
      for (const shown of [secret, next, plain]) expect(text).not.toContain(shown);
    }
  }, 60_000);
});
