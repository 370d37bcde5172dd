/**
 * @module A webhook delivery attempt's span: an HTTP client span `POST` with the attempt's number
 * (`http.request.resend_count`: 0 for the first) and the receiver's status code. The destination is the tenant's own
 * URL: its host, path and query are never recorded, nor the headers (signatures) or the body.
 */
import { SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_REQUEST_RESEND_COUNT, ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';

/**
 * Starts attempt number `attempt` (1 for the first) of a delivery: always the root of a trace of its own, never a child
 * of whatever woke the worker (another workspace's request may have), since its context goes to the tenant's receiver.
 */
export function startDeliverySpan(tracer: Tracer, attempt: number): Span {
  return tracer.startSpan('POST', {
    root: true,
    kind: SpanKind.CLIENT,
    attributes: { [ATTR_HTTP_REQUEST_METHOD]: 'POST', [ATTR_HTTP_REQUEST_RESEND_COUNT]: attempt - 1, 'service.delivery.attempt': attempt },
  });
}

/** Ends it with the outcome: the status code when the receiver answered; failed unless delivered (`error.type`: the reason). */
export function endDeliverySpan(span: Span, outcome: { result: string; status?: number; reason?: string }): void {
  if (outcome.status !== undefined) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, outcome.status);
  if (outcome.result !== 'delivered') {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute(ATTR_ERROR_TYPE, outcome.status !== undefined ? String(outcome.status) : (outcome.reason ?? '_OTHER'));
  }
  span.end();
}
