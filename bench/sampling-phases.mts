/**
 * Preloaded (`--import`) into the app of the `phases10` side (bench:dispatcher's dispatcher,
 * bench:ingest's ingest): sampling is switched on and off every `BENCH_PHASE_MS` (2,000) ms in
 * one process, so the sampled phases' cost is set against unsampled phases of the same process
 * at the same minute (one process's speed differs from the next one's by about 20% on a shared
 * machine).
 *
 * In an unsampled phase the SDK's ratio sampler decides "not recorded": the attempt then runs
 * on the unsampled path after the tracer's sampler was asked (about 1 µs for the tenth of
 * attempts that Sluice's own root decision samples, so the sampled phases' extra is understated
 * by about 0.1 µs a delivery). At each phase's end a JSON line goes to stderr (a
 * {@link SamplingPhase}), with the HTTP requests the process's servers received in it.
 */
import { Server } from 'node:http';
import { createRequire } from 'node:module';

import type { Context } from '@opentelemetry/api';
import type { SamplingResult } from '@opentelemetry/sdk-trace';

/** One phase: wall-clock epoch ms, and the process's CPU in it (all threads). */
export interface SamplingPhase {
  readonly samplingPhase: 'on' | 'off';
  readonly startedAt: number;
  readonly endedAt: number;
  readonly cpuUs: number;
  /** HTTP requests the process's servers received in the phase. */
  readonly requests: number;
}

// The app loads the SDK's CommonJS build: the same module, so the same class, is patched here.
const sdk = createRequire(import.meta.url)(
  '@opentelemetry/sdk-trace',
) as typeof import('@opentelemetry/sdk-trace');

const PHASE_MS = Number(process.env.BENCH_PHASE_MS ?? 2_000);
const NOT_RECORD: SamplingResult = { decision: sdk.SamplingDecision.NOT_RECORD };

let sampling = false;
let startedAt = Date.now();
let cpu = process.cpuUsage();

const prototype = sdk.TraceIdRatioBasedSampler.prototype;
// eslint-disable-next-line @typescript-eslint/unbound-method -- called with its own `this` below
const shouldSample = prototype.shouldSample;
prototype.shouldSample = function (this: typeof prototype, context: Context, traceId: string) {
  return sampling ? shouldSample.call(this, context, traceId) : NOT_RECORD;
};

let requests = 0;
// eslint-disable-next-line @typescript-eslint/unbound-method -- called with its own `this` below
const emit = Server.prototype.emit;
Server.prototype.emit = function (this: Server, event: string | symbol, ...args: unknown[]) {
  if (event === 'request') requests += 1;
  return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
};

setInterval(() => {
  const used = process.cpuUsage(cpu);
  const endedAt = Date.now();
  const phase: SamplingPhase = {
    samplingPhase: sampling ? 'on' : 'off',
    startedAt,
    endedAt,
    cpuUs: used.user + used.system,
    requests,
  };
  process.stderr.write(`${JSON.stringify(phase)}\n`);
  sampling = !sampling;
  startedAt = endedAt;
  cpu = process.cpuUsage();
  requests = 0;
}, PHASE_MS).unref();
