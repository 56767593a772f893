/**
 * Bytes per call the router's de-duplication holds (docs/operations.md, "De-duplication"):
 * fills the seen-set of one partition with N calls (default 600,000: a 10-minute window at
 * 1,000 calls/s) and reports the heap and array-buffer growth per call, beside a Map keyed by
 * `sourceId:messageId` strings holding the same calls.
 *
 *   npm run build && node --expose-gc bench/dedup-memory.mts [calls]
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { fingerprint, SeenWindow } = require('../dist/apps/router/src/routing/seen-set.js') as {
  fingerprint: (s: readonly [number, number], a: Buffer, b: Buffer, out: Uint32Array) => void;
  SeenWindow: new (windowMs: number) => {
    check(high: number, low: number, offset: number, timeMs: number): string;
    readonly bytes: number;
  };
};

const calls = Number(process.argv[2] ?? 600_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

function used(): number {
  gc!();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const sourceId = Buffer.from(randomUUID());
const ids = Array.from({ length: calls }, () => Buffer.from(randomUUID()));
const out = new Uint32Array(2);

const before = used();
const seen = new SeenWindow(600_000);
const started = performance.now();
ids.forEach((id, i) => {
  fingerprint([1, 2], sourceId, id, out);
  seen.check(out[0], out[1], i, i);
});
const checkUs = ((performance.now() - started) * 1_000) / calls;
const seenBytes = used() - before;

const beforeMap = used();
const map = new Map<string, number>();
// The key strings count: a router keyed this way would build and keep one per call.
ids.forEach((id, i) => map.set(`${sourceId.toString()}:${id.toString()}`, i));
const mapBytes = used() - beforeMap;

console.log(`calls: ${calls}`);
console.log(
  `seen-set: ${(seenBytes / calls).toFixed(1)} bytes/call (tables ${seen.bytes} bytes), ` +
    `${checkUs.toFixed(2)} us per fingerprint and check`,
);
console.log(
  `Map of strings: ${(mapBytes / calls).toFixed(1)} bytes/call (${map.size} keys, the strings included)`,
);
