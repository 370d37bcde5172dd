/**
 * @module The server span of every request, mounted first and only when traces are on (app.ts; off, the app has no
 * such middleware). It continues the caller's trace when the request carries a W3C `traceparent` (and `tracestate`),
 * is the active span of everything the request does (its statements, its run's `invoke_agent`), and says the method,
 * the route as the contract writes it (`/runs/{run_id}`, never the request's path nor its query, which may carry
 * tokens), the status and the scheme. Nothing from headers, cookies or bodies.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type TextMapGetter, type Tracer } from '@opentelemetry/api';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_SCHEME,
  HTTP_REQUEST_METHOD_VALUE_OTHER,
} from '@opentelemetry/semantic-conventions';
import type { MiddlewareHandler } from 'hono';
import type { RouteVariables } from '../route/index.ts';

type Env = { Variables: RouteVariables };

/** The methods the HTTP conventions name; any other is `_OTHER` (a client chooses the method). */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

/**
 * `routeOf(operationId)`: the contract's path of the operation that answered. A request no route matched (404, 405)
 * or the panel's pages have none: the span is named by its method alone.
 */
export function traceRequests(tracer: Tracer, routeOf: (operationId: string) => string | undefined): MiddlewareHandler<Env> {
  return async function traceRequests(c, next) {
    const parent = propagation.extract(ROOT_CONTEXT, c.req.raw.headers, headerGetter);
    const method = KNOWN_METHODS.has(c.req.method) ? c.req.method : HTTP_REQUEST_METHOD_VALUE_OTHER;
    const span = tracer.startSpan(
      method === HTTP_REQUEST_METHOD_VALUE_OTHER ? 'HTTP' : method,
      { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_SCHEME]: new URL(c.req.url).protocol.slice(0, -1) } },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const operationId = c.get('operationId');
      const route = operationId === undefined ? undefined : routeOf(operationId);
      if (route !== undefined) {
        span.updateName(`${method === HTTP_REQUEST_METHOD_VALUE_OTHER ? 'HTTP' : method} ${route}`);
        span.setAttribute(ATTR_HTTP_ROUTE, route);
      }
      const status = c.res.status;
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      // A server span fails on a 5xx only: a 4xx is the client's error (the HTTP conventions).
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}
