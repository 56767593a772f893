import * as diagnostics from 'node:diagnostics_channel';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';

import {
  makeTestCertificates,
  TestCertificates,
  WebhookReceiver,
} from '../../../../test/helpers/webhook-receiver';

import {
  AttemptResult,
  classifyError,
  classifyStatus,
  parseRetryAfter,
  responseText,
} from './attempt-result';
import { SsrfGuard } from './ssrf-guard';
import { Deadlines, WebhookClient, WebhookClientOptions } from './webhook-client';

const NOW = Date.parse('2030-01-01T00:00:00Z');

describe(classifyStatus.name, () => {
  it.each([200, 201, 204, 299])('%i is a success', (status) => {
    expect(classifyStatus(status)).toEqual({ kind: 'success', status });
  });

  it.each([301, 302, 307, 308])('%i is permanent (redirects are not followed)', (status) => {
    expect(classifyStatus(status)).toEqual({
      kind: 'permanent',
      reason: 'http_3xx',
      status,
      detail: `HTTP ${status}`,
    });
  });

  it.each([400, 401, 403, 404, 410, 413, 422])('%i is permanent', (status) => {
    expect(classifyStatus(status)).toEqual({
      kind: 'permanent',
      reason: 'http_4xx',
      status,
      detail: `HTTP ${status}`,
    });
  });

  it.each([
    [408, 'http_408'],
    [429, 'http_429'],
    [500, 'http_5xx'],
    [502, 'http_5xx'],
    [503, 'http_5xx'],
    [504, 'http_5xx'],
  ])('%i is retryable (%s)', (status, reason) => {
    expect(classifyStatus(status)).toEqual({
      kind: 'retryable',
      reason,
      status,
      detail: `HTTP ${status}`,
    });
  });

  it('keeps a 429 Retry-After in seconds', () => {
    expect(classifyStatus(429, '120', NOW)).toEqual({
      kind: 'retryable',
      reason: 'http_429',
      status: 429,
      detail: 'HTTP 429',
      retryAfterMs: 120_000,
    });
  });

  it('keeps a 429 Retry-After given as an HTTP date', () => {
    const at = new Date(NOW + 90_000).toUTCString();
    expect(classifyStatus(429, at, NOW)).toMatchObject({
      reason: 'http_429',
      retryAfterMs: 90_000,
    });
  });

  it("keeps a 503's Retry-After", () => {
    expect(classifyStatus(503, '7', NOW)).toMatchObject({
      kind: 'retryable',
      reason: 'http_5xx',
      retryAfterMs: 7_000,
    });
  });

  it('leaves retryAfterMs out without a usable Retry-After', () => {
    expect(classifyStatus(429, 'soon', NOW)).not.toHaveProperty('retryAfterMs');
    expect(classifyStatus(429, undefined, NOW)).not.toHaveProperty('retryAfterMs');
  });
});

describe(parseRetryAfter.name, () => {
  it('reads delay-seconds', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter('30', NOW)).toBe(30_000);
    expect(parseRetryAfter(' 5 ', NOW)).toBe(5_000);
  });

  it('reads an HTTP date as the time until it', () => {
    expect(parseRetryAfter('Tue, 01 Jan 2030 00:02:00 GMT', NOW)).toBe(120_000);
  });

  it('counts a date in the past as no wait', () => {
    expect(parseRetryAfter('Mon, 31 Dec 2029 23:00:00 GMT', NOW)).toBe(0);
  });

  it('takes the first of repeated values', () => {
    expect(parseRetryAfter(['4', '60'], NOW)).toBe(4_000);
  });

  it('is undefined when absent, empty or unreadable', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfter('', NOW)).toBeUndefined();
    expect(parseRetryAfter('   ', NOW)).toBeUndefined();
    expect(parseRetryAfter('soon', NOW)).toBeUndefined();
  });
});

/** An error with a code, as Node and undici raise them, optionally wrapping a cause. */
function coded(code: string, cause?: unknown): Error {
  return Object.assign(new Error(code, cause === undefined ? {} : { cause }), { code });
}

describe(responseText.name, () => {
  it.each([
    ['plain text as it is', Buffer.from('{"error":"nope"}\n'), '{"error":"nope"}\n'],
    ['UTF-8 decoded', Buffer.from('épuisé'), 'épuisé'],
    ['a character cut by the limit left out', Buffer.from('ab€').subarray(0, 4), 'ab'],
    ['invalid bytes replaced', Buffer.from([0x61, 0xff, 0x62]), 'a\uFFFDb'],
    [
      'control characters replaced, tab kept',
      Buffer.from('a\u0000b\u001b\tc'),
      'a\uFFFDb\uFFFD\tc',
    ],
  ])('gives %s', (_what, bytes, text) => {
    expect(responseText(bytes)).toBe(text);
  });
});

