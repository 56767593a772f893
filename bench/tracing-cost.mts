/**
 * What the dispatcher's tracing code costs an attempt, alone: the CPU of `tracedAttempt` around
 * an attempt that tells its one webhook's POST (`startWebhookSpan`, `endWebhookSpan`) and does
 * nothing else, spans exported over OTLP/HTTP to the local sink (`otlp-sink.mts`). Each side
 * runs in a fresh process, the sides interleaved, medians of the rounds. No Kafka, no HTTP
 * webhook: a quick, low-noise look at a tracing change (the benchmarks say what it costs a
 * delivery).
 *
 * The event loop gets a turn every few attempts, as between an app's deliveries: the batch
 * processor's exports then finish and its queue drains, so every sampled span is encoded and
 * sent. Without turns the first export never ends and the spans past a full queue are dropped
 * unencoded, which leaves the export's cost out.
 *
 * `npm run build && node bench/tracing-cost.mts` (BENCH_ROUNDS, default 3; BENCH_CALLS per
 * run, default 100000; BENCH_ALLOC_OBJECTS, default 0: small objects each attempt allocates
 * first, on every side, standing in for a delivery's own short-lived garbage;
 * BENCH_WARM_UP_CALLS, default 20000, attempts run before the measured ones). Sides: traces
 * off; on at 0%, 10% and 100% of new traces (no traceparent, as in bench:dispatcher); at 10%
 * below an unsampled and a sampled parent (as in a pipeline, where the decision comes from
 * ingest). `OTEL_EXPORTER_OTLP_PROTOCOL=http/json` exports JSON instead; Node options given to
 * this script (`node --cpu-prof bench/tracing-cost.mts`) go to each side's process too. The
 * report adds the CPU of one sampled span: the 10% and 100% sides' extra over 0% divided by
 * their share.
 *
 * `BENCH_APP=ingest` times ingest's tracing code instead: `tracedRequest` around a tracking
 * request's handler that is handed the request's span, notes its intake on it and makes the
 * `traceparent` its calls' records carry, as `TrackingService` does with traces on (and
 * neither with them off); the parents come as a producer's `traceparent` header.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

import { envReader } from './common.mts';
import { firstJsonLine, Supervisor } from './processes.mts';

const requireBuilt = createRequire(import.meta.url);
/** Whose tracing code is timed: the dispatcher's (the default) or ingest's. */
const APP = process.env.BENCH_APP === 'ingest' ? 'ingest' : 'dispatcher';
const SIDES = {
  off: { ratio: undefined, parent: undefined },
  traced0: { ratio: 0, parent: undefined },
  traced10: { ratio: 0.1, parent: undefined },
  traced100: { ratio: 1, parent: undefined },
  traced10Unsampled: { ratio: 0.1, parent: '00' },
  traced10Sampled: { ratio: 0.1, parent: '01' },
} as const;
type Side = keyof typeof SIDES;
/** Attempts between two turns of the event loop. */
const ATTEMPTS_PER_TURN = 10;

interface Tracing {
  startTracing(app: string, options: object): Promise<void>;
  stopTracing(app: string): Promise<void>;
  tracerOf(app: string): object | undefined;
  spanTraceHeaders(span: SpanLike): Record<string, string>;
}
interface SpanLike {
  isRecording(): boolean;
  setAttribute(key: string, value: string | number): void;
}
interface IngestTracing {
  tracedRequest<R>(
    tracer: object,
    routes: object,
    handler: (request: R, reply: object, span?: SpanLike) => Promise<string>,
  ): (request: R, reply: object) => Promise<string>;
}
interface DeliveryTracing {
  tracedAttempt<T>(
    tracer: object,
    record: object,
    handle: (span: SpanLike) => Promise<T>,
  ): Promise<T>;
  startWebhookSpan(
    tracer: object,
    parent: SpanLike | undefined,
    url: string,
    id: string,
    alone: boolean,
  ): object | undefined;
  endWebhookSpan(span: object, result: object, latencyMs: number): void;
}

