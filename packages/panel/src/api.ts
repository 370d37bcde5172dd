/**
 * @module The typed client of the contract (openapi-fetch on generated/types.ts). Same origin, the session
 * cookie travels by itself; the CSRF token lives only in memory (the server answers it again to the cookie's
 * holder after a reload, `GET /auth/session`) and goes on every write. Every answer is watched for a `401`: the
 * session ended (expired, signed out elsewhere, reset), and the panel goes back to sign-in (session-watch.ts).
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from '../../../generated/types.ts';

export type Schemas = components['schemas'];
export type { operations };

let csrfToken: string | undefined;

/** Kept in memory only, never in localStorage or sessionStorage: a reload reads it again from the server. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

export function getCsrfToken(): string | undefined {
  return csrfToken;
}

/** The header every admin write carries (the contract declares it on each of them). */
export function csrfHeader(): { 'X-CSRF-Token': string } {
  return { 'X-CSRF-Token': csrfToken ?? '' };
}

const csrf: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD' && csrfToken) request.headers.set('X-CSRF-Token', csrfToken);
    return request;
  },
};

const unauthenticated = new Set<() => void>();

/** Calls `listener` on every `401` answer (but a failed sign-in's); returns the unsubscribe. */
export function onUnauthenticated(listener: () => void): () => void {
  unauthenticated.add(listener);
  return () => unauthenticated.delete(listener);
}

/** Every answer of the API passes here, also those of a plain `fetch` (a streamed invocation). */
export function watchAnswer(response: Response): void {
  if (response.status === 401) for (const listener of [...unauthenticated]) listener();
}

const watch: Middleware = {
  onResponse({ schemaPath, response }) {
    // A wrong password or code is a failed sign-in, not a session that ended.
    if (schemaPath !== '/auth/login') watchAnswer(response);
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' });
api.use(csrf, watch);

/** An error answer of the API, as the spec's error table shapes it, with the id support asks for. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | undefined,
    readonly retryAfterSec: number | undefined,
    readonly body: Record<string, unknown>,
  ) {
    super(message);
  }
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** Unwraps an openapi-fetch answer: the data, or an ApiError built from the error body. */
export async function ok<T>(pending: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await pending;
  } catch {
    throw new ApiError(0, 'network_error', 'The server could not be reached. Check the connection and try again.', undefined, undefined, {});
  }
  if (answer.response.ok) return answer.data as T;
  throw toApiError(answer.response, answer.error);
}

export function toApiError(response: Response, body: unknown): ApiError {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const code = typeof fields.error === 'string' ? fields.error : `http_${response.status}`;
  const message = typeof fields.message === 'string' ? fields.message : describe(code, response.status);
  const requestId = (typeof fields.requestId === 'string' ? fields.requestId : undefined) ?? response.headers.get('X-Request-Id') ?? undefined;
  const retryAfter = typeof fields.retryAfterSec === 'number' ? fields.retryAfterSec : Number(response.headers.get('Retry-After')) || undefined;
  return new ApiError(response.status, code, message, requestId, retryAfter, fields);
}

/** Readable words for the codes that may come without a message. */
function describe(code: string, status: number): string {
  const words: Record<string, string> = {
    not_authenticated: 'You are not signed in, or the session has ended.',
    role_forbidden: 'Your role in this workspace does not allow this.',
    too_many_attempts: 'Too many failed attempts.',
    not_found: 'Not found.',
    rate_limited: 'Too many requests; wait a moment.',
    invalid_body: 'The request was not valid.',
  };
  return words[code] ?? `The server answered ${status}.`;
}
