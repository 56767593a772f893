/**
 * The calls the benchmark sends: realistic `track` calls padded to an exact size, the same
 * bytes for ingest and for the bare server.
 */

/** A fixed time, so every body of a run is identical from round to round. */
const TIMESTAMP = '2026-01-01T00:00:00.000Z';

/** A `track` call of exactly `bytes` bytes of JSON (`type` included when `withType`). */
export function trackCall(userIndex: number, bytes: number, withType = false): object {
  const id = String(userIndex).padStart(6, '0');
  const call = {
    ...(withType ? { type: 'track' } : {}),
    userId: `user-${id}`,
    event: 'Order Completed',
    properties: {
      orderId: `order-${id}`,
      total: 127.5,
      revenue: 115,
      shipping: 7.5,
      tax: 5,
      currency: 'EUR',
      coupon: 'SPRING26',
      products: [1, 2, 3].map((n) => ({
        productId: `p-${id}-${n}`,
        sku: `SKU-${1000 + n}`,
        name: `Product number ${n}`,
        price: 38.33,
        quantity: n,
        category: 'Garden',
      })),
      note: '',
    },
    context: { library: { name: 'analytics-node', version: '2.1.0' }, locale: 'en-GB' },
    timestamp: TIMESTAMP,
  };
  const missing = bytes - Buffer.byteLength(JSON.stringify(call));
  if (missing < 0) throw new Error(`a track call needs at least ${bytes - missing} bytes`);
  call.properties.note = 'x'.repeat(missing);
  return call;
}

/** `count` single-call bodies for `/v1/track`, one user each. */
export function trackBodies(count: number, bytes: number): string[] {
  return Array.from({ length: count }, (_, i) => JSON.stringify(trackCall(i, bytes)));
}

/** A `/v1/batch` body of `calls` track calls of `bytes` bytes each, one user each. */
export function batchBody(calls: number, bytes: number): string {
  const batch = Array.from({ length: calls }, (_, i) => trackCall(i, bytes, true));
  return JSON.stringify({ batch });
}
