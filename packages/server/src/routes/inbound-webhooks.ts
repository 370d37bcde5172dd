/**
 * @module The inbound webhook routes (`ingestInboundEvent`, `ingestInboundEventV1`) and the
 * inbound webhook settings (admin session: list, create, pause, resume, revoke).
 *
 * The inbound request, in the spec's order:
 *   [inboundSignature hook, as the route's authentication]
 *   1. body read with the 1 MB cap while reading (413 payload_too_large)
 *   2. the slug: unknown or revoked → 404 webhook_not_found, paused → 404 webhook_unavailable
 *   3. the webhook's per-IP limit (429 rate_limited)
 *   4. signature over the raw bytes and timestamp window (401 signature_invalid)
 *   [validate: event id headers (400 invalid_request), JSON (400 payload_invalid)]
 *   [handler]
 *   5. template render (400 payload_invalid)
 *   6. idempotent insert: the UNIQUE (webhook, event id) constraint decides ok / duplicate
 */
import type { Context } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { ingestInboundEvent, type IngestResult } from '../domain/inbound-webhooks/ingest.ts';
import type { InboundWebhookTarget } from '../domain/inbound-webhooks/service.ts';
import { readBodyWithLimit } from '../domain/webhooks/body-limit.ts';
import { resolveInboundEventId } from '../domain/webhooks/event-id.ts';
import { assertInboundSignature } from '../domain/webhooks/inbound-signature.ts';
import { parseInboundPayload } from '../domain/webhooks/template.ts';
import { ServiceError } from '../errors.ts';
import { clientIp, clientKey, enforceRateLimit } from '../middleware/rate-limit/index.ts';
import { keepUnredacted } from '../middleware/redact/index.ts';
import type { Services } from '../services.ts';
import { authOf, type Handler, type Handlers } from './handler.ts';

/** What the verified request carries from the hook to the handler. */
interface VerifiedInbound {
  webhook: InboundWebhookTarget;
  rawBody: Uint8Array;
  signedAtMs: number | null;
}

// Keyed by the raw Request: it lives exactly as long as the request, and nothing else can reach it.
const verified = new WeakMap<Request, VerifiedInbound>();

/** The per-IP limit for slugs that name no usable webhook (they have no configuration of their own). */
const UNKNOWN_SLUG_RPM = 60;

/**
 * The inbound route's authentication (`Deps.inboundSignature`): steps 1 to 4 above. The raw bytes
 * are handed to the body cache, so the contract's validator reads the very same bytes.
 */
export function verifyInboundRequest(services: Services) {
  return async function inboundSignature(c: Context<AppEnv>): Promise<void> {
    const ip = clientKey(clientIp(c, { trustProxy: services.config.trustProxy }));
    const slug = c.req.param('slug') ?? '';
    let rawBody: Uint8Array;
    let webhook: InboundWebhookTarget;
    try {
      rawBody = await readBodyWithLimit(c.req.raw.body, { contentLength: c.req.header('content-length') ?? null });
      webhook = await services.webhooks.inbound.target(slug);
    } catch (error) {
      // Refused before the webhook's own limit: still counted and still answered with the headers.
      await countQuietly(c, services, `inbound:slug:${ip}`, UNKNOWN_SLUG_RPM);
      throw error;
    }
    await enforceRateLimit(c, {
      limiter: services.limiter,
      key: `inbound:${webhook.id}:${ip}`,
      limit: webhook.requestsPerMinute,
      code: 'rate_limited',
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
    verified.set(c.req.raw, { webhook, rawBody, signedAtMs: timestampMs });
    const copy = rawBody.slice().buffer;
    (c.req.bodyCache as { arrayBuffer?: Promise<ArrayBuffer> }).arrayBuffer = Promise.resolve(copy);
  };
}

const ingest: Handler<'ingestInboundEvent'> = async (c, _input, services) => {
  const request = verified.get(c.req.raw);
  // Unreachable behind the hook; refuse rather than ingest an unverified body.
  if (!request) throw new ServiceError('signature_invalid', 401);
  const { webhook, rawBody, signedAtMs } = request;
  const payload = parseInboundPayload(rawBody);
  const agentInput = await services.webhooks.render(webhook.template, payload);
  const result: IngestResult = await ingestInboundEvent(services.db, {
    webhook,
    eventId: resolveInboundEventId(c.req.raw.headers, rawBody),
    rawBody,
    agentInput,
    receivedAt: services.clock.now(),
    sourceIp: clientIp(c, { trustProxy: services.config.trustProxy }),
    signedAtMs,
    requestId: c.get('requestId'),
  });
  keepUnredacted(c, result.eventId);
  if (result.code === 'duplicate') return { status: 200, body: { ok: true, code: 'duplicate', eventId: result.eventId } };
  services.webhooks.wake();
  return { status: 200, body: { ok: true, code: 'ok', eventId: result.eventId, runId: result.runId } };
};

const listInboundWebhooks: Handler<'listInboundWebhooks'> = async (c, _input, { webhooks }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: { data: await webhooks.inbound.list(workspaceId) } };
};

const createInboundWebhook: Handler<'createInboundWebhook'> = async (c, { body }, { webhooks }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const created = await webhooks.inbound.create(workspaceId, body);
  keepUnredacted(c, created.secret);
  return { status: 201, body: created };
};

const pauseInboundWebhook: Handler<'pauseInboundWebhook'> = async (c, { params }, { webhooks }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await webhooks.inbound.pause(workspaceId, params.slug) };
};

const resumeInboundWebhook: Handler<'resumeInboundWebhook'> = async (c, { params }, { webhooks }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await webhooks.inbound.resume(workspaceId, params.slug) };
};

const revokeInboundWebhook: Handler<'revokeInboundWebhook'> = async (c, { params }, { webhooks }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await webhooks.inbound.revoke(workspaceId, params.slug) };
};

export const inboundWebhookHandlers = {
  ingestInboundEvent: ingest,
  ingestInboundEventV1: ingest,
  listInboundWebhooks,
  createInboundWebhook,
  pauseInboundWebhook,
  resumeInboundWebhook,
  revokeInboundWebhook,
} satisfies Partial<Handlers>;

/** Counts a refused request against a limit for its headers, without turning its answer into a 429. */
async function countQuietly(c: Context<AppEnv>, services: Services, key: string, limit: number): Promise<void> {
  try {
    await enforceRateLimit(c, { limiter: services.limiter, key, limit, code: 'rate_limited' });
  } catch {
    // The original refusal stands; the headers were set before the limit threw.
  }
}
