/**
 * @module The inbound webhook routes' whole front (`ingestInboundEvent`, `ingestInboundEventV1`):
 * one middleware in place of authentication and validation, in the contract's order:
 *
 *   1. the slug, before any byte of the body is read: not a slug's shape (a NUL, `%`, upper case…),
 *      unknown or revoked → 404 webhook_not_found, paused → 404 webhook_unavailable
 *   2. the webhook's own per-IP limit (429 rate_limited), still before the body; the API's per-IP limit does
 *      not apply
 *   3. the body, read once with its cap while reading (413 payload_too_large) and within
 *      `INBOUND_BODY_TIMEOUT_MS` (400 invalid_request, and the connection closed)
 *   4. the signature over the raw bytes and the timestamp window (401 signature_invalid)
 *   5. the event id headers (400 invalid_request), the JSON body (400 payload_invalid: not JSON,
 *      NUL, a lone surrogate; not an object is 400 invalid_body)
 *
 * An answer given before the whole body was read (1, 2) leaves the rest unread: the HTTP adapter discards what
 * still comes for at most 500 ms and then closes the connection, as for a 413 (`Connection: close` at once would
 * let a sender still writing its body get a reset that can destroy the answer). A body past its time (3) is cut
 * with `Connection: close`: its sender trickles, so little is in flight.
 *
 * The handler receives the result, typed, in `c.get('inbound')`: the webhook, the exact bytes, the
 * parsed payload and the signing time. Nothing else reads the body.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { InboundWebhookTarget } from '../../domain/inbound-webhooks/service.ts';
import { readBodyWithLimit } from '../../domain/webhooks/body-limit.ts';
import { fail } from '../../errors.ts';
import { zInboundSlugPath } from '../../contract.ts';
import { assertInboundSignature } from '../../domain/webhooks/inbound-signature.ts';
import type { RouteSpec } from '../../routes/route-spec.ts';
import type { Services } from '../../services.ts';
import { clientIp, clientKey, enforceRateLimit, type RateLimitVariables } from '../rate-limit/index.ts';
import { requireGoodStanding } from '../../domain/standing/index.ts';
import { checkFields, checkHeaders, checkPart, parseJsonBody, type ValidateVariables } from '../validate/index.ts';

/** An inbound event as this front verified it. */
interface VerifiedInbound {
  webhook: InboundWebhookTarget;
  /** The exact bytes that were signed. */
  rawBody: Uint8Array;
  /** The parsed JSON object. */
  payload: unknown;
  signedAtMs: number | null;
}

/** Context variables this front provides; it leaves `valid` too, as `validate` does on the other routes. */
export type InboundVariables = { inbound?: VerifiedInbound };

/** What this front sets: its own variables, `valid`, and the limits' (its per-webhook limit). */
type Env = { Variables: InboundVariables & ValidateVariables & RateLimitVariables };

/** The per-IP limit for slugs that name no usable webhook (they have no configuration of their own). */
const UNKNOWN_SLUG_RPM = 60;

export function inboundWebhook(
  services: Pick<Services, 'config' | 'limiter' | 'webhooks' | 'clock' | 'logger' | 'metrics'>,
  request: RouteSpec['request'],
): MiddlewareHandler<Env> {
  const body = request.body;
  if (!body) throw new Error('an inbound webhook route has a request body in the contract');
  const front: MiddlewareHandler<Env> = async function inboundWebhook(c, next) {
    const ip = clientKey(clientIp(c, { trustProxy: services.config.trustProxy }));
    let webhook: VerifiedInbound['webhook'];
    try {
      const slug = c.req.param('slug') ?? '';
      // Not a slug as the contract writes it (`InboundSlugPath`): it names no webhook and is not looked up.
      if (!zInboundSlugPath.safeParse(slug).success) throw fail('webhook_not_found');
      webhook = await services.webhooks.inbound.target(slug);
    } catch (error) {
      // Refused before the webhook's own limit: still counted and still answered with the headers.
      await countQuietly(c, services, `inbound:slug:${ip}`, UNKNOWN_SLUG_RPM);
      throw error;
    }
    await enforceRateLimit(c, { ...inboundLimit(services), key: `inbound:${webhook.id}:${ip}`, limit: webhook.requestsPerMinute, code: 'rate_limited' });
    const rawBody = await readBodyWithLimit(c.req.raw.body, {
      contentLength: c.req.header('content-length') ?? null,
      limitBytes: body.maxBytes,
      // Past it, 400 invalid_request with Connection: close (BodyTimeoutError).
      signal: AbortSignal.timeout(services.config.inboundBodyTimeoutMs),
    });
    const { timestampMs } = assertInboundSignature({
      rawBody,
      headers: c.req.raw.headers,
      secret: webhook.secret,
      algorithm: webhook.algorithm,
      signatureHeader: webhook.signatureHeader,
      timestampRequired: webhook.timestampRequired,
      now: () => services.clock.now().getTime(),
    });
    // Told only to a sender who holds the webhook's secret: the workspace is suspended or unpaid.
    requireGoodStanding(webhook.standing);
    const headers = checkHeaders(c, request.headers);
    const parsed = parseJsonBody(rawBody, c.req.header('content-type'), body, { unparsable: 'payload_invalid', refuseNul: true });
    const valid = checkPart('body', body.schema, parsed);
    c.set('valid', { params: checkFields('params', request.params, c.req.param()), query: {}, headers, body: valid });
    // The template sees the payload exactly as sent, not as the schema would reshape it.
    c.set('inbound', { webhook, rawBody, payload: parsed, signedAtMs: timestampMs });
    await next();
  };
  return front;
}

/** Counts a refused request against a limit for its headers, without turning its answer into a 429. */
async function countQuietly(c: Context<Env>, services: Pick<Services, 'limiter' | 'logger' | 'metrics'>, key: string, limit: number): Promise<void> {
  try {
    await enforceRateLimit(c, { ...inboundLimit(services), key, limit, code: 'rate_limited' });
  } catch {
    // The original refusal stands; the headers were set before the limit threw.
  }
}

/** The limiter, logger and metrics of the inbound limits. */
function inboundLimit(services: Pick<Services, 'limiter' | 'logger' | 'metrics'>) {
  return {
    limiter: services.limiter,
    logger: services.logger,
    observer: {
      refused: () => services.metrics?.limiterRefusals.inc({ limit: 'inbound' }),
      backendFailed: () => services.metrics?.backendErrors.inc({ backend: 'redis' }),
    },
  };
}
