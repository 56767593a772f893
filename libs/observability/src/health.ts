/** A dependency the app needs to do its work: Kafka, PostgreSQL. */
export interface HealthCheck {
  /** Short name shown in the readiness answer, e.g. `kafka`. */
  readonly name: string;
  /** Resolves when the dependency answered for real; rejects otherwise. */
  check(): Promise<void>;
}

/** Injection token of the app's list of {@link HealthCheck}s. */
export const HEALTH_CHECKS = Symbol('HEALTH_CHECKS');

/** The readiness answer: each check's status, and whether all passed. */
export interface Readiness {
  readonly ready: boolean;
  readonly checks: Record<string, 'up' | 'down'>;
}

/**
 * Runs every check at once, each bounded by `timeoutMs`. Failure reasons are not returned
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
        return [c.name, 'up'] as const;
      } catch (error) {
        onFailure(c.name, error);
        return [c.name, 'down'] as const;
      }
    }),
  );
  return {
    ready: results.every(([, status]) => status === 'up'),
    checks: Object.fromEntries(results),
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
