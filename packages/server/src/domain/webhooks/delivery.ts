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
 *   address or name): give up at once, no retry. It is still a failed attempt for the pause rule, and
 *   a 410 pauses the destination at once (`gone`, domain/destinations/health.ts): the receiver said it
 *   wants no more deliveries.
 */
import { type Agent, request as httpsRequest } from 'node:https';
import type { SecureContext, SecureContextOptions } from 'node:tls';
import { readAnswerStart, shownHeaders, type SentHeader } from './attempt-detail.ts';
import { createDeliveryAgents, type DeliveryAgents } from './delivery-agents.ts';
import { buildDeliveryHeaders } from './outbound-signature.ts';
import { checkDestinationUrl, DestinationRefusedError, resolveDestination, type DestinationPolicy, type PinnedDestination } from './ssrf-guard.ts';

/** The budget of one attempt, name resolution to response headers (the spec's "ideally under 10 s"). */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;

/** Why an attempt did not deliver; safe to show the destination's admin. */
type DeliveryFailureReason = 'http_status' | 'timeout' | 'network_error' | 'dns_failed' | 'refused_destination';

/** The classified result of one attempt. Anything but `delivered` is a failed attempt. */
export type DeliveryOutcome = (
  | { result: 'delivered'; status: number }
  | { result: 'retry'; reason: DeliveryFailureReason; status?: number; detail?: string }
  | { result: 'give_up'; reason: DeliveryFailureReason; status?: number; detail?: string }
) &
  AttemptDetail;

/** What the delivery log shows of an attempt (attempt-detail.ts), as far as the attempt got. */
interface AttemptDetail {
  /** The headers sent, signatures shortened; absent when nothing was sent. */
  sentHeaders?: SentHeader[];
  /** The start of the receiver's answer; absent when it did not answer. */
  answer?: { body: string; truncated: boolean };
}

/** What is sent: the stored body bytes and the destination's current URL and secret. */
export interface DeliveryRequest {
  url: string;
  secret: string;
  /** The secret the last rotation replaced, during its grace period: a second `webhook-signature`. */
  previousSecret?: string | undefined;
  /** The exact envelope bytes (see `serializeEnvelope`); the same on every attempt. */
  body: Uint8Array;
  eventId: string;
  eventType: string;
  /** The attempt's W3C trace context (`traceparent`), sent as headers when traces are on (worker/deliveries.ts). */
  traceHeaders?: Readonly<Record<string, string>> | undefined;
}

export interface DeliveryOptions {
  /** The server's allow-list and, in tests, the resolver. */
  policy: DestinationPolicy;
  /** The clock in epoch milliseconds; its value becomes `X-SERVICE-Timestamp` and `webhook-timestamp`. */
  now: () => number;
  timeoutMs?: number;
  /** Extra trust roots (a test receiver's self-signed certificate). Verification is never turned off. */
  ca?: SecureContextOptions['ca'];
  /** The kept-alive connections to reuse (the worker's pool); absent, this attempt's connection is its own. */
  agents?: DeliveryAgents;
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
    previousSecret: delivery.previousSecret,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    nowMs: options.now(),
  });
  if (delivery.traceHeaders !== undefined) Object.assign(headers, delivery.traceHeaders);
  const url = pinned.url;
  const lookup = pinned.lookup;
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port === '' ? 443 : Number(url.port);
  // A kept-alive connection to this very address (delivery-agents.ts), or a new one.
  const agents = options.agents ?? createDeliveryAgents();
  const agent = agents.agentFor({ hostname, port, address: pinned.address, ca: options.ca }, lookup);
  const deadline = performance.now() + remainingMs;
  const target = { hostname, port, url, headers, lookup, deadline };
  const outcome = await sendOnce(delivery, { ...target, agent });
  if (outcome !== STALE_CONNECTION) return outcome;
  // A kept-alive connection the receiver had just closed: once more, on a connection of its own.
  const fresh = await sendOnce(delivery, { ...target, agent: false, ...(options.ca ? { secureContext: agents.secureContextOf(options.ca) } : {}) });
  return fresh === STALE_CONNECTION ? { result: 'retry', reason: 'network_error', detail: 'ECONNRESET', sentHeaders: shownHeaders(headers) } : fresh;
}

/** A kept-alive connection failed before any answer: the receiver closed it while it was idle. */
const STALE_CONNECTION = Symbol('stale connection');

function sendOnce(
  delivery: DeliveryRequest,
  target: {
    hostname: string;
    port: number;
    url: URL;
    headers: Record<string, string>;
    lookup: unknown;
    /** A kept-alive connection of the destination's agent, or (false) a connection of its own. */
    agent: Agent | false;
    secureContext?: SecureContext;
    deadline: number;
  },
): Promise<DeliveryOutcome | typeof STALE_CONNECTION> {
  const { url } = target;
  const headers = { ...target.headers, 'Content-Length': String(delivery.body.byteLength), 'User-Agent': 'service-webhooks/1' };
  const sentHeaders = shownHeaders(headers);
  const remainingMs = Math.max(1, target.deadline - performance.now());
  return new Promise<DeliveryOutcome | typeof STALE_CONNECTION>((resolve) => {
    let settled = false;
    let answered = false;
    const finish = (outcome: DeliveryOutcome | typeof STALE_CONNECTION) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = httpsRequest(
      {
        method: 'POST',
        host: target.hostname,
        port: target.port,
        path: `${url.pathname}${url.search}`,
        headers,
        // The pinned lookup: the socket connects to the address the guard checked, whatever DNS says now.
        lookup: target.lookup as never,
        // Kept-alive connections to that same address only (delivery-agents.ts).
        agent: target.agent,
        ...(target.secureContext ? { secureContext: target.secureContext } : {}),
      },
      (res) => {
        // The status is the answer. The body's start (2 KiB at most, waited for 2 s at most) is kept for the
        // delivery log; the rest is read only to free the connection for another attempt, and a long or slow
        // one closes it instead (attempt-detail.ts).
        answered = true;
        clearTimeout(timer);
        const outcome = classifyResponseStatus(res.statusCode ?? 0);
        void readAnswerStart(res).then((answer) => finish({ ...outcome, sentHeaders, answer }));
      },
    );
    const timer = setTimeout(() => {
      finish({ result: 'retry', reason: 'timeout', sentHeaders });
      req.destroy();
    }, remainingMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      // Once answered, the answer's reader settles the attempt (a connection lost mid-body ends it, truncated).
      if (answered) return;
      // Node's advice for kept-alive connections: a reset of a reused one before any answer is sent again.
      const stale = req.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE' || error.code === 'ECONNABORTED');
      finish(stale ? STALE_CONNECTION : { result: 'retry', reason: 'network_error', detail: error.code ?? 'network_error', sentHeaders });
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
