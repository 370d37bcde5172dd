/**
 * @module Reading a caught value, which TypeScript types `unknown`: its message, and the system error
 * code Node sets on failed file and socket calls (`ENOENT`, `EEXIST`, …).
 */

/** The message of an `Error`, or the value as text. */
export function messageOf(caught: unknown): string {
  return caught instanceof Error ? caught.message : String(caught);
}

/** The `code` of a Node system error (`ENOENT`, `EEXIST`, `EPERM`, …), or undefined. */
export function errnoOf(caught: unknown): string | undefined {
  if (typeof caught !== 'object' || caught === null || !('code' in caught)) return undefined;
  return typeof caught.code === 'string' ? caught.code : undefined;
}
