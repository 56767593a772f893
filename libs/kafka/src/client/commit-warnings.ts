import { commitNotice, errorType } from '../semantics/commit-notice';
import { CommitTrouble, PartitionOffset } from '../semantics/offset-commits';
import type { StuckHead } from './assigned-pipelines';
import { describeError } from './describe-error';

/** While commits keep being refused, one warning this often at most says for how long. */
const COMMIT_NOTICE_EVERY_MS = 30_000;

/**
 * What a consumer says when its commits stand still, one group's worth: whatever a member
 * finished but did not commit is handled again by the partition's next owner, so commits
 * refused for minutes, or a record holding its partition's commits back, must show in the log
 * (without a line per refused request).
 */
export class CommitWarnings {
  /** When the current run of refused commits was last logged. */
  private noticeAt?: number;

  constructor(
    private readonly groupId: string,
    private readonly log: { warn(message: string): void },
    private readonly now: () => number,
  ) {}

  /** A refused commit request: the first of a run at once, then a line a while at most. */
  refused(error: unknown, offsets: readonly PartitionOffset[], trouble: CommitTrouble): void {
    const now = this.now();
    const notice = commitNotice(trouble, now, this.noticeAt, COMMIT_NOTICE_EVERY_MS);
    if (notice === 'quiet') return;
    this.noticeAt = now;
    const partitions = offsets.map((o) => `${o.topic}[${o.partition}]`).join(', ');
    const type = errorType(error);
    const described = describeError(error);
    const how = described.startsWith(`${type}:`) ? described : `${type}: ${described}`;
    const seconds = Math.round(trouble.forMs / 1_000);
    this.log.warn(
      notice === 'first'
        ? `commits of group ${this.groupId} refused (${how}) for ${partitions}; retrying`
        : `commits of group ${this.groupId} refused for ${seconds} s (${trouble.refusals} requests; last ${how}) for ${partitions}; retrying`,
    );
  }

  /** Commits go through again after refusals: said once, if the refusals were logged. */
  resumed(trouble: CommitTrouble): void {
    if (this.noticeAt === undefined) return;
    this.noticeAt = undefined;
    this.log.warn(
      `commits of group ${this.groupId} go through again after ${Math.round(trouble.forMs / 1_000)} s (${trouble.refusals} refused)`,
    );
  }

  /** Records that have held their partitions' commits back for long, each said once. */
  stuck(heads: readonly StuckHead[]): void {
    for (const head of heads) {
      this.log.warn(
        `record ${head.topic}[${head.partition}]@${head.offset} of group ${this.groupId} unfinished for ${Math.round(head.forMs / 1_000)} s: the partition's commits wait for it`,
      );
    }
  }
}
