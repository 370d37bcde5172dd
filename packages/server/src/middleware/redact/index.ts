/**
 * @module Response body redaction: every JSON body (success and error alike) has its strings
 * redacted, plain text passes through the redactor whole. Server-Sent Events are left alone here: the
 * streaming code redacts each fragment with `createStreamRedactor`, which must see them in order.
 *
 * The common case costs one serialisation: for the request's lifetime `c.json` redacts the values
 * while it serialises them (./json.ts), and the response it makes is left as it is, so
 * @hono/node-server still writes its string body directly. Any other JSON or text body (a
 * `Response` built by hand, `c.body`, `c.text`, a `c.json` response that something copied since) is
 * read back, redacted and re-wrapped, as every body used to be: nothing leaves unredacted.
 *
 * Mount it right after the request-id middleware and before everything that can answer, so it
 * sees the bodies the routes, the error mapper and the 404 handler render (see the wiring
 * comment in ../rate-limit/index.ts). The one response that must show a secret (a new API key,
 * an MCP token) calls `keepUnredacted(c, secret)` before answering.
 *
 * Text the customer wrote (a workspace or key name, a pause reason, an email) is its own data, not
 * engine output: the fields the contract marks `x-customer-data` (`customerData` of each response in
 * generated/routes.ts) are left as they are, so "Claude's team" stays "Claude's team".
 */
import type { MiddlewareHandler } from 'hono';
import { createRedactor, type Redactor } from '../../redact/index.ts';
import type { RouteVariables } from '../route/index.ts';
import type { RequestIdVariables } from '../request-id/index.ts';
import { type Kept, redactedJson, type KeepTree } from './json.ts';

/** Context variables this middleware provides; app-env.ts composes them. */
export type RedactVariables = { redactKeep?: Set<string> };

/** What it reads besides its own: the route's `operationId` (../route), whose `x-customer-data` it keeps. */
type Variables = RedactVariables & Pick<RouteVariables, 'operationId'> & Partial<RequestIdVariables>;

/** Where each operation's response, by status, holds the customer's own text. */
type CustomerData = (operationId: string, status: number) => KeepTree | undefined;

/** From the contract's routes: operationId -> status -> tree of the `customerData` paths. */
export function customerDataOf(routes: readonly { operationId: string; responses: Record<string, { customerData?: string[] }> }[]): CustomerData {
  const trees = new Map<string, KeepTree>();
  for (const route of routes) {
    for (const [status, response] of Object.entries(route.responses)) {
      if (response.customerData?.length) trees.set(`${route.operationId} ${status}`, toTree(response.customerData));
    }
  }
  return (operationId, status) => trees.get(`${operationId} ${status}`);
}

function toTree(paths: readonly string[]): KeepTree {
  const root: Record<string, KeepTree> = {};
  for (const path of paths) {
    const parts = path.split('.');
    let node: Record<string, KeepTree> = root;
    parts.forEach((part, i) => {
      if (i === parts.length - 1) node[part] = true;
      else {
        const next = node[part];
        if (next === true) return;
        node = next ?? (node[part] = {});
      }
    });
  }
  return root;
}

/** What {@link keepUnredacted} uses of a request's context, whatever else the app keeps there. */
interface KeepContext {
  get(key: 'redactKeep'): Set<string> | undefined;
  set(key: 'redactKeep', value: Set<string>): void;
}

/** Leaves these exact string values of this response's JSON body as they are. */
export function keepUnredacted(c: KeepContext, ...values: string[]): void {
  const keep = c.get('redactKeep') ?? new Set<string>();
  for (const value of values) keep.add(value);
  c.set('redactKeep', keep);
}

const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;
const TEXT_TYPE = /^text\/plain\s*(?:;|$)/i;

/** `c.json`'s and `c.body`'s signatures, loosely: the value, then a status or init, then headers. */
type Render = (value: unknown, arg?: unknown, headers?: Record<string, string | string[]>) => Response;

/** `redactor`: the app's (with the deployment's own names); the fixed rules only when absent. */
export function redactBody(redactor: Redactor = createRedactor(), customerData?: CustomerData): MiddlewareHandler<{ Variables: Variables }> {
  // The responses `c.json` made from redacted values: left as they are.
  const rendered = new WeakSet<Response>();
  return async function redactBody(c, next) {
    const writable = c as unknown as { json: Render; body: Render; status: (status: number) => void };
    const render = writable.body;
    const setStatus = writable.status;
    // Hono keeps the status set with `c.status()` to itself; `c.json` without one uses it.
    let status = 200;
    writable.status = (code) => {
      status = code;
      setStatus(code);
    };
    writable.json = (object, arg, headers) => {
      const answered = typeof arg === 'number' ? arg : ((arg as { status?: number } | undefined)?.status ?? status);
      const operationId = c.get('operationId');
      const keepTree = operationId ? customerData?.(operationId, answered) : undefined;
      // What c.json does with the text it serialised: the same status, headers and default type.
      const res = render(redactedJson(redactor, object, kept(c), keepTree), arg, { 'Content-Type': 'application/json', ...headers });
      rendered.add(res);
      return res;
    };
    await next();
    if (rendered.has(c.res)) return;
    const type = c.res.headers.get('content-type') ?? '';
    const json = JSON_TYPE.test(type);
    if ((!json && !TEXT_TYPE.test(type)) || c.res.body === null) return;
    const raw = await c.res.text();
    const operationId = c.get('operationId');
    const keepTree = operationId ? customerData?.(operationId, c.res.status) : undefined;
    const body = json ? redactJsonText(redactor, raw, kept(c), keepTree) : redactor.text(raw);
    const headers = new Headers(c.res.headers);
    headers.delete('content-length');
    const { status: answered, statusText } = c.res;
    // Unset first: assigning over a response merges its headers back (a stale Content-Length).
    c.res = undefined;
    c.res = new Response(body, { status: answered, statusText, headers });
  };
}

/**
 * What a body leaves as it is: the values the route asked to show, and the request's id (the client's own, echoed as
 * sent, or one this server made of random characters; its `X-Request-Id` header carries it unredacted anyway).
 * Scanning it cost each error body a redaction of a string never seen before. As with `keepUnredacted`, the value
 * is kept wherever it stands whole: the client's own text.
 */
function kept(c: { get(key: 'redactKeep'): Set<string> | undefined; get(key: 'requestId'): string | undefined }): Kept {
  const values = c.get('redactKeep');
  const requestId = c.get('requestId');
  return { has: (value) => value === requestId || values?.has(value) === true };
}

/** A body read back: parsed, then redacted as it is serialised again. */
function redactJsonText(redactor: Redactor, raw: string, keep: Kept, tree: KeepTree | undefined): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // Declared JSON but not JSON: still never let it out unredacted.
    return redactor.text(raw);
  }
  return redactedJson(redactor, parsed, keep, tree);
}
