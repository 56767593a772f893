/** A dependency the app uses: Kafka, PostgreSQL, its settings cache, its consumers. */
export interface HealthCheck {
  /** Short name shown in the readiness answer, e.g. `kafka`. */
  readonly name: string;
  /**
   * Whether the app cannot do its job without it (default true). A check that is not required
   * and fails leaves the app ready, `degraded`: it shows in the answer and the metrics, but an
   * orchestrator does not take away a pod that works.
   */
  readonly required?: boolean;
  /** Resolves when the dependency answered for real; rejects otherwise. */
  check(): Promise<void>;
}

/** Injection token of the app's list of {@link HealthCheck}s. */
export const HEALTH_CHECKS = Symbol('HEALTH_CHECKS');

/** The readiness answer: each check's status, and what follows. */
export interface Readiness {
  /** Every required check passed. */
  readonly ready: boolean;
  /** Ready, but some check that is not required failed. */
  readonly degraded: boolean;
  readonly checks: Record<string, 'up' | 'down'>;
}

/**
 * Runs every check at once, each bounded by `timeoutMs`: ready when every required check
 * passed. Failure reasons are not returned
 * (they could carry connection details); they go to `onFailure` for logging.
 */
export async function readiness(
  checks: readonly HealthCheck[],
  timeoutMs: number,
  onFailure: (name: string, error: unknown) => void,
): Promise<Readiness> {
  const results = await Promise.all(
    checks.map(async (c) => {
      try {
        await withTimeout(c.check(), timeoutMs);
        return [c.name, 'up', c.required ?? true] as const;
      } catch (error) {
        onFailure(c.name, error);
        return [c.name, 'down', c.required ?? true] as const;
      }
    }),
  );
  const ready = results.every(([, status, required]) => status === 'up' || !required);
  return {
    ready,
    degraded: ready && results.some(([, status]) => status === 'down'),
    checks: Object.fromEntries(results.map(([name, status]) => [name, status])),
  };
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
