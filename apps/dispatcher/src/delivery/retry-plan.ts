/** Inputs of {@link planRetry}. */
export interface RetryPlanInput {
  /** Retry delays in seconds, in ladder order; the last repeats. */
  readonly ladder: readonly number[];
  /** Failed attempts so far (0 for a delivery sent to the tiers without an attempt). */
  readonly failures: number;
  readonly now: number;
  readonly firstAttemptAt: number;
  readonly windowMs: number;
  /** The longest `Retry-After` among the failures, in ms. */
  readonly retryAfterMs?: number;
}

/** The next attempt's tier and due time, or the window closing first. */
export type RetryPlan =
  | { readonly kind: 'retry'; readonly delaySeconds: number; readonly dueAt: number }
  | { readonly kind: 'window_closed' };

/**
 * The ladder's delay for the next attempt (the last delay repeats). A `Retry-After` longer
 * than that picks the shortest tier at least as long (the longest tier when none is). When
 * the attempt would fall after the window (counted from the first attempt), the delivery is
 * dead now rather than later.
 */
export function planRetry(input: RetryPlanInput): RetryPlan {
  const { ladder } = input;
  let delaySeconds = ladder[Math.min(Math.max(input.failures - 1, 0), ladder.length - 1)];
  if (input.retryAfterMs !== undefined && input.retryAfterMs > delaySeconds * 1000) {
    const longer = [...ladder].sort((a, b) => a - b).find((d) => d * 1000 >= input.retryAfterMs!);
    delaySeconds = longer ?? Math.max(...ladder);
  }
  const dueAt = input.now + delaySeconds * 1000;
  if (dueAt > input.firstAttemptAt + input.windowMs) return { kind: 'window_closed' };
  return { kind: 'retry', delaySeconds, dueAt };
}
