/**
 * @module error_body_conformance: every 4xx/5xx body is `{ error, message?, requestId?, ...extras }` with a known
 * `error` code whose status is the response's, the extra fields and headers of that code, and on 5xx a
 * `requestId` equal to the `X-Request-Id` header.
 */
import { ERROR_SHAPES, type FieldRule } from './error-codes.ts';
import { snippet } from './not-a-server-error.ts';
import type { CheckFn } from './types.ts';

export const errorBodyConformance: CheckFn = ({ response, request, config }) => {
  if (response.status < 400 || request.method === 'HEAD') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(response.text);
  } catch {
    return `Error response ${response.status} is not a JSON error object: ${snippet(JSON.stringify(response.text), 120)}`;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return `Error response ${response.status} body is not an object`;
  const b = body as Record<string, unknown>;
  if (typeof b.error !== 'string') return `Error response ${response.status} has no string "error" field`;
  const code = b.error;
  const expected = config.errorStatus[code];
  if (expected === undefined) return `Unknown error code "${code}" (status ${response.status})`;
  if (expected !== response.status) return `Error code "${code}" must have status ${expected}, got ${response.status}`;
  const problems: string[] = [];
  if ('message' in b && typeof b.message !== 'string') problems.push('"message" is not a string');
  const shape = ERROR_SHAPES[code] ?? {};
  if (shape.message && typeof b.message !== 'string') problems.push('"message" is required');
  for (const [field, rule] of Object.entries(shape.fields ?? {})) {
    if (!(field in b)) problems.push(`missing "${field}"`);
    else if (!fits(b[field], rule)) problems.push(`"${field}" is not ${describe(rule)}`);
  }
  for (const [field, rule] of Object.entries(shape.optional ?? {})) {
    if (field in b && !fits(b[field], rule)) problems.push(`"${field}" is not ${describe(rule)}`);
  }
  for (const header of shape.headers ?? []) if (!response.headers[header]) problems.push(`missing header ${header}`);
  if (response.status >= 500) {
    if (typeof b.requestId !== 'string') problems.push('5xx without "requestId"');
    else if (response.headers['x-request-id'] && b.requestId !== response.headers['x-request-id']) {
      problems.push(`"requestId" ${b.requestId} differs from X-Request-Id ${response.headers['x-request-id']}`);
    }
  }
  return problems.length > 0 ? `Error body of "${code}" does not conform: ${problems.join('; ')}` : undefined;
};

function fits(value: unknown, rule: FieldRule): boolean {
  if (Array.isArray(rule)) return rule.includes(value as string);
  switch (rule) {
    case 'string':
      return typeof value === 'string' && value.length > 0;
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'date-time':
      return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) && !Number.isNaN(Date.parse(value));
    default:
      return false;
  }
}

function describe(rule: FieldRule): string {
  return Array.isArray(rule) ? `one of ${rule.join(', ')}` : `a valid ${rule as string}`;
}
