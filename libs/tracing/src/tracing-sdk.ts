import { randomFillSync } from 'node:crypto';

import { Logger } from '@nestjs/common';
import {
  diag,
  DiagLogger,
  DiagLogLevel,
  ROOT_CONTEXT,
  Span,
  SpanKind,
  TextMapPropagator,
  trace,
  TraceFlags,
  Tracer,
} from '@opentelemetry/api';
import type { IdGenerator } from '@opentelemetry/sdk-trace';

/** The shape of each app's `tracing` configuration (libs/config's TracingConfig). */
export interface TracingOptions {
  /** Where spans are posted (the `/v1/traces` URL). */
  readonly url: string;
  readonly protocol: 'http/protobuf' | 'http/json';
  readonly serviceName: string;
  /** `key=value` pairs separated by commas (OTEL_RESOURCE_ATTRIBUTES). */
  readonly resourceAttributes: string;
  readonly sampler: string;
  /** The share the ratio samplers keep, 0 to 1. */
  readonly ratio: number;
  readonly scheduleDelayMs: number;
  readonly maxQueueSize: number;
}

/** Longest wait at shutdown for the last spans' export, in milliseconds. */
const STOP_WAIT_MS = 3_000;

/** What one app traces with: its tracer, and the provider that exports its spans. */
interface AppTracing {
  readonly tracer: Tracer;
  readonly shutdown: () => Promise<void>;
}

/** How a tracer decides a new trace: its sampler's root decision and its ids. */
interface RootDecision {
  /** Whether the tracer's sampler records a span with no parent in a {@link NewTraceId}. */
  readonly samples: (id: NewTraceId) => boolean;
  readonly ids: ChosenTraceIds;
}

/** A random trace id, and the XOR of its four 32-bit words (what a ratio sampler reads). */
interface NewTraceId {
  readonly id: string;
  readonly folded: number;
}

/**
 * Random ids, read from a pool of random bytes filled a few kilobytes at a time (one id costs
 * a hex conversion), except that the next trace id may be chosen beforehand: the one
 * {@link startRootSpan} already sampled, so the tracer's sampler decides on the same id.
 */
class ChosenTraceIds implements IdGenerator {
  chosen: string | undefined;
  private readonly pool = Buffer.allocUnsafe(ID_POOL_BYTES);
  private used = ID_POOL_BYTES;

  generateTraceId(): string {
    const id = this.chosen ?? this.newTraceId().id;
    this.chosen = undefined;
    return id;
  }

  generateSpanId(): string {
    const start = this.take(8);
    return this.pool.toString('hex', start, start + 8);
  }

  newTraceId(): NewTraceId {
    const start = this.take(16);
    const pool = this.pool;
    const folded =
      (pool.readUInt32BE(start) ^
        pool.readUInt32BE(start + 4) ^
        pool.readUInt32BE(start + 8) ^
        pool.readUInt32BE(start + 12)) >>>
      0;
    return { id: pool.toString('hex', start, start + 16), folded };
  }

  /** Where `bytes` fresh random bytes start in the pool; never all zeros (an invalid id). */
  private take(bytes: number): number {
    if (this.used + bytes > ID_POOL_BYTES) {
      randomFillSync(this.pool);
      this.used = 0;
    }
    const start = this.used;
    this.used += bytes;
    for (let i = start; i < start + bytes; i += 1) if (this.pool[i] !== 0) return start;
    return this.take(bytes);
  }
}

const ID_POOL_BYTES = 4096;

/** Each traced app's provider: apps sharing a process (local runs) keep their service names. */
const apps = new Map<string, AppTracing>();
let propagator: TextMapPropagator | undefined;
/** Tracers whose sampler follows a parent's decision (`parentbased_*`). */
const parentBased = new WeakSet<Tracer>();
const roots = new WeakMap<Tracer, RootDecision>();

/**
 * Whether `tracer` leaves a span below an unsampled parent unsampled too: then such a span
 * need not be made at all, and the parent's context travels on in its place.
 */
export function followsParent(tracer: Tracer): boolean {
  return parentBased.has(tracer);
}

/**
 * The tracer of `app`, or undefined when its traces are off: hot paths test this once and
 * pay nothing more when off. Read it after {@link startTracing} (apps' constructors do).
 */
export function tracerOf(app: string): Tracer | undefined {
  return apps.get(app)?.tracer;
}

/**
 * A span with no parent, as `tracer.startSpan(name, { kind }, ROOT_CONTEXT)` makes it: the
 * tracer's sampler decides first, and a trace it does not sample gets a non-recording span at
 * once, which carries the decision downstream (most new traces at a low ratio). The samplers
 * {@link startTracing} makes decide on the trace id alone ({@link rootDecision} takes the same
 * decision), so the decision is the tracer's.
 */
export function startRootSpan(tracer: Tracer, name: string, kind: SpanKind): Span {
  const root = roots.get(tracer);
  if (root === undefined) return tracer.startSpan(name, { kind }, ROOT_CONTEXT);
  const traceId = root.ids.newTraceId();
  if (!root.samples(traceId)) {
    const spanId = root.ids.generateSpanId();
    return trace.wrapSpanContext({ traceId: traceId.id, spanId, traceFlags: TraceFlags.NONE });
  }
  // The tracer asks its id generator for the trace id: the same one, so it decides on it too.
  root.ids.chosen = traceId.id;
  return tracer.startSpan(name, { kind }, ROOT_CONTEXT);
}

