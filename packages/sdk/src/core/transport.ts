/**
 * @module Sends one operation over fetch: builds the URL and headers from the operation table, adds the
 * credential, applies the per-attempt timeout, retries what may be retried (./retry.ts) and turns every
 * non-2xx answer into a ServiceError. Uses fetch and Web Crypto only, so it runs in browsers and edge runtimes.
 */
import { ConnectionError, createServiceError, type ServiceError, TimeoutError } from './errors.ts';
import type { OperationInput, OperationSpec } from './operation.ts';
import { isRetriable, retryDelayMs, sleep } from './retry.ts';

export interface TransportConfig {
  apiKey: string | undefined;
  baseURL: string;
  maxRetries: number;
  timeoutMs: number;
  fetch: typeof fetch;
  /** The admin session of `ServiceClient.login`: the cookie and the CSRF token for writes. */
  session?: { cookie: string; csrfToken: string } | undefined;
}

/** Per-call options of every operation. */
export interface RequestOptions {
  /** Reused on every retry of the call; generated when the operation takes one and none is given. */
  idempotencyKey?: string;
  /** Sent as `X-Request-Id` (the server echoes it). */
  requestId?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRetries?: number;
  /** Extra headers. */
  headers?: Record<string, string>;
  /** Bearer token instead of the API key (an MCP token for the MCP bridge). */
  bearer?: string;
}

export interface SendOptions extends RequestOptions {
  /** Ask for `text/event-stream` (adds `stream: true` to the body of a streamable operation). */
  stream?: boolean;
}

export class Transport {
  constructor(readonly config: TransportConfig) {}

  /** Sends the operation and resolves with its JSON answer (undefined when empty, the Response of an event stream). */
  async call(spec: OperationSpec, input: OperationInput, options: SendOptions = {}): Promise<unknown> {
    const { response, text } = await this.send(spec, input, options);
    if (spec.response === 'sse' || options.stream) return response;
    return text ? JSON.parse(text) : undefined;
  }

  /**
   * Sends with retries; resolves with a 2xx answer. Unless it is an event stream, the body is read inside the
   * attempt (so the timeout covers it) and given as `text`; a stream's timeout ends once its headers arrived.
   */
  async send(spec: OperationSpec, input: OperationInput, options: SendOptions = {}): Promise<{ response: Response; text: string | undefined }> {
    const streaming = spec.response === 'sse' || options.stream === true;
    const idempotencyKey = spec.idempotencyKey ? (options.idempotencyKey ?? crypto.randomUUID()) : undefined;
    const repeatable = ['GET', 'HEAD', 'DELETE'].includes(spec.method) || idempotencyKey !== undefined;
    const maxRetries = options.maxRetries ?? this.config.maxRetries;
    const request = this.build(spec, input, options, idempotencyKey, streaming);
    for (let attempt = 0; ; attempt += 1) {
      let failure: ServiceError | ConnectionError;
      let headers: Headers | undefined;
      try {
        const result = await this.attempt(request, options, streaming);
        if (result.response.ok) return result;
        headers = result.response.headers;
        failure = createServiceError(result.response.status, parseJson(result.text), headers);
      } catch (error) {
        if (!(error instanceof ConnectionError)) throw error;
        failure = error;
      }
      const delay = attempt < maxRetries && isRetriable(failure, repeatable) ? retryDelayMs(attempt, headers) : undefined;
      if (delay === undefined) throw failure;
      await sleep(delay, options.signal);
    }
  }

  private build(spec: OperationSpec, input: OperationInput, options: SendOptions, idempotencyKey: string | undefined, streaming: boolean) {
    let path = spec.path;
    for (const name of spec.pathParams) {
      const value = input.path?.[name];
      if (value === undefined || value === '') throw new TypeError(`${spec.id}: path parameter ${name} is required`);
      path = path.replace(`{${name}}`, encodeURIComponent(value));
    }
    const url = new URL(this.config.baseURL.replace(/\/+$/, '') + path);
    for (const [name, value] of Object.entries(input.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));

    const headers = new Headers({ accept: streaming ? 'text/event-stream' : 'application/json' });
    const bearer = options.bearer ?? (spec.auth === 'apiKey' || spec.auth === 'mcpToken' || spec.auth === 'operatorToken' ? this.config.apiKey : undefined);
    if (bearer) headers.set('authorization', `Bearer ${bearer}`);
    const session = this.config.session;
    if (session && (spec.auth === 'adminSession' || spec.id === 'login')) {
      headers.set('cookie', session.cookie);
      if (spec.csrf) headers.set('x-csrf-token', session.csrfToken);
    }
    if (idempotencyKey) headers.set('idempotency-key', idempotencyKey);
    if (options.requestId) headers.set('x-request-id', options.requestId);
    for (const [name, value] of Object.entries({ ...input.headers, ...options.headers })) if (value !== undefined) headers.set(name, value);

    let body: string | undefined;
    if (input.body !== undefined || spec.body === 'required') {
      const value = spec.streamable && streaming ? { ...(input.body as object), stream: true } : input.body;
      body = JSON.stringify(value ?? {});
      headers.set('content-type', 'application/json');
    }
    return { url: url.toString(), init: { method: spec.method, headers, body } };
  }

  private async attempt(
    request: { url: string; init: { method: string; headers: Headers; body: string | undefined } },
    options: SendOptions,
    streaming: boolean,
  ): Promise<{ response: Response; text: string | undefined }> {
    const timeout = new AbortController();
    const timeoutMs = options.timeoutMs ?? this.config.timeoutMs;
    const timer = setTimeout(() => timeout.abort(new TimeoutError(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal;
    try {
      const response = await this.config.fetch(request.url, { ...request.init, signal });
      // A failed stream's body is JSON like any error; a successful one is read by the caller.
      const text = streaming && response.ok ? undefined : await response.text();
      return { response, text };
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      if (timeout.signal.aborted) throw timeout.signal.reason;
      throw new ConnectionError(`could not reach ${new URL(request.url).origin}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    } finally {
      clearTimeout(timer);
    }
  }
}

function parseJson(text: string | undefined): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
