/**
 * @module Response body redaction: every JSON body (success and error alike) passes through
 * `redactValue`, plain text through `redactText`. Server-Sent Events are left alone here: the
 * streaming code redacts each fragment with `createStreamRedactor`, which must see them in order.
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
import type { Context, MiddlewareHandler } from 'hono';
import { createRedactor, type Redactor } from '../../redact/index.ts';
import type { RouteVariables } from '../route/index.ts';

/** Context variables this middleware provides; app-env.ts composes them. */
export type RedactVariables = { redactKeep?: Set<string> };

/** What it reads besides its own: the route's `operationId` (../route), whose `x-customer-data` it keeps. */
type Variables = RedactVariables & Pick<RouteVariables, 'operationId'>;

/** The customer-data paths of a body as a tree: a leaf (`true`) is left as it is. */
type KeepTree = true | { readonly [key: string]: KeepTree };

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
        node = (next as Record<string, KeepTree> | undefined) ?? (node[part] = {});
      }
    });
  }
  return root;
}

/** Leaves these exact string values of this response's JSON body as they are. */
export function keepUnredacted(c: Context, ...values: string[]): void {
  const keep = (c.get('redactKeep') as Set<string> | undefined) ?? new Set<string>();
  for (const value of values) keep.add(value);
  c.set('redactKeep', keep);
}

const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;
const TEXT_TYPE = /^text\/plain\s*(?:;|$)/i;

/** `redactor`: the app's (with the deployment's own names); the fixed rules only when absent. */
export function redactBody(redactor: Redactor = createRedactor(), customerData?: CustomerData): MiddlewareHandler<{ Variables: Variables }> {
  return async function redactBody(c, next) {
    await next();
    const type = c.res.headers.get('content-type') ?? '';
    const json = JSON_TYPE.test(type);
    if ((!json && !TEXT_TYPE.test(type)) || c.res.body === null) return;
    const raw = await c.res.text();
    const operationId = c.get('operationId');
    const keepTree = operationId ? customerData?.(operationId, c.res.status) : undefined;
    const body = json ? redactJsonText(redactor, raw, c.get('redactKeep'), keepTree) : redactor.text(raw);
    const headers = new Headers(c.res.headers);
    headers.delete('content-length');
    const { status, statusText } = c.res;
    // Unset first: assigning over a response merges its headers back (a stale Content-Length).
    c.res = undefined;
    c.res = new Response(body, { status, statusText, headers });
  };
}

function redactJsonText(redactor: Redactor, raw: string, keep: Set<string> | undefined, tree: KeepTree | undefined): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // Declared JSON but not JSON: still never let it out unredacted.
    return redactor.text(raw);
  }
  return JSON.stringify(redactExcept(redactor, parsed, keep ? { keep } : {}, tree));
}

/** Redacts a JSON value except where `tree` marks the customer's own text (`*`: every item of an array). */
function redactExcept(redactor: Redactor, value: unknown, options: { keep?: Set<string> }, tree: KeepTree | undefined): unknown {
  if (tree === undefined) return redactor.value(value, options);
  if (tree === true) return typeof value === 'string' || value === null ? value : redactor.value(value, options);
  if (Array.isArray(value)) return value.map((item) => redactExcept(redactor, item, options, tree['*']));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = redactExcept(redactor, item, options, Object.hasOwn(tree, key) ? tree[key] : undefined);
    return out;
  }
  return redactor.value(value, options);
}
