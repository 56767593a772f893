import { DispatcherHarness } from './dispatcher-harness';
import { ReceivedRequest } from './webhook-receiver';

/**
 * A breaker that never opens: an open breaker suspends ordering (its own unit spec), and these
 * receivers fail on purpose.
 */
export const NO_BREAKER = {
  DISPATCHER_FAILING_AFTER: '10000',
  DISPATCHER_BREAKER_MIN_ATTEMPTS: '1000000',
};

/** What a request carried: its call's user and message id. */
export function callOf(request: ReceivedRequest): { userId: string; messageId: string } {
  return JSON.parse(request.body.toString()) as { userId: string; messageId: string };
}

/** Sets a destination's ordering straight in PostgreSQL (the admin API's own spec covers it). */
export async function order(
  harness: DispatcherHarness,
  destinationId: string,
  maxPendingCalls: number,
  maxHoldSeconds: number,
): Promise<void> {
  await harness.sql(
    `UPDATE destination SET ordering_max_pending_calls = $1, ordering_max_hold_seconds = $2
     WHERE id = $3`,
    [maxPendingCalls, maxHoldSeconds, destinationId],
  );
}

/** Posts calls through ingest in batches of 100, in order, each batch after the last. */
export async function send(
  harness: DispatcherHarness,
  writeKey: string,
  calls: readonly { userId: string; messageId: string }[],
): Promise<void> {
  for (let i = 0; i < calls.length; i += 100) {
    const batch = calls.slice(i, i + 100).map((c) => ({ type: 'track', event: 'Step', ...c }));
    const answer = await harness.post('/v1/batch', { batch }, { basic: writeKey });
    expect(answer.status).toBe(200);
  }
}

/**
 * Each user's calls (by the sequence number in their messageId, `user:seq:run`) in the order of
 * their first arrival: the first request the receiver took (answered 2xx, by `statuses`); a
 * request it refused did not deliver its call.
 */
export function firstArrivals(
  requests: readonly ReceivedRequest[],
  statuses: readonly number[],
): Map<string, number[]> {
  const arrivals = new Map<string, number[]>();
  const seen = new Set<string>();
  for (const [index, request] of requests.entries()) {
    if (statuses[index] < 200 || statuses[index] >= 300) continue;
    const { messageId } = callOf(request);
    if (seen.has(messageId)) continue;
    seen.add(messageId);
    const [user, seq] = messageId.split(':');
    arrivals.set(user, [...(arrivals.get(user) ?? []), Number(seq)]);
  }
  return arrivals;
}
