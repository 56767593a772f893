/** The settings cache could not load its first snapshot, so it has nothing to serve. */
export class SettingsUnavailableError extends Error {
  /** Stable code for logs and tests. */
  readonly code = 'SETTINGS_UNAVAILABLE';

  constructor(reason: string) {
    super(`settings could not be loaded: ${reason}`);
    this.name = SettingsUnavailableError.name;
  }
}
