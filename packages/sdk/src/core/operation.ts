/**
 * @module The description of one operation that the generated table (`../generated/operations.ts`) gives
 * the transport: where to send it, with which credential, and what comes back.
 */

/** The credential an operation needs, by the contract's security scheme name. */
/** `operatorToken`: the operator routes; the client's `apiKey` then holds the operator token. */
export type OperationAuth = 'apiKey' | 'adminSession' | 'mcpToken' | 'operatorToken' | 'inboundSignature' | 'none';

export interface OperationSpec {
  readonly id: string;
  readonly method: string;
  /** The route as listed in the contract, with `{name}` placeholders. */
  readonly path: string;
  readonly auth: OperationAuth;
  readonly pathParams: readonly string[];
  readonly queryParams: readonly string[];
  /** Header parameters the caller gives itself (the inbound webhook's signature headers). */
  readonly headerParams: readonly string[];
  readonly body: 'none' | 'optional' | 'required';
  /** The first success status. */
  readonly status: number;
  /** What the success answer carries: JSON, nothing, or only an event stream. */
  readonly response: 'json' | 'empty' | 'sse';
  /** The JSON answer can also be streamed (`stream: true` in the body). */
  readonly streamable: boolean;
  /** The operation takes an `Idempotency-Key`, so it can be retried safely. */
  readonly idempotencyKey: boolean;
  /** An admin write: it needs the session's `X-CSRF-Token`. */
  readonly csrf: boolean;
}

/** An operation's input: path and query parameters, caller-given headers and the JSON body. */
export interface OperationInput {
  path?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string | undefined>;
  body?: unknown;
}
