/**
 * @module This process's count of agent-settings changes it made itself: a cached setting read
 * before the latest one is not used (settings-cache.ts). Changes made elsewhere arrive by notification.
 */
let version = 0;

/** Called by every writer of the settings (settings.ts), after its statement. */
export function settingsChanged(): void {
  version += 1;
}

export function settingsVersion(): number {
  return version;
}
