/**
 * @module A test case (one request the fuzzer means to send) and its rendering into a concrete HTTP request.
 */
import type { Operation, Parameter } from './contract/operations.ts';
import { serializeParameter } from './schema/serialize.ts';

export type Phase = 'examples' | 'coverage' | 'fuzzing' | 'stateful';
/** Schemathesis's "data generation method": data meant to satisfy the contract, or meant to break it. */
export type Kind = 'positive' | 'negative';

export type Body =
  | { mediaType: string; value: unknown }
  /** Bytes sent as they are (non-JSON payloads, for negative data). */
  | { mediaType: string; raw: string };

export interface Case {
  operation: Operation;
  phase: Phase;
  kind: Kind;
  /** What makes this case special, e.g. `Missing required header: X-CSRF-Token`. */
  description: string;
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  cookies: Record<string, unknown>;
  body?: Body;
  /** An undocumented method sent to the operation's path (`unsupported_method`). */
  method?: string;
  /** The header a coverage case left out on purpose (`missing_required_header`). */
  missingHeader?: string;
  /** Parameter names whose value was mutated: credentials must not overwrite them. */
  pinned?: string[];
  /** Send without credentials (the `ignored_auth` probe). */
  withoutAuth?: boolean;
  /** The headers already carry the credentials to use (a sequence using a key it just created). */
  customAuth?: boolean;
}

export interface PreparedRequest {
  method: string;
  /** Path and query, e.g. `/runs?limit=5`. */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Renders a case: path template filled, query encoded, headers and cookies serialized, body encoded. */
export function prepareRequest(c: Case): PreparedRequest {
  const op = c.operation;
  let path = op.path;
  const query: string[] = [];
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  const byIn = (where: Parameter['in']) => op.parameters.filter((p) => p.in === where);
  for (const p of byIn('path')) {
    const value = c.path[p.name];
    const text = value === undefined ? '' : (serializeParameter(p, value) as { text: string }).text;
    path = path.split(`{${p.name}}`).join(text);
  }
  const queryParams = new Map(byIn('query').map((p) => [p.name, p]));
  for (const [name, value] of Object.entries(c.query)) {
    if (value === undefined) continue;
    const p = queryParams.get(name) ?? fallback(name, 'query');
    for (const [k, v] of (serializeParameter(p, value) as { pairs: [string, string][] }).pairs) query.push(`${k}=${v}`);
  }
  const headerParams = new Map(byIn('header').map((p) => [p.name.toLowerCase(), p]));
  for (const [name, value] of Object.entries(c.headers)) {
    if (value === undefined) continue;
    const p = headerParams.get(name.toLowerCase()) ?? fallback(name, 'header');
    headers[name] = (serializeParameter(p, value) as { value: string }).value;
  }
  const cookieParams = new Map(byIn('cookie').map((p) => [p.name, p]));
  for (const [name, value] of Object.entries(c.cookies)) {
    if (value === undefined) continue;
    const p = cookieParams.get(name) ?? fallback(name, 'cookie');
    cookies.push(`${name}=${(serializeParameter(p, value) as { value: string }).value}`);
  }
  if (cookies.length > 0) headers.Cookie = cookies.join('; ');
  let body: string | undefined;
  const method = (c.method ?? op.method).toUpperCase();
  // GET and HEAD cannot carry a body (fetch refuses to build such a request).
  if (c.body && method !== 'GET' && method !== 'HEAD') {
    headers['Content-Type'] ??= c.body.mediaType;
    body = 'raw' in c.body ? c.body.raw : encodeBody(c.body.mediaType, c.body.value);
  }
  return { method, path: query.length > 0 ? `${path}?${query.join('&')}` : path, headers, body };
}

function fallback(name: string, where: Parameter['in']): Parameter {
  return {
    name,
    in: where,
    required: false,
    style: where === 'query' || where === 'cookie' ? 'form' : 'simple',
    explode: where === 'query',
    schema: {},
    examples: [],
  };
}

/** JSON for JSON media types; `application/x-www-form-urlencoded` as form pairs; anything else as text. */
export function encodeBody(mediaType: string, value: unknown): string {
  const type = mediaType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded' && value && typeof value === 'object') {
    return new URLSearchParams(Object.entries(value).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();
  }
  if (type.startsWith('text/') && typeof value === 'string') return value;
  return JSON.stringify(value) ?? 'null';
}

/** A copy of a case with some fields replaced (cases are treated as values). */
export function withCase(c: Case, patch: Partial<Case>): Case {
  return { ...c, path: { ...c.path }, query: { ...c.query }, headers: { ...c.headers }, cookies: { ...c.cookies }, ...patch };
}
