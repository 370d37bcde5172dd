/**
 * @module The operation table both SDK generators read: per operation of the contract, its method and path,
 * its credential, its parameters by location and what its success answer is. Header parameters that the SDK
 * core sends itself (Idempotency-Key, X-CSRF-Token, X-Request-Id) are flags, not parameters.
 */
import { type Json, deref, operationsOf } from './generate-common.ts';

export type SdkAuth = 'apiKey' | 'adminSession' | 'mcpToken' | 'operatorToken' | 'inboundSignature' | 'none';

export interface SdkOperation {
  id: string;
  method: string;
  path: string;
  summary: string;
  tag: string;
  auth: SdkAuth;
  pathParams: string[];
  queryParams: string[];
  /** Header parameters the caller gives (the inbound webhook's signature headers, for example). */
  headerParams: string[];
  body: 'none' | 'optional' | 'required';
  /** The first 2xx status, and what it carries: JSON, nothing, or only an event stream. */
  status: number;
  /** Every 2xx status that answers JSON (an operation may answer more than one: `200`, or `202` for a step still to take). */
  jsonStatuses: number[];
  response: 'json' | 'empty' | 'sse';
  /** The JSON answer can also be asked for as `text/event-stream` (`stream: true`). */
  streamable: boolean;
  idempotencyKey: boolean;
  csrf: boolean;
}

const CORE_HEADERS = new Set(['idempotency-key', 'x-csrf-token', 'x-request-id']);

export function sdkOperations(doc: Json): SdkOperation[] {
  return operationsOf(doc).map(({ path, method, operation, pathItem }) => {
    const id: string = operation.operationId;
    if (typeof id !== 'string' || !/^[a-z][A-Za-z0-9]*$/.test(id)) throw new Error(`sdk: ${method} ${path} needs a camelCase operationId`);
    const params: Json[] = [...(pathItem.parameters ?? []), ...(operation.parameters ?? [])].map((p) => deref(doc, p));
    const names = (where: string) => params.filter((p) => p.in === where).map((p) => String(p.name));
    const headers = params.filter((p) => p.in === 'header').map((p) => String(p.name).toLowerCase());
    const security: Json[] = operation.security ?? doc.security ?? [];
    const auth = (security.length === 0 ? 'none' : (Object.keys(security[0] ?? {})[0] ?? 'none')) as SdkAuth;
    if (!['apiKey', 'adminSession', 'mcpToken', 'operatorToken', 'inboundSignature', 'none'].includes(auth))
      throw new Error(`sdk: ${id} uses unknown security ${auth}`);
    const requestBody = operation.requestBody ? deref(doc, operation.requestBody) : undefined;
    if (requestBody && !requestBody.content?.['application/json']) throw new Error(`sdk: ${id} has a request body that is not JSON`);
    const successes = Object.keys(operation.responses ?? {})
      .filter((code) => /^2\d\d$/.test(code))
      .sort();
    const first = successes[0];
    if (!first) throw new Error(`sdk: ${id} has no 2xx response`);
    const content = deref(doc, operation.responses[first]).content ?? {};
    const response = content['application/json'] ? 'json' : content['text/event-stream'] ? 'sse' : 'empty';
    return {
      id,
      method: method.toUpperCase(),
      path,
      summary: String(operation.summary ?? '').trim(),
      tag: String(operation.tags?.[0] ?? ''),
      auth,
      pathParams: names('path'),
      queryParams: names('query'),
      headerParams: params.filter((p) => p.in === 'header' && !CORE_HEADERS.has(String(p.name).toLowerCase())).map((p) => String(p.name)),
      body: !requestBody ? 'none' : requestBody.required ? 'required' : 'optional',
      status: Number(first),
      jsonStatuses: successes.filter((code) => deref(doc, operation.responses[code]).content?.['application/json']).map(Number),
      response,
      streamable: response === 'json' && Boolean(content['text/event-stream']),
      idempotencyKey: headers.includes('idempotency-key'),
      csrf: headers.includes('x-csrf-token'),
    };
  });
}

/** snake_case of a camelCase name, for Python. */
export function snake(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}