/** One side in this process: prints `{"cpuUsPerCall":N}`. */
async function runSide(
  side: Side,
  calls: number,
  sinkUrl: string,
  allocObjects: number,
  warmUpCalls: number,
): Promise<void> {
  const tracing = requireBuilt(resolve('dist/libs/tracing/src/index.js')) as Tracing;
  const { ratio, parent } = SIDES[side];
  if (ratio !== undefined) {
    await tracing.startTracing(APP, {
      url: `${sinkUrl}/v1/traces`,
      // The standard variable picks the encoding, as in the apps (http/protobuf by default).
      protocol:
        process.env.OTEL_EXPORTER_OTLP_PROTOCOL === 'http/json' ? 'http/json' : 'http/protobuf',
      serviceName: 'bench-tracing-cost',
      resourceAttributes: '',
      sampler: 'parentbased_traceidratio',
      ratio,
      scheduleDelayMs: 5_000,
      maxQueueSize: 2_048,
    });
  }
  const tracer = tracing.tracerOf(APP);
  const traceparent =
    parent === undefined
      ? undefined
      : `00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-${parent}`;
  const unit =
    APP === 'ingest' ? ingestRequest(tracing, tracer, traceparent) : attempt(tracer, traceparent);
  let kept = 0;
  const one = () => {
    kept += garbage(allocObjects);
    return unit();
  };
  const run = async (n: number) => {
    for (let i = 1; i <= n; i += 1) {
      await one();
      if (i % ATTEMPTS_PER_TURN === 0) await new Promise((turn) => setImmediate(turn));
    }
  };
  await run(warmUpCalls);
  const before = process.cpuUsage();
  await run(calls);
  const used = process.cpuUsage(before);
  if (kept < 0) throw new Error('unreachable');
  await tracing.stopTracing(APP);
  console.log(JSON.stringify({ cpuUsPerCall: (used.user + used.system) / calls }));
}

/** A delivery attempt that tells its one webhook's POST, traced when `tracer` is set. */
function attempt(tracer: object | undefined, traceparent: string | undefined) {
  const delivery = requireBuilt(
    resolve('dist/apps/dispatcher/src/delivery/delivery-tracing.js'),
  ) as DeliveryTracing;
  const headers: Record<string, Buffer> = {
    'sluice-destination-id': Buffer.from('0b9d3c5e-2f7a-4c1e-9d8b-6a5f4e3d2c1b'),
    'sluice-source-id': Buffer.from('7c6b5a49-3827-4615-8493-a2b1c0d9e8f7'),
    'sluice-message-id': Buffer.from('bench-message-0001'),
    'sluice-call-type': Buffer.from('track'),
  };
  if (traceparent !== undefined) headers.traceparent = Buffer.from(traceparent);
  const record = { topic: 'bench.sluice.deliveries.v1', partition: 0, offset: '1', headers };
  const answer = { kind: 'success', status: 200 };
  const post = async (attempt?: SpanLike) => {
    const url = 'http://127.0.0.1:8080/hook';
    const span = tracer && delivery.startWebhookSpan(tracer, attempt, url, 'w', true);
    await Promise.resolve();
    if (span) delivery.endWebhookSpan(span, answer, 1.5);
    return { result: 'delivered' };
  };
  return () => (tracer ? delivery.tracedAttempt(tracer, record, post) : post());
}

/**
 * A tracking request's handler, in `tracedRequest` when `tracer` is set: with traces on it is
 * handed the request's span, notes the intake on it and makes its calls' `traceparent` from it,
 * as ingest's `TrackingService` does.
 */
