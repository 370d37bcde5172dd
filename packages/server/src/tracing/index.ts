/**
 * @module Traces (OpenTelemetry), as the code that makes spans sees them. Off by default: no SDK is loaded
 * (`tracing/sdk.ts` is imported only when the settings turn traces on), `tracer()` answers `undefined`, and every
 * call site checks that first, so a request pays one comparison and allocates nothing for traces. On, the runtime
 * hands the SDK's tracer here (`useTracer`) before the app is built.
 *
 * Every span's attributes are fixed words, counts, status codes, the agent's slug and the alias: never a model or
 * provider name, a host, a URL, a query, a header, a body, a message or a tool's arguments or result (docs/operations.md,
 * "Traces"). `gen-ai.ts` holds the GenAI conventions' spans, `statement.ts` the store's, `middleware/trace` the
 * requests'.
 */
import { context, propagation, type SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';

export { SpanKind, type Span } from '@opentelemetry/api';

let active: Tracer | undefined;

/** The tracer when traces are on, else `undefined` (the one check a call site makes). */
export function tracer(): Tracer | undefined {
  return active;
}

/** Set by the runtime when the SDK started (and cleared when it stopped); tests set their own. */
export function useTracer(next: Tracer | undefined): void {
  active = next;
}

/**
 * Runs `work` inside a span of `next`, active for what `work` awaits (its statements, its calls), ended when it
 * settles; a throw marks the span failed with `error.type` (the error's class, never its message).
 */
export async function inSpan<T>(next: Tracer, name: string, kind: SpanKind, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  const span = next.startSpan(name, { kind, attributes });
  try {
    return await context.with(trace.setSpan(context.active(), span), work, undefined, span);
  } catch (error) {
    failSpan(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Marks a span failed: `error.type` is the error's class name (`EngineError`), or `_OTHER`. */
export function failSpan(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute(ATTR_ERROR_TYPE, errorType(error));
}

function errorType(error: unknown): string {
  const name = error instanceof Error ? error.name : '';
  return /^[A-Z][A-Za-z]{0,40}Error$/.test(name) ? name : '_OTHER';
}

/** The W3C trace context of `span` as request headers (`traceparent`, and `tracestate` when there is one). */
export function traceHeaders(span: Span): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), headers);
  return headers;
}
