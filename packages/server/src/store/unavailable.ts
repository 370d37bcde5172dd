/**
 * @module Whether a failure means the store cannot be reached (PostgreSQL down, restarting, out
 * of connections, or the network between), as opposed to a bug or a refused write. Such failures
 * answer `503 service_unavailable` with `Retry-After`, like an unreachable Redis: the client
 * retries later, and nothing about the database leaves the server.
 */

/** Socket-level codes of a connection that could not be made or was lost. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** SQLSTATEs of a server that is shutting down, starting, or out of connections (class 08 is checked apart). */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** What `pg` and PGlite say, without a code, when the connection is gone or never came. */
const UNAVAILABLE_MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error/i,
  /Cannot use a pool after calling end/i,
  /PGlite is closed/i,
];

export function isStoreUnavailable(err: unknown): boolean {
  // Walk the cause chain (and AggregateError's members: a refused connection to every address).
  const pending: unknown[] = [err];
  for (let seen = 0; pending.length > 0 && seen < 20; seen += 1) {
    const current = pending.pop();
    if (!(current instanceof Error)) continue;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
    if (UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(current.message))) return true;
    if (current.cause !== undefined) pending.push(current.cause);
    if (current instanceof AggregateError) pending.push(...current.errors);
  }
  return false;
}
