/**
 * @module Request validation against the contract's zod schemas, for one route. Parameters that
 * fail give `400 invalid_request`, a body that fails gives `400 invalid_body`; `param` names the
 * first failing field and the message says which of the contract's rules it breaks (./rule.ts),
 * never the value sent. Parsed values (with defaults applied) are left in `c.get('valid')`.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { z, type ZodType } from 'zod';
import { fail, type ErrorCode } from '../../errors.ts';
import type { RouteSpec } from '../../routes/route-spec.ts';
import { brokenRule } from './rule.ts';
import { findTextFault, MAX_JSON_DEPTH } from './text.ts';
import { readBodyWithLimit } from '../../domain/webhooks/body-limit.ts';

/** Request parts after validation by the contract's schemas (parsed and defaulted). */
interface Valid {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
}

/** Context variables this middleware provides (the inbound front, middleware/inbound, sets them too). */
export type ValidateVariables = { valid: Valid };

type Part = 'params' | 'query' | 'headers' | 'body';

export function validate(request: RouteSpec['request']): MiddlewareHandler<{ Variables: ValidateVariables }> {
  return async function validate(c, next) {
    const valid: Valid = {
      params: checkFields('params', request.params, c.req.param()),
      query: checkFields('query', request.query, c.req.query()),
      headers: checkHeaders(c, request.headers),
      body: undefined,
    };
    if (request.body) {
      const bytes = await readCapped(c, request.body.maxBytes);
      const body = parseJsonBody(bytes, c.req.header('content-type'), request.body);
      // An optional body that was not sent stays undefined; the handler applies its defaults.
      valid.body = body === undefined ? undefined : checkPart('body', request.body.schema, body);
    }
    c.set('valid', valid);
    await next();
  };
}

/** The headers an operation declares, checked by its schema (`400 invalid_request`). */
export function checkHeaders(c: Context, schema: ZodType | undefined): Record<string, unknown> {
  return checkFields('headers', schema, headerValues(c, schema));
}

/** A part made of named fields (path, query, headers), checked by its schema (an object schema): its fields. */
export function checkFields(part: Exclude<Part, 'body'>, schema: ZodType | undefined, input: Record<string, string>): Record<string, unknown> {
  const checked = checkPart(part, schema, input);
  return typeof checked === 'object' && checked !== null ? { ...checked } : {};
}

/** One request part checked by its schema: `400 invalid_body` for the body, `400 invalid_request` otherwise. */
export function checkPart(part: Part, schema: ZodType | undefined, input: unknown): unknown {
  if (!schema) return input ?? {};
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const { message, param } = describe(part, result.error.issues[0], input);
  throw fail(part === 'body' ? 'invalid_body' : 'invalid_request', message, param === undefined ? {} : { param });
}

/** Header parameters by the names the schema declares; HTTP header names ignore case. */
function headerValues(c: Context, schema: ZodType | undefined): Record<string, string> {
  const values: Record<string, string> = {};
  const names = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  for (const name of names) {
    const value = c.req.header(name);
    if (value !== undefined) values[name] = value;
  }
  return values;
}

/**
 * The raw body, read with the operation's cap enforced while reading (`413 payload_too_large`
 * before a byte is read when Content-Length says too much, or as soon as the bytes pass it).
 */
async function readCapped(c: Context, maxBytes: number): Promise<Uint8Array> {
  // Over the cap, the rest of the body is left unread. The 413 is not sent with `Connection: close`:
  // Node would then close the socket at once, and a client still writing its body gets a reset that
  // can destroy the answer before it reads it. Instead the adapter discards what still comes for a
  // short while (500 ms, at most 64 MiB, @hono/node-server's drain) and then closes the connection.
  return readBodyWithLimit(c.req.raw.body, { contentLength: c.req.header('content-length') ?? null, limitBytes: maxBytes });
}

interface JsonBodyOptions {
  /** Code for a body that is not JSON, or whose text cannot be kept (`payload_invalid` inbound). */
  unparsable?: ErrorCode;
  /** Refuse NUL anywhere in the body (inbound events, whose free-form text is stored as is). */
  refuseNul?: boolean;
}

/**
 * The JSON of a body already read as raw bytes; undefined when there is none. Refuses the wrong
 * media type, bytes that are not UTF-8 JSON, and text the store cannot keep.
 */
export function parseJsonBody(
  bytes: Uint8Array,
  contentType: string | undefined,
  body: NonNullable<RouteSpec['request']['body']>,
  options: JsonBodyOptions = {},
): unknown {
  const unparsable = options.unparsable ?? 'invalid_body';
  if (bytes.length === 0) {
    if (body.required) throw fail('invalid_body', 'The request body is required.');
    return undefined;
  }
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== body.contentType.toLowerCase()) {
    throw fail('invalid_body', `The request body must be sent as ${body.contentType}.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw fail(unparsable, 'The request body is not valid JSON.');
  }
  const fault = findTextFault(parsed, { nul: options.refuseNul ?? false });
  if (fault === 'lone_surrogate') {
    throw fail(unparsable, 'The request body holds a lone UTF-16 surrogate (\\ud800 to \\udfff unpaired): text must be well-formed Unicode.');
  }
  if (fault === 'nul') throw fail(unparsable, 'The request body holds a NUL character (\\u0000), which is not accepted.');
  if (fault === 'too_deep') throw fail(unparsable, `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  return parsed;
}

const PART_NAMES: Record<Part, string> = {
  params: 'path parameter',
  query: 'query parameter',
  headers: 'header',
  body: 'body field',
};

/** "Missing body field 'alias'.", "Invalid query parameter 'limit': must be at most 200.", "Unknown body field 'x'." */
function describe(part: Part, issue: z.core.$ZodIssue | undefined, input: unknown): { message: string; param?: string } {
  const noun = PART_NAMES[part];
  if (!issue) return { message: `Invalid ${noun}.` };
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    const where = fieldName([...issue.path, key]);
    // Only a plain name is repeated back; anything odd is not echoed.
    return PLAIN_NAME.test(where) ? { message: `Unknown ${noun} '${where}'.`, param: where } : { message: `Unknown ${noun}.` };
  }
  if (issue.path.length === 0) {
    const rule = brokenRule(issue);
    if (part === 'body') return { message: rule ? `The request body is invalid: it ${rule}.` : 'The request body is invalid.' };
    return { message: `Invalid ${noun}s.` };
  }
  const where = fieldName(issue.path);
  const missing = valueAt(input, issue.path) === undefined;
  const rule = missing ? undefined : brokenRule(issue);
  // A path through a caller's own keys (a map's) is repeated back only when plain.
  const named = PLAIN_NAME.test(where);
  const head = `${missing ? 'Missing' : 'Invalid'} ${noun}${named ? ` '${where}'` : ''}`;
  return { message: rule ? `${head}: ${rule}.` : `${head}.`, ...(named ? { param: where } : {}) };
}

/** A field name that may be repeated back as it is. */
const PLAIN_NAME = /^[A-Za-z0-9_.[\]-]{1,80}$/;

/** `messages[0].content` */
function fieldName(path: readonly PropertyKey[]): string {
  return path.map((segment, i) => (typeof segment === 'number' ? `[${segment}]` : `${i === 0 ? '' : '.'}${String(segment)}`)).join('');
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = Reflect.get(current, segment);
  }
  return current;
}
