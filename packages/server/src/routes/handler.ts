/**
 * @module The signature of an operation handler: translate HTTP to a domain call and back, typed by
 * the contract. `Handler<'getRun'>` receives getRun's validated input (path, query, headers, body as
 * the generated zod schemas parse them) and must answer one of getRun's documented 2xx statuses with
 * the documented body; anything else fails `tsc`. Errors are not answered but thrown (`fail(code)`),
 * and the error mapper gives them the spec's status and body.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode, StatusCode } from 'hono/utils/http-status';
import type { AppEnv, Auth } from '../app-env.ts';
import type { OperationId, Operations } from '../contract.ts';
import { fail } from '../errors.ts';
import type { Services } from '../services.ts';
import type { AuditContext } from '../domain/audit/index.ts';
import { clientIp, clientKey } from '../middleware/rate-limit/index.ts';

/** The validated request of an operation. */
export type Input<K extends OperationId> = Operations[K]['input'];

type Success<K extends OperationId> = Operations[K]['success'];

/** One documented 2xx answer: JSON of its schema, a Server-Sent Events `Response`, or no content. */
type AnswerOf<S, Forms> =
  | (Forms extends { json: infer Body } ? { status: S; body: Body; stream?: never } : never)
  | (Forms extends { stream: true } ? { status: S; stream: Response; body?: never } : never)
  | (Forms extends { empty: true } ? { status: S; body?: never; stream?: never } : never);

/** What a handler of operation K may answer. */
export type Answer<K extends OperationId> = AnswerUnion<Success<K>>;

export type Handler<K extends OperationId> = (c: Context<AppEnv>, input: Input<K>, services: Services) => Answer<K> | Promise<Answer<K>>;

/**
 * One handler for an admin route and its operator twin (`…OfWorkspace`, the same answers): the workspace is the admin
 * session's, or the one the operator's path names (routes/operator.ts `settingsWorkspace`).
 */
export type TwinHandler<K extends OperationId, Twin extends OperationId> = (
  c: Context<AppEnv>,
  input: Input<K> | Input<Twin>,
  services: Services,
) => Promise<Answer<K>>;

/**
 * Every operation of the contract has exactly one handler: a missing or misspelt one fails `tsc`.
 * Written out structurally (not as `Handler<K>`) so that twin operations of the same shape, such as
 * getRun and getRunV1, can share one handler.
 */
export type Handlers = {
  [K in OperationId]: (
    c: Context<AppEnv>,
    input: Operations[K]['input'],
    services: Services,
  ) => AnswerUnion<Operations[K]['success']> | Promise<AnswerUnion<Operations[K]['success']>>;
};

type AnswerUnion<Successes> = { [S in keyof Successes]: AnswerOf<S, Successes[S]> }[keyof Successes];

/** Answers of an untyped handler: JSON with a status that has a body, a stream or nothing, or a ready `Response`. */
export type LooseAnswer = { status: ContentfulStatusCode; body: object; stream?: never } | { status: StatusCode; stream?: Response } | Response;
/** The form the app mounts every handler in (tests add synthetic routes with such handlers). */
export type LooseHandler = (c: Context<AppEnv>, input: never, services: Services) => LooseAnswer | Promise<LooseAnswer>;

/** The caller as authenticated by the route's scheme; a route without security has none. */
export function authOf<S extends Auth['scheme']>(c: Context<AppEnv>, scheme: S): Extract<Auth, { scheme: S }> {
  const auth = c.get('auth');
  // Unreachable when the route's security is mounted; refuse rather than act without identity.
  if (!isScheme(auth, scheme)) throw fail('not_authenticated');
  return auth;
}

/** Whether the caller was authenticated by `scheme` (TypeScript does not narrow a union by a generic discriminant). */
function isScheme<S extends Auth['scheme']>(auth: Auth | undefined, scheme: S): auth is Extract<Auth, { scheme: S }> {
  return auth?.scheme === scheme;
}

/** The workspace a route acts on: the credential's (an API key, an MCP token, or a session's selected workspace). */
export function workspaceOf(c: Context<AppEnv>): string {
  const auth = c.get('auth');
  if (!auth || !('workspaceId' in auth)) throw fail('not_authenticated');
  return auth.workspaceId;
}

/**
 * What the audit log records of this request's caller, built in this one place: the actor from the credential the
 * route authenticated (a session's user, a key, an MCP token's key, the operator), never from the body; the client
 * address as the rate limiter keys it (TRUST_PROXY applies); the request id.
 */
export function auditOf(c: Context<AppEnv>, services: Pick<Services, 'config'>): AuditContext {
  const auth = c.get('auth');
  const actor: AuditContext['actor'] =
    auth?.scheme === 'adminSession'
      ? { type: 'user', id: auth.userId }
      : auth?.scheme === 'apiKey' || auth?.scheme === 'mcpToken'
        ? { type: 'api_key', id: auth.keyId }
        : auth?.scheme === 'operatorToken'
          ? { type: 'operator', id: auth.tokenId }
          : null;
  const address = clientKey(clientIp(c, { trustProxy: services.config.trustProxy }));
  return { actor, address: address === 'unknown' ? null : address, requestId: c.get('requestId') ?? null };
}