describe(classifyError.name, () => {
  it('calls a deadline that passed a timeout, whatever the error', () => {
    expect(classifyError(coded('UND_ERR_ABORTED'), true, 300)).toEqual({
      kind: 'retryable',
      reason: 'timeout',
      detail: 'no answer in 300 ms',
    });
  });

  it.each(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT'])(
    "calls undici's %s a timeout",
    (code) => {
      expect(classifyError(coded(code), false, 5000)).toMatchObject({
        kind: 'retryable',
        reason: 'timeout',
      });
    },
  );

  it('finds a refused address in the cause chain', () => {
    const error = new TypeError('fetch failed', { cause: coded('ERR_SSRF_REFUSED') });
    expect(classifyError(error, false, 5000)).toMatchObject({
      kind: 'permanent',
      reason: 'ssrf_refused',
    });
  });

  it('finds an unverified certificate in the cause chain', () => {
    const error = coded('UND_ERR_SOCKET', coded('DEPTH_ZERO_SELF_SIGNED_CERT'));
    expect(classifyError(error, false, 5000)).toEqual({
      kind: 'permanent',
      reason: 'tls_error',
      detail: 'certificate not verified (DEPTH_ZERO_SELF_SIGNED_CERT)',
    });
  });

  it('calls a certificate for another host a TLS error', () => {
    expect(classifyError(coded('ERR_TLS_CERT_ALTNAME_INVALID'), false, 5000)).toMatchObject({
      kind: 'permanent',
      reason: 'tls_error',
    });
  });

  it('calls a refused connection a connection error', () => {
    expect(classifyError(coded('ECONNREFUSED'), false, 5000)).toEqual({
      kind: 'retryable',
      reason: 'connection_error',
      detail: 'ECONNREFUSED',
    });
  });

  it('calls an error without a code a connection error named by its class', () => {
    expect(classifyError(new TypeError('boom'), false, 5000)).toEqual({
      kind: 'retryable',
      reason: 'connection_error',
      detail: 'TypeError',
    });
    expect(classifyError('weird', false, 5000)).toMatchObject({
      reason: 'connection_error',
      detail: 'unknown error',
    });
  });
});

/** What the test server received. */
interface Received {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

/** A loopback HTTP server answering with `handler`, counting connections and requests. */
class TestServer {
  readonly received: Received[] = [];
  connections = 0;
  private readonly server: Server;

