/**
 * @module Request id: every response carries `X-Request-Id`, echoing the caller's value when it
 * is safe to echo, otherwise a fresh crypto-random one. Handlers and the error mapper read it
 * with `c.get('requestId')` (5xx bodies quote it).
 *
 * Mount it first, so that every later middleware, the error mapper and the 404 handler see the id.
 */
import type { MiddlewareHandler } from 'hono';
import { randomBase62 } from '../../random.ts';

const REQUEST_ID_HEADER = 'X-Request-Id';

/** Context variables this middleware provides (as Hono's own `RequestIdVariables`); app-env.ts composes them. */
export type RequestIdVariables = { requestId: string };

interface RequestIdOptions {
  /** Makes a new id; defaults to `req_` + 24 base62 characters from the CSPRNG. */
  generate?: () => string;
}

// Visible ASCII only, as the contract's X-Request-Id pattern says (`^[\x21-\x7E]+$`, 1-200): the value
// goes back into a response header and into logs, so spaces, control characters (header splitting, log
// forging) and non-ASCII are refused. 200 is the spec's longest caller-chosen identifier (conversationId).
const ACCEPTABLE_ID = /^[\x21-\x7e]{1,200}$/;

/** Whether a caller-sent id may be echoed as is. */
export function isAcceptableRequestId(value: string | undefined): value is string {
  return value !== undefined && ACCEPTABLE_ID.test(value);
}

export function newRequestId(): string {
  return `req_${randomBase62(24)}`;
}

export function requestId(options: RequestIdOptions = {}): MiddlewareHandler<{ Variables: RequestIdVariables }> {
  const generate = options.generate ?? newRequestId;
  return async function requestId(c, next) {
    const sent = c.req.header(REQUEST_ID_HEADER);
    const id = isAcceptableRequestId(sent) ? sent : generate();
    c.set('requestId', id);
    // Before next(): responses built from the context (c.json, onError, notFound) carry it.
    c.header(REQUEST_ID_HEADER, id);
    await next();
    // After next(): also a Response a handler built by hand. (c.header copies the response, so
    // only when needed.)
    if (c.res.headers.get(REQUEST_ID_HEADER) !== id) c.header(REQUEST_ID_HEADER, id);
  };
}
