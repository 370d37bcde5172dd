/**
 * A delivery attempt's span is the root of a trace of its own even when the worker runs inside another request's
 * span (a request wakes the worker; it may be another workspace's): the `traceparent` its receiver gets never
 * carries that request's trace. The SDK's own tracer, its spans kept in memory.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endDeliverySpan, startDeliverySpan } from './delivery.ts';
import { traceHeaders } from './index.ts';

describe('a delivery attempt span', () => {
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  afterAll(() => {
    propagation.disable();
    context.disable();
  });

  it('starts a trace of its own inside another span, and says its attempt and status code only', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const tracer = provider.getTracer('test');
    const request = tracer.startSpan('POST /v1/inference');
    const span = context.with(trace.setSpan(context.active(), request), () => startDeliverySpan(tracer, 2));
    const headers = traceHeaders(span);
    endDeliverySpan(span, { result: 'retry', status: 503, reason: 'http_status' });
    request.end();
    await provider.forceFlush();
    const [delivery] = exporter.getFinishedSpans().filter((finished) => finished.name === 'POST');
    expect(delivery!.parentSpanContext).toBeUndefined();
    expect(delivery!.spanContext().traceId).not.toBe(request.spanContext().traceId);
    expect(headers.traceparent).toBe(`00-${delivery!.spanContext().traceId}-${delivery!.spanContext().spanId}-01`);
    expect(delivery!.attributes).toEqual({
      'http.request.method': 'POST',
      'http.request.resend_count': 1,
      'service.delivery.attempt': 2,
      'http.response.status_code': 503,
      'error.type': '503',
    });
  });
});