  constructor(
    private readonly handler: (request: IncomingMessage, response: ServerResponse) => void,
  ) {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.received.push({
          method: request.method,
          url: request.url,
          headers: request.headers,
          body: Buffer.concat(chunks),
        });
        this.handler(request, response);
      });
    });
    this.server.on('connection', () => {
      this.connections += 1;
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Deadlines that pass only when the test says so. */
class ManualDeadlines implements Deadlines {
  readonly started: { readonly expire: () => void; readonly ms: number; cancelled: boolean }[] = [];

  start(expire: () => void, ms: number): unknown {
    const deadline = { expire, ms, cancelled: false };
    this.started.push(deadline);
    return deadline;
  }

  cancel(handle: unknown): void {
    (handle as { cancelled: boolean }).cancelled = true;
  }

  /** Passes the deadline started `index`th (from 0), unless it was cancelled. */
  pass(index: number): void {
    const deadline = this.started[index];
    if (!deadline.cancelled) deadline.expire();
  }
}

/** A port on 127.0.0.1 nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * The deadline of the clients below: undici's own timeouts, set from it, never fire in a test,
 * and an attempt's deadline passes only when the test passes it, so no outcome depends on how
 * fast the machine is.
 */
const FAR_MS = 60_000;

describe(WebhookClient.name, () => {
  const TIMEOUT_MS = 300;
  const BODY = Buffer.from('{"version":1,"type":"track","event":"Ünïcödé ✓","properties":{}}');
  let servers: TestServer[];
  let clients: WebhookClient[];
  let deadlines: ManualDeadlines;

  beforeEach(() => {
    servers = [];
    clients = [];
    deadlines = new ManualDeadlines();
  });

  afterEach(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(servers.map((s) => s.close()));
  });

  async function serve(
    handler: (request: IncomingMessage, response: ServerResponse) => void,
  ): Promise<{ server: TestServer; base: string }> {
    const server = new TestServer(handler);
    servers.push(server);
    const port = await server.listen();
    return { server, base: `http://127.0.0.1:${port}` };
  }

  /** A client whose deadlines pass only through `deadlines`. */
  function client(
    allowedCidrs: string[] = ['127.0.0.0/8'],
    options: Partial<WebhookClientOptions> = {},
  ): WebhookClient {
    const made = new WebhookClient({
      timeoutMs: FAR_MS,
      connectionsPerOrigin: 4,
      guard: new SsrfGuard(allowedCidrs),
      deadlines,
      ...options,
    });
    clients.push(made);
    return made;
  }

  it('POSTs the exact body bytes and headers to the path and query', async () => {
    const { server, base } = await serve((_, response) => response.writeHead(204).end());
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Sluice/1.0',
      'x-signature': 'abc123',
      'x-static': 'value',
    };
    const result = await client().post(`${base}/hooks/in?token=t%201`, BODY, headers);
    expect(result).toEqual({ kind: 'success', status: 204 });
    expect(server.received).toHaveLength(1);
    const [request] = server.received;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/hooks/in?token=t%201');
    expect(request.body.equals(BODY)).toBe(true);
    expect(request.headers).toMatchObject({ ...headers, 'content-length': String(BODY.length) });
  });

  it('classifies the answer with its Retry-After', async () => {
    const { base } = await serve((_, response) =>
      response.writeHead(429, { 'retry-after': '42' }).end('slow down'),
    );
    await expect(client().post(`${base}/`, BODY, {})).resolves.toEqual({
      kind: 'retryable',
      reason: 'http_429',
      status: 429,
      detail: 'HTTP 429',
      retryAfterMs: 42_000,
      body: 'slow down',
    });
  });

  it("keeps the start of a failed answer's body, up to its byte limit", async () => {
    const { base } = await serve((_, response) => {
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.write('database ');
      response.end('unavailable, try later');
    });
    const short = client(['127.0.0.1/32'], { responseBodyBytes: 20 });
    await expect(short.post(`${base}/`, BODY, {})).resolves.toMatchObject({
      kind: 'retryable',
      status: 500,
      body: 'database unavailable',
    });
  });

  it.each([
    ['a success', 200, 'fine', undefined],
    ['a limit of 0', 503, 'down', 0],
  ])('keeps no body of %s', async (_what, status, text, responseBodyBytes) => {
    const { base } = await serve((_, response) => response.writeHead(status).end(text));
    const result = await client(['127.0.0.1/32'], { responseBodyBytes }).post(`${base}/`, BODY, {});
    expect(result).toMatchObject({ status });
    expect(result).not.toHaveProperty('body');
  });

  it('does not follow a redirect', async () => {
    const { server, base } = await serve((request, response) => {
      if (request.url === '/moved') response.writeHead(302, { location: '/target' }).end();
      else response.writeHead(200).end();
    });
    const result = await client().post(`${base}/moved`, BODY, {});
    expect(result).toMatchObject({ kind: 'permanent', reason: 'http_3xx', status: 302 });
    expect(server.received.map((r) => r.url)).toEqual(['/moved']);
  });

  it('times out at its deadline when the server never answers', async () => {
    let arrived!: () => void;
    const received = new Promise<void>((resolve) => (arrived = resolve));
    const { server, base } = await serve(() => arrived());
    let settled = false;
    const result = client().post(`${base}/`, BODY, {});
    void result.then(() => (settled = true));
    expect(deadlines.started.map((d) => d.ms)).toEqual([FAR_MS]);
    await received;
    expect(settled).toBe(false);
    deadlines.pass(0);
    await expect(result).resolves.toEqual({
      kind: 'retryable',
      reason: 'timeout',
      detail: `no answer in ${FAR_MS} ms`,
    });
    expect(server.received).toHaveLength(1);
  });

  it('times out by the clock with its default deadlines, never before the deadline', async () => {
    const { server, base } = await serve(() => undefined);
    const timed = new WebhookClient({
      timeoutMs: TIMEOUT_MS,
      connectionsPerOrigin: 1,
      guard: new SsrfGuard(['127.0.0.0/8']),
    });
    clients.push(timed);
    const startedAt = performance.now();
    const result: AttemptResult = await timed.post(`${base}/`, BODY, {});
    // Whatever the machine's speed: a slow connect is a timeout too, and none comes early.
    expect(result).toMatchObject({ kind: 'retryable', reason: 'timeout' });
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(server.received.length).toBeLessThanOrEqual(1);
  });

  it('drains a large answer without error', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const { base } = await serve((_, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 32; i += 1) response.write(chunk);
      response.end();
    });
    const webhooks = client();
    await expect(webhooks.post(`${base}/`, BODY, {})).resolves.toEqual({
      kind: 'success',
      status: 200,
    });
    // The client is still usable afterwards.
    await expect(webhooks.post(`${base}/`, BODY, {})).resolves.toEqual({
      kind: 'success',
      status: 200,
    });
  });

  it('stops reading an answer at the cap and keeps its status', async () => {
    // An answer that never ends: only the cap can settle the attempt before the deadline.
    const { base } = await serve((_, response) => {
      response.writeHead(201);
      const timer = setInterval(() => response.write(Buffer.alloc(1024, 'x')), 5);
      response.on('close', () => clearInterval(timer));
    });
    const capped = client(['127.0.0.0/8'], { connectionsPerOrigin: 1, maxResponseBytes: 8 * 1024 });
    // No deadline passes here: only the cap can settle the attempt.
    await expect(capped.post(`${base}/`, BODY, {})).resolves.toEqual({
      kind: 'success',
      status: 201,
    });
    // The connection was closed and a new one serves the next attempt.
    await expect(capped.post(`${base}/`, BODY, {})).resolves.toMatchObject({ status: 201 });
  });

  it('keeps the status of an answer whose body stalls past the deadline', async () => {
    const { base } = await serve((_, response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write('partial');
    });
    // undici announces an answer's status just before it hands it to the attempt.
    let answered!: () => void;
    const statusArrived = new Promise<void>((resolve) => (answered = resolve));
    const onHeaders = (): void => answered();
    diagnostics.subscribe('undici:request:headers', onHeaders);
    try {
      const result = client().post(`${base}/`, BODY, {});
      await statusArrived;
      deadlines.pass(0);
      await expect(result).resolves.toEqual({ kind: 'success', status: 200 });
    } finally {
      diagnostics.unsubscribe('undici:request:headers', onHeaders);
    }
  });

  it('times out a request waiting for a pooled connection at its own deadline, unsent', async () => {
    // The server holds /first (the only connection stays busy) and answers any other at once.
    let firstArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (firstArrived = resolve));
    const { server, base } = await serve((request, response) => {
      if (request.url === '/first') firstArrived();
      else response.writeHead(204).end();
    });
    const single = client(['127.0.0.0/8'], { connectionsPerOrigin: 1 });
    const first = single.post(`${base}/first`, BODY, {});
    const second = single.post(`${base}/second`, BODY, {});
    let firstSettled = false;
    void first.then(() => (firstSettled = true));
    // Each deadline starts when its request is made, not when it gets a connection.
    expect(deadlines.started.map((d) => d.ms)).toEqual([FAR_MS, FAR_MS]);
    await arrived;

    deadlines.pass(1);
    await expect(second).resolves.toMatchObject({ kind: 'retryable', reason: 'timeout' });
    expect(firstSettled).toBe(false);
    deadlines.pass(0);
    await expect(first).resolves.toMatchObject({ kind: 'retryable', reason: 'timeout' });
    // The freed connection serves the queue in order: /second is dropped, unsent, then /third.
    await expect(single.post(`${base}/third`, BODY, {})).resolves.toEqual({
      kind: 'success',
      status: 204,
    });
    expect(server.received.map((r) => r.url)).toEqual(['/first', '/third']);
  });

  it('refuses a loopback IP literal without the allow-list, without connecting', async () => {
    const { server, base } = await serve((_, response) => response.writeHead(200).end());
    await expect(client([]).post(`${base}/`, BODY, {})).resolves.toEqual({
      kind: 'permanent',
      reason: 'ssrf_refused',
      detail: '127.0.0.1 is internal',
    });
    expect(server.connections).toBe(0);
    expect(server.received).toHaveLength(0);
  });

  it('refuses a host name resolving to loopback without the allow-list, without connecting', async () => {
    const { server, base } = await serve((_, response) => response.writeHead(200).end());
    const url = base.replace('127.0.0.1', 'localhost');
    await expect(client([]).post(`${url}/`, BODY, {})).resolves.toMatchObject({
      kind: 'permanent',
      reason: 'ssrf_refused',
    });
    expect(server.connections).toBe(0);
  });

  it('refuses an IPv6 loopback literal without the allow-list', async () => {
    await expect(client([]).post('http://[::1]:9/', BODY, {})).resolves.toMatchObject({
      kind: 'permanent',
      reason: 'ssrf_refused',
    });
  });

  it('connects to a host name whose addresses the allow-list admits', async () => {
    const { server, base } = await serve((_, response) => response.writeHead(200).end());
    const url = base.replace('127.0.0.1', 'localhost');
    await expect(
      client(['127.0.0.0/8', '::1/128']).post(`${url}/named`, BODY, {}),
    ).resolves.toEqual({ kind: 'success', status: 200 });
    expect(server.received.map((r) => r.url)).toEqual(['/named']);
  });

  it('calls a port nobody listens on a connection error', async () => {
    const port = await closedPort();
    await expect(client().post(`http://127.0.0.1:${port}/`, BODY, {})).resolves.toMatchObject({
      kind: 'retryable',
      reason: 'connection_error',
      detail: 'ECONNREFUSED',
    });
  });

  it('posts to a host name with an underscore (a Docker Compose service name)', async () => {
    const { server, base } = await serve((_, response) => response.writeHead(204).end());
    const guard = new SsrfGuard(['127.0.0.0/8']);
    // A resolver that knows the name, as Docker's does; the guard still checks the address.
    const lookup: SsrfGuard['lookup'] = (host, options, callback) =>
      guard.lookup(host === 'my_receiver' ? '127.0.0.1' : host, options, callback);
    const composeGuard: SsrfGuard = Object.assign(Object.create(guard) as SsrfGuard, { lookup });
    const underscored = client([], { connectionsPerOrigin: 1, guard: composeGuard });
    const url = `${base.replace('127.0.0.1', 'my_receiver')}/hook`;
    await expect(underscored.post(url, BODY, {})).resolves.toEqual({
      kind: 'success',
      status: 204,
    });
    expect(server.received.map((r) => [r.url, r.headers.host])).toEqual([
      ['/hook', new URL(url).host],
    ]);
  });

  it('refuses a URL with a user and password without connecting, naming neither', async () => {
    const { server, base } = await serve((_, response) => response.writeHead(200).end());
    const url = base.replace('http://', 'http://alice:s3cr3t-pw@');
    const result = await client().post(`${url}/hook`, BODY, {});
    expect(result).toMatchObject({ kind: 'permanent', reason: 'invalid_url' });
    expect(JSON.stringify(result)).not.toMatch(/alice|s3cr3t-pw/);
    expect(server.connections).toBe(0);
  });

  it.each([
    ['not a url', 'not an absolute URL'],
    ['/relative', 'not an absolute URL'],
    ['ftp://example.com/file', 'not http or https'],
  ])('refuses %s as an invalid URL', async (url, detail) => {
    await expect(client().post(url, BODY, {})).resolves.toEqual({
      kind: 'permanent',
      reason: 'invalid_url',
      detail,
    });
  });
});

