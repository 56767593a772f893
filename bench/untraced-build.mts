/**
 * The `untraced` sides of `bench:ingest` and `bench:dispatcher`: the apps as built, except that
 * `@app/tracing` is a module that loads no OpenTelemetry package and never has a tracer
 * (`NO_TRACING` below). Everything else is the same code, so the side measures what traces
 * off still costs: the SDK's modules loaded, and every `tracer === undefined` test on a hot path
 * (those tests stay; with no tracer they cost what they cost in a build without the feature).
 */
import { cpSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const require = createRequire(import.meta.url);
const BUILT = 'dist';
const TRACING_INDEX = 'libs/tracing/src/index.js';

/**
 * `@app/tracing` in the build without traces: the names the apps import, no OpenTelemetry
 * package loaded, never a tracer. What is only called with a tracer throws, so a call the apps
 * would make with traces off shows at once.
 */
const NO_TRACING = `'use strict';
const { ATTRIBUTE } = require('./attributes');
function traced() {
  throw new Error('a build without traces has no tracer');
}
class TracingLifecycle {
  onApplicationShutdown() {
    return Promise.resolve();
  }
}
module.exports = {
  ATTRIBUTE,
  SpanKind: { INTERNAL: 0, SERVER: 1, CLIENT: 2, PRODUCER: 3, CONSUMER: 4 },
  SpanStatusCode: { UNSET: 0, OK: 1, ERROR: 2 },
  TracingLifecycle,
  httpParent: traced,
  inGivenSpan: traced,
  recordParent: traced,
  spanTraceHeaders: traced,
  startChildSpan: traced,
  startLinkedSpan: traced,
  startTracing: () => Promise.resolve(),
  stopTracing: () => Promise.resolve(),
  tracerOf: () => undefined,
};
`;

/**
 * Copies dist/ to `.local/bench-untraced/dist` (node_modules still resolve from the root) with
 * the tracing library replaced; returns the copy's directory. Throws when the replacement does
 * not export what the real library exports, so the copy never runs with a name missing.
 */
export function untracedBuild(root = process.cwd()): string {
  const target = resolve(root, '.local/bench-untraced/dist');
  if (existsSync(target)) rmSync(target, { recursive: true });
  cpSync(resolve(root, BUILT), target, { recursive: true });
  writeFileSync(resolve(target, TRACING_INDEX), NO_TRACING);
  const real = require(resolve(root, BUILT, TRACING_INDEX)) as Record<string, unknown>;
  const stub = require(resolve(target, TRACING_INDEX)) as Record<string, unknown>;
  // Type-only names (an interface) come out of the build as undefined: nothing to replace.
  const missing = Object.keys(real).filter((name) => real[name] !== undefined && !(name in stub));
  if (missing.length > 0) {
    throw new Error(`bench/untraced-build.mts lacks ${missing.join(', ')} of @app/tracing`);
  }
  return target;
}
