/**
 * @module The inbound webhook routes (`ingestInboundEvent`, `ingestInboundEventV1`) and the
 * inbound webhook settings (admin session: list, create, pause, resume, revoke; the operator's routes of a
 * workspace's inbound webhooks, `…OfWorkspace`, are the same handlers).
 *
 * The inbound request is verified (body, slug, limit, signature, headers, JSON) by its front,
 * middleware/inbound; the handler renders the template and inserts the event idempotently
 * (the UNIQUE (webhook, event id) constraint decides ok / duplicate).
 */
import type { IngestResult } from '../domain/inbound-webhooks/ingest.ts';
import { resolveInboundEventId } from '../domain/webhooks/event-id.ts';
import { fail } from '../errors.ts';
import { clientIp } from '../middleware/rate-limit/index.ts';
import { keepUnredacted } from '../middleware/redact/index.ts';
import { auditOf, type Handler, type Handlers, type TwinHandler } from './handler.ts';
import { settingsWorkspace } from './operator.ts';

const ingest: Handler<'ingestInboundEvent'> = async (c, _input, services) => {
  const verified = c.get('inbound');
  // Unreachable behind the inbound front; refuse rather than ingest an unverified body.
  if (!verified) throw fail('signature_invalid');
  const { webhook, rawBody, payload, signedAtMs } = verified;
  const agentInput = await services.webhooks.render(webhook.template, payload);
  const result: IngestResult = await services.inbound.ingest({
    webhook,
    eventId: resolveInboundEventId(c.req.raw.headers, rawBody),
    rawBody,
    agentInput,
    sourceIp: clientIp(c, { trustProxy: services.config.trustProxy }),
    signedAtMs,
    requestId: c.get('requestId'),
  });
  keepUnredacted(c, result.eventId);
  if (result.code === 'duplicate') return { status: 200, body: { ok: true, code: 'duplicate', eventId: result.eventId } };
  services.webhooks.wake();
  return { status: 200, body: { ok: true, code: 'ok', eventId: result.eventId, runId: result.runId } };
};

const listInboundWebhooks: TwinHandler<'listInboundWebhooks', 'listInboundWebhooksOfWorkspace'> = async (c, { params }, services) => {
  return { status: 200, body: { data: await services.webhooks.inbound.list(await settingsWorkspace(c, params, services)) } };
};

const createInboundWebhook: TwinHandler<'createInboundWebhook', 'createInboundWebhookOfWorkspace'> = async (c, { params, body }, services) => {
  const created = await services.webhooks.inbound.create(await settingsWorkspace(c, params, services), body, auditOf(c, services));
  keepUnredacted(c, created.secret);
  return { status: 201, body: created };
};

const pauseInboundWebhook: TwinHandler<'pauseInboundWebhook', 'pauseInboundWebhookOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await settingsWorkspace(c, params, services);
  return { status: 200, body: await services.webhooks.inbound.pause(workspaceId, params.slug, auditOf(c, services)) };
};

const resumeInboundWebhook: TwinHandler<'resumeInboundWebhook', 'resumeInboundWebhookOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await settingsWorkspace(c, params, services);
  return { status: 200, body: await services.webhooks.inbound.resume(workspaceId, params.slug, auditOf(c, services)) };
};

const revokeInboundWebhook: TwinHandler<'revokeInboundWebhook', 'revokeInboundWebhookOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await settingsWorkspace(c, params, services);
  return { status: 200, body: await services.webhooks.inbound.revoke(workspaceId, params.slug, auditOf(c, services)) };
};

export const inboundWebhookHandlers = {
  ingestInboundEvent: ingest,
  ingestInboundEventV1: ingest,
  listInboundWebhooks,
  createInboundWebhook,
  pauseInboundWebhook,
  resumeInboundWebhook,
  revokeInboundWebhook,
  // The operator's twins (routes/operator.ts `settingsWorkspace`: the workspace its path names).
  listInboundWebhooksOfWorkspace: listInboundWebhooks,
  createInboundWebhookOfWorkspace: createInboundWebhook,
  pauseInboundWebhookOfWorkspace: pauseInboundWebhook,
  resumeInboundWebhookOfWorkspace: resumeInboundWebhook,
  revokeInboundWebhookOfWorkspace: revokeInboundWebhook,
} satisfies Partial<Handlers>;