describe(`${WebhookClient.name} over HTTPS`, () => {
  const BODY = Buffer.from(
    '{"type":"delete","userId":"u-1","timestamp":"2030-01-01T00:00:00.000Z"}',
  );
  let certificates: TestCertificates;
  let receiver: WebhookReceiver | undefined;
  let webhooks: WebhookClient | undefined;

  beforeAll(() => {
    certificates = makeTestCertificates();
  });

  afterAll(() => certificates.remove());

  afterEach(async () => {
    await webhooks?.close();
    await receiver?.stop();
    receiver = undefined;
    webhooks = undefined;
  });

  function client(ca?: string): WebhookClient {
    webhooks = new WebhookClient({
      timeoutMs: FAR_MS,
      connectionsPerOrigin: 2,
      guard: new SsrfGuard(['127.0.0.0/8', '::1/128']),
      deadlines: new ManualDeadlines(),
      ...(ca === undefined ? {} : { ca }),
    });
    return webhooks;
  }

  it('refuses a self-signed certificate before any request is sent', async () => {
    receiver = await new WebhookReceiver(certificates.selfSigned).start();
    await expect(client().post(receiver.url('/hook', 'localhost'), BODY, {})).resolves.toEqual({
      kind: 'permanent',
      reason: 'tls_error',
      detail: 'certificate not verified (DEPTH_ZERO_SELF_SIGNED_CERT)',
    });
    expect(receiver.requests).toHaveLength(0);
    expect(receiver.connections).toBe(0);
  });

  it('posts over TLS to a certificate signed by a trusted extra CA, by host name', async () => {
    receiver = await new WebhookReceiver(certificates.signed).start();
    const ca = readFileSync(certificates.caFile, 'utf8');
    await expect(client(ca).post(receiver.url('/hook', 'localhost'), BODY, {})).resolves.toEqual({
      kind: 'success',
      status: 200,
    });
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0].body.equals(BODY)).toBe(true);
  });
});
