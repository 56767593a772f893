import type { SettingsLogger } from '@app/settings';

/** A SettingsLogger that keeps every message, for assertions. */
export class RecordingLogger implements SettingsLogger {
  /** Messages passed to `log`. */
  readonly logs: string[] = [];
  /** Messages passed to `warn`. */
  readonly warnings: string[] = [];

  /** Records a routine message. */
  log(message: string): void {
    this.logs.push(message);
  }

  /** Records a warning. */
  warn(message: string): void {
    this.warnings.push(message);
  }

  /** Every message, in no particular order. */
  all(): string[] {
    return [...this.logs, ...this.warnings];
  }
}