/** The W3C trace-context propagator; set once some app traces. */
export function tracePropagator(): TextMapPropagator | undefined {
  return propagator;
}

/**
 * Loads the OpenTelemetry SDK and starts exporting `app`'s spans over OTLP/HTTP. Without
 * options (traces off) it loads nothing: the SDK's packages are imported here only.
 */
export async function startTracing(
  app: string,
  options: TracingOptions | undefined,
): Promise<void> {
  if (options === undefined || apps.has(app)) return;
  const [sdk, core, resources] = await Promise.all([
    loadSdk(),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
  ]);
  // No context manager: each span is handed to the work it covers (`inGivenSpan`), never read
  // back from an async context.
  if (propagator === undefined) {
    propagator = new core.W3CTraceContextPropagator();
    diag.setLogger(diagLogger(), DiagLogLevel.WARN);
  }
  const attributes = core.parseKeyPairsIntoRecord(options.resourceAttributes);
  const ids = new ChosenTraceIds();
  const sampler = samplerOf(sdk, options);
  const provider = new sdk.TracerProvider({
    idGenerator: ids,
    resource: resources
      .defaultResource()
      .merge(
        resources.resourceFromAttributes({ ...attributes, 'service.name': options.serviceName }),
      ),
    sampler,
    spanProcessors: [
      new sdk.BatchSpanProcessor({
        exporter: await exporter(options),
        scheduledDelayMillis: options.scheduleDelayMs,
        maxQueueSize: options.maxQueueSize,
        maxExportBatchSize: Math.min(512, options.maxQueueSize),
      }),
    ],
  });
  const tracer = provider.getTracer(`sluice.${app}`);
  if (options.sampler.startsWith('parentbased_')) parentBased.add(tracer);
  roots.set(tracer, { samples: rootDecision(options), ids });
  apps.set(app, { tracer, shutdown: () => provider.shutdown() });
}

/**
 * Exports `app`'s last spans and stops its provider (nothing when it has none), waiting at
 * most `STOP_WAIT_MS`: a receiver that is away must not hold the app's shutdown.
 */
export async function stopTracing(app: string): Promise<void> {
  const traced = apps.get(app);
  if (traced === undefined) return;
  apps.delete(app);
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)));
  try {
    await Promise.race([traced.shutdown(), waited]);
  } finally {
    clearTimeout(timer);
  }
}

const loadSdk = () => import('@opentelemetry/sdk-trace');
type Sdk = Awaited<ReturnType<typeof loadSdk>>;

/** The standard sampler an `OTEL_TRACES_SAMPLER` name stands for. */
function samplerOf(sdk: Sdk, options: TracingOptions) {
  const name = options.sampler;
  const base = rootSampler(options);
  const root =
    base === 'always_off'
      ? new sdk.AlwaysOffSampler()
      : base === 'traceidratio'
        ? new sdk.TraceIdRatioBasedSampler(options.ratio)
        : new sdk.AlwaysOnSampler();
  // A sampler that is not parent-based still decides below a remote parent: root everywhere.
  const sampler = name.startsWith('parentbased_')
    ? new sdk.ParentBasedSampler({ root })
    : new sdk.ParentBasedSampler({
        root,
        remoteParentSampled: root,
        remoteParentNotSampled: root,
        localParentSampled: root,
        localParentNotSampled: root,
      });
  return sampler;
}

function rootSampler(options: TracingOptions): string {
  return options.sampler.replace(/^parentbased_/, '');
}

/**
 * The root sampler's decision on a new trace id, as the SDK's samplers take it, from the id's
 * folded words: the ratio sampler's `shouldSample` parses the id's hex again (the cost of a
 * few hundred nanoseconds on every new trace). tracing.spec.ts checks it against the SDK's.
 */
function rootDecision(options: TracingOptions): (id: NewTraceId) => boolean {
  const base = rootSampler(options);
  if (base === 'always_off') return () => false;
  if (base !== 'traceidratio') return () => true;
  const ratio = Number.isNaN(options.ratio) ? 0 : Math.min(1, Math.max(0, options.ratio));
  const bound = ratio === 1 ? 2 ** 32 : Math.floor(ratio * 0xffffffff);
  return ({ folded }) => folded < bound;
}

/** The OTLP/HTTP exporter of the protocol (its headers, TLS and timeout from `OTEL_EXPORTER_OTLP_*`). */
async function exporter(options: TracingOptions) {
  if (options.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter({ url: options.url });
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter({ url: options.url });
}

/** The SDK's own warnings (an export that failed, spans dropped) in the app's log. */
function diagLogger(): DiagLogger {
  const logger = new Logger('Tracing');
  // A component's messages come as (component name, text, details...): the texts and errors'
  // messages are written, never an object (an exporter's options hold its headers).
  const write = (...parts: unknown[]) =>
    logger.warn(
      parts
        .map((p) => (p instanceof Error ? p.message : typeof p === 'string' ? p : undefined))
        .filter((p) => p !== undefined)
        .join(' '),
    );
  return { error: write, warn: write, info: () => {}, debug: () => {}, verbose: () => {} };
}
