import type { CommitTrouble } from './offset-commits';

/**
 * What a consumer logs about a refused commit: the first refusal of a run at once, then one
 * line a while (`everyMs`) at most, however often the retries are refused, so that commits
 * refused for minutes say so in the log without flooding it.
 */
export type CommitNotice = 'first' | 'still' | 'quiet';

/**
 * @param lastNoticeAt when this run of refusals was last logged (undefined: not yet)
 */
export function commitNotice(
  trouble: CommitTrouble,
  now: number,
  lastNoticeAt: number | undefined,
  everyMs: number,
): CommitNotice {
  if (trouble.refusals === 1 || lastNoticeAt === undefined) return 'first';
  return now - lastNoticeAt >= everyMs ? 'still' : 'quiet';
}

/** The Kafka error's type (`ILLEGAL_GENERATION`, ...) when it has one, else the error's name. */
export function errorType(error: unknown): string {
  const e = error as { type?: unknown; name?: unknown; originalError?: unknown } | undefined;
  if (e === null || typeof e !== 'object') return typeof error;
  if (typeof e.type === 'string') return e.type;
  // kafkajs's retrier wraps the last error it saw.
  if (e.originalError !== undefined) return errorType(e.originalError);
  return typeof e.name === 'string' ? e.name : 'unknown';
}
