/**
 * The webhook receivers of the dispatcher benchmark, in a process of their own so that they
 * share no thread with the process measured: a bare `node:http` server that reads each body
 * and answers 200 (counting calls per path: one per request, or a batch request's calls), and
 * one that reads each body and never answers (the endpoint that times out). Every 1000th
 * request to the 200 server has its `X-Signature` checked against an HMAC-SHA1 of the body
 * computed here.
 *
 * A batch's calls are counted by the start every benchmark call has (`{"version":`, one per
 * call), a native search: parsing each body cost the sink's share of the machine's two cores
 * some twenty times as much (bench/DISPATCHER.md). Every 100th batch request is parsed too,
 * and a count that differs is counted as bad.
 *
 * `node bench/dispatcher-sink.mts '<SinkSpec as JSON>'` prints
 * `{"event":"listening","okPort":..,"hangPort":..}`. `GET /__count` on the 200 server answers
 * `{"counts":{"/path":n},"checked":n,"badSignatures":n,"batchesParsed":n,"badCounts":n}`;
 * `POST /__reset` zeroes the counts.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** What the receivers check. */
export interface SinkSpec {
  /** The destination's shared secret, to check signatures with. */
  readonly secret: string;
}

/** What `GET /__count` answers. */
export interface SinkCounts {
  readonly counts: Record<string, number>;
  readonly checked: number;
  readonly badSignatures: number;
  /** Batch requests whose calls were also counted by parsing the body, and how many differed. */
  readonly batchesParsed: number;
  readonly badCounts: number;
}

/** One request in this many has its signature checked. */
const CHECK_EVERY = 1_000;
/** `[`: a batch request's body starts with it, a single call's with `{`. */
const OPEN_BRACKET = 0x5b;
/** How every call the benchmark makes starts (`callValue` in router-stand.mts). */
const CALL_START = Buffer.from('{"version":');
/** One batch request in this many is parsed, to check the count. */
const PARSE_EVERY = 100;

const spec = JSON.parse(process.argv[2] ?? '{}') as SinkSpec;
let counts = new Map<string, number>();
let received = 0;
let checked = 0;
let badSignatures = 0;
let batches = 0;
let batchesParsed = 0;
let badCounts = 0;

function readBody(request: IncomingMessage, done: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => done(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
}

function control(request: IncomingMessage, response: ServerResponse): boolean {
  if (request.url === '/__count') {
    const answer: SinkCounts = {
      counts: Object.fromEntries(counts),
      checked,
      badSignatures,
      batchesParsed,
      badCounts,
    };
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(answer));
    return true;
  }
  if (request.url === '/__reset') {
    counts = new Map();
    received = 0;
    response.end();
    return true;
  }
  return false;
}

const ok = createServer((request, response) => {
  if (control(request, response)) return;
  readBody(request, (body) => {
    const path = request.url ?? '';
    // A batch request (a JSON array) counts its calls: the benchmark compares calls a second.
    const calls = body[0] === OPEN_BRACKET ? batchCalls(body) : 1;
    counts.set(path, (counts.get(path) ?? 0) + calls);
    received += 1;
    if (received % CHECK_EVERY === 0) {
      checked += 1;
      const expected = createHmac('sha1', spec.secret).update(body).digest('hex');
      if (request.headers['x-signature'] !== expected) badSignatures += 1;
    }
    response.writeHead(200, { 'content-length': '0' });
    response.end();
  });
});

function batchCalls(body: Buffer): number {
  let calls = 0;
  for (let at = body.indexOf(CALL_START); at >= 0; at = body.indexOf(CALL_START, at + 1)) {
    calls += 1;
  }
  batches += 1;
  if (batches % PARSE_EVERY === 0) {
    batchesParsed += 1;
    if ((JSON.parse(body.toString()) as unknown[]).length !== calls) badCounts += 1;
  }
  return calls;
}

// Reads the body and keeps the connection open without answering: the client's deadline ends it.
const hang = createServer((request) => request.resume());
hang.requestTimeout = 0;

for (const server of [ok, hang]) {
  // Longer than undici's keep-alive, so the client, not the server, closes idle connections.
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 0;
  server.maxRequestsPerSocket = 0;
}

function listen(server: typeof ok): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : -1);
    }),
  );
}

const [okPort, hangPort] = await Promise.all([listen(ok), listen(hang)]);
process.stdout.write(`${JSON.stringify({ event: 'listening', okPort, hangPort })}\n`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(0));
