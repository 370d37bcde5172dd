/**
 * @module One signed outbound delivery attempt over HTTPS, through the SSRF guard with the
 * resolved address pinned for the connection, bounded by a timeout, and classified.
 *
 * Classification (our decision, published with the retry schedule):
 * - 2xx: delivered.
 * - 5xx, 408, 429, any other 4xx except 410, 3xx (redirects are never followed, because
 *   following one would bypass the guard), timeout, network or TLS error, a host that does not
 *   resolve or now resolves to a refused address: retry on the schedule. Other 4xx are retried
 *   too: a receiver answering 401 or 404 is most often mid-deploy or mid-secret-rotation, and
 *   at-least-once delivery should survive that; the pause rule bounds the cost.
 * - 410 Gone, or a URL that can never pass the guard (not https, credentials, a refused literal
 *   address or name): give up at once, no retry. It is still a failed attempt for the pause rule.
 */
import { request as httpsRequest } from 'node:https';
import type { SecureContextOptions } from 'node:tls';
import { buildDeliveryHeaders } from './outbound-signature.ts';
import { checkDestinationUrl, DestinationRefusedError, resolveDestination, type DestinationPolicy, type PinnedDestination } from './ssrf-guard.ts';

/** The budget of one attempt, name resolution to response headers (the spec's "ideally under 10 s"). */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;

/** Why an attempt did not deliver; safe to show the destination's admin. */
type DeliveryFailureReason = 'http_status' | 'timeout' | 'network_error' | 'dns_failed' | 'refused_destination';

/** The classified result of one attempt. Anything but `delivered` is a failed attempt. */
export type DeliveryOutcome =
  | { result: 'delivered'; status: number }
  | { result: 'retry'; reason: DeliveryFailureReason; status?: number; detail?: string }
  | { result: 'give_up'; reason: 'http_status' | 'refused_destination'; status?: number; detail?: string };

/** What is sent: the stored body bytes and the destination's current URL and secret. */
export interface DeliveryRequest {
  url: string;
  secret: string;
  /** The exact envelope bytes (see `serializeEnvelope`); the same on every attempt. */
  body: Uint8Array;
  eventId: string;
  eventType: string;
}

export interface DeliveryOptions {
  /** The server's allow-list and, in tests, the resolver. */
  policy: DestinationPolicy;
  /** The clock in epoch milliseconds; its value becomes `X-SERVICE-Timestamp`. */
  now: () => number;
  timeoutMs?: number;
  /** Extra trust roots (a test receiver's self-signed certificate). Verification is never turned off. */
  ca?: SecureContextOptions['ca'];
}

/** The classification of a response status (see the module comment). */
export function classifyResponseStatus(status: number): DeliveryOutcome {
  if (status >= 200 && status < 300) return { result: 'delivered', status };
  if (status === 410) return { result: 'give_up', reason: 'http_status', status };
  return { result: 'retry', reason: 'http_status', status };
}

/**
 * Send one attempt. Never throws for anything the receiver or the network does: every such
 * failure is an outcome. The timestamp and signature are computed now, per attempt.
 */
export async function deliverWebhook(delivery: DeliveryRequest, options: DeliveryOptions): Promise<DeliveryOutcome> {
  try {
    checkDestinationUrl(delivery.url, options.policy);
  } catch (error) {
    if (error instanceof DestinationRefusedError) return { result: 'give_up', reason: 'refused_destination', detail: error.reason };
    throw error;
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
  const startedAt = performance.now();
  let pinned: PinnedDestination | 'timeout';
  try {
    // The resolver counts against the attempt's budget too: a hanging DNS server must not stall the worker.
    pinned = await withTimeout(resolveDestination(delivery.url, options.policy), timeoutMs);
  } catch (error) {
    if (!(error instanceof DestinationRefusedError)) throw error;
    // A name that resolves badly today may resolve well tomorrow: retry, and let the pause rule decide.
    return { result: 'retry', reason: error.reason === 'dns_failed' ? 'dns_failed' : 'refused_destination', detail: error.reason };
  }
  if (pinned === 'timeout') return { result: 'retry', reason: 'timeout' };
  const remainingMs = Math.max(1, timeoutMs - (performance.now() - startedAt));

  const headers = buildDeliveryHeaders({
    body: delivery.body,
    secret: delivery.secret,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    nowMs: options.now(),
  });
  const url = pinned.url;
  const lookup = pinned.lookup;

  return new Promise<DeliveryOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: DeliveryOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = httpsRequest(
      {
        method: 'POST',
        host: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port === '' ? 443 : Number(url.port),
        path: `${url.pathname}${url.search}`,
        headers: { ...headers, 'Content-Length': String(delivery.body.byteLength), 'User-Agent': 'service-webhooks/1' },
        // The pinned lookup: the socket connects to the address the guard checked, whatever DNS says now.
        lookup: lookup as never,
        // A fresh socket per attempt: a pooled one could have been opened for another address.
        agent: false,
        ...(options.ca ? { ca: options.ca } : {}),
      },
      (res) => {
        // The status is the answer; the body is not read, so a receiver cannot hold us with it.
        finish(classifyResponseStatus(res.statusCode ?? 0));
        res.destroy();
      },
    );
    const timer = setTimeout(() => {
      finish({ result: 'retry', reason: 'timeout' });
      req.destroy();
    }, remainingMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      finish({ result: 'retry', reason: 'network_error', detail: error.code ?? 'network_error' });
    });
    req.end(delivery.body);
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  return Promise.race([promise, expiry]).finally(() => clearTimeout(timer));
}
