/**
 * @module Response body redaction: every JSON body (success and error alike) passes through
 * `redactValue`, plain text through `redactText`. Server-Sent Events are left alone here: the
 * streaming code redacts each fragment with `createStreamRedactor`, which must see them in order.
 *
 * Mount it right after the request-id middleware and before everything that can answer, so it
 * sees the bodies the routes, the error mapper and the 404 handler render (see the wiring
 * comment in ../rate-limit/index.ts). The one response that must show a secret (a new API key,
 * an MCP token) calls `keepUnredacted(c, secret)` before answering.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { createRedactor, type Redactor } from '../../redact/index.ts';

/** Context variables of this middleware. */
export type Variables = { redactKeep?: Set<string> };

/** Leaves these exact string values of this response's JSON body as they are. */
export function keepUnredacted(c: Context, ...values: string[]): void {
  const keep = (c.get('redactKeep') as Set<string> | undefined) ?? new Set<string>();
  for (const value of values) keep.add(value);
  c.set('redactKeep', keep);
}

const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;
const TEXT_TYPE = /^text\/plain\s*(?:;|$)/i;

/** `redactor`: the app's (with the deployment's own names); the fixed rules only when absent. */
export function redactBody(redactor: Redactor = createRedactor()): MiddlewareHandler<{ Variables: Variables }> {
  return async function redactBody(c, next) {
    await next();
    const type = c.res.headers.get('content-type') ?? '';
    const json = JSON_TYPE.test(type);
    if ((!json && !TEXT_TYPE.test(type)) || c.res.body === null) return;
    const raw = await c.res.text();
    const body = json ? redactJsonText(redactor, raw, c.get('redactKeep')) : redactor.text(raw);
    const headers = new Headers(c.res.headers);
    headers.delete('content-length');
    const { status, statusText } = c.res;
    // Unset first: assigning over a response merges its headers back (a stale Content-Length).
    c.res = undefined;
    c.res = new Response(body, { status, statusText, headers });
  };
}

function redactJsonText(redactor: Redactor, raw: string, keep: Set<string> | undefined): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // Declared JSON but not JSON: still never let it out unredacted.
    return redactor.text(raw);
  }
  return JSON.stringify(redactor.value(parsed, keep ? { keep } : {}));
}
