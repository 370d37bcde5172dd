/**
 * @module The name a LISTEN channel has in the store: scoped to the store's schema, so that test
 * suites on one database (one schema each) do not hear each other (store/listen.ts). Its own file:
 * the embedded store's worker thread (store/pglite-thread.ts) loads it without the rest.
 */

/** The quoted channel name LISTEN takes, for a channel in `schema`. */
export function scopedChannel(channel: string, schema: string): string {
  return `"${`${channel}.${schema}`.replaceAll('"', '""')}"`;
}