function ingestRequest(
  tracing: Tracing,
  tracer: object | undefined,
  traceparent: string | undefined,
) {
  const ingest = requireBuilt(
    resolve('dist/apps/ingest/src/tracking/tracking.tracing.js'),
  ) as IngestTracing;
  const request = { params: { route: 'track' }, headers: traceparent ? { traceparent } : {} };
  const handle = async (_request: unknown, _reply: unknown, span?: SpanLike) => {
    await Promise.resolve();
    if (span === undefined) return '';
    if (span.isRecording()) {
      span.setAttribute('sluice.source.id', '7c6b5a49-3827-4615-8493-a2b1c0d9e8f7');
      span.setAttribute('sluice.calls.accepted', 1);
      span.setAttribute('sluice.calls.rejected', 0);
    }
    return tracing.spanTraceHeaders(span).traceparent ?? '';
  };
  const handler = tracer ? ingest.tracedRequest(tracer, { track: 'track' }, handle) : handle;
  return () => handler(request, { statusCode: 200 });
}

/** Allocates `objects` small objects and drops them; returns how many (so none is elided). */
function garbage(objects: number): number {
  const made: object[] = [];
  for (let i = 0; i < objects; i += 1) made.push({ i, text: `field-${i}`, list: [i] });
  return made.length;
}

async function main(): Promise<void> {
  const { number } = envReader(process.env, 'tracing-cost');
  const rounds = number('BENCH_ROUNDS', 3, 1, 20);
  const calls = number('BENCH_CALLS', 100_000, 1_000, 10_000_000);
  const allocObjects = number('BENCH_ALLOC_OBJECTS', 0, 0, 100_000);
  const warmUp = number('BENCH_WARM_UP_CALLS', 20_000, 0, 10_000_000);
  const supervisor = new Supervisor();
  const sink = supervisor.spawn('OTLP sink', process.execPath, ['bench/otlp-sink.mts'], {});
  const { port } = (await firstJsonLine(sink, 10_000)) as { port: number };
  const samples = new Map<Side, number[]>();
  try {
    for (let round = 1; round <= rounds; round += 1) {
      const order = Object.keys(SIDES) as Side[];
      if (round % 2 === 0) order.reverse();
      for (const side of order) {
        const url = `http://127.0.0.1:${port}`;
        const args = [process.argv[1], side, String(calls), url, `${allocObjects}`, `${warmUp}`];
        const run = spawnSync(process.execPath, [...process.execArgv, ...args], {
          encoding: 'utf8',
        });
        if (run.status !== 0) throw new Error(`${side}: ${run.stderr}`);
        const { cpuUsPerCall } = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
          cpuUsPerCall: number;
        };
        samples.set(side, [...(samples.get(side) ?? []), cpuUsPerCall]);
      }
    }
  } finally {
    await supervisor.stop(sink);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const off = median(samples.get('off')!);
  const none = median(samples.get('traced0')!);
  console.log(
    `${APP}'s tracing code's CPU per ${APP === 'ingest' ? 'request' : 'attempt'}, medians of ` +
      `${rounds} rounds of ${calls} calls` +
      ` after ${warmUp} (${allocObjects} objects allocated per attempt)`,
  );
  for (const [side, xs] of samples) {
    const ratio = SIDES[side].parent === undefined ? SIDES[side].ratio : undefined;
    const span =
      ratio === undefined || ratio === 0
        ? ''
        : `, ${((median(xs) - none) / ratio).toFixed(1)} µs a sampled span`;
    const extra =
      side === 'off' ? '' : `, ${(median(xs) - off).toFixed(2)} µs more than off${span}`;
    console.log(
      `${side.padEnd(18)} ${median(xs).toFixed(2)} µs${extra} (${xs.map((x) => x.toFixed(2)).join(' ')})`,
    );
  }
}

const [side, calls, sinkUrl, allocObjects, warmUp] = process.argv.slice(2);
if (side !== undefined) {
  await runSide(side as Side, Number(calls), sinkUrl, Number(allocObjects), Number(warmUp));
} else await main();
