/**
 * @module Outbound destinations (admin session): list, create, rotate the secret, pause, resume,
 * ping, test events of any type, replay and the delivery log. Secrets appear only in the create and rotate answers.
 * The operator's routes of a workspace's destinations (`…OfWorkspace`) are the same handlers.
 */
import { keepUnredacted } from '../middleware/redact/index.ts';
import { shownSignatures } from '../domain/webhooks/attempt-detail.ts';
import { auditOf, authOf, type Handler, type Handlers, type TwinHandler } from './handler.ts';
import { settingsWorkspace } from './operator.ts';

const listWebhookDestinations: TwinHandler<'listWebhookDestinations', 'listWebhookDestinationsOfWorkspace'> = async (c, { params }, services) => {
  const data = await services.webhooks.destinations.list(await settingsWorkspace(c, params, services));
  // The workspace's own URLs (loopback test receivers included) are shown back as configured.
  keepUnredacted(c, ...data.map((d) => d.url));
  return { status: 200, body: { data } };
};

const createWebhookDestination: TwinHandler<'createWebhookDestination', 'createWebhookDestinationOfWorkspace'> = async (c, { params, body }, services) => {
  const created = await services.webhooks.destinations.create(await settingsWorkspace(c, params, services), body, auditOf(c, services));
  keepUnredacted(c, created.secret, created.url);
  return { status: 201, body: created };
};

const rotateWebhookDestinationSecret: TwinHandler<'rotateWebhookDestinationSecret', 'rotateWebhookDestinationSecretOfWorkspace'> = async (
  c,
  { params },
  services,
) => {
  const rotated = await services.webhooks.destinations.rotateSecret(await settingsWorkspace(c, params, services), params.id, auditOf(c, services));
  keepUnredacted(c, rotated.secret, rotated.url);
  return { status: 200, body: rotated };
};

const pauseWebhookDestination: TwinHandler<'pauseWebhookDestination', 'pauseWebhookDestinationOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await settingsWorkspace(c, params, services);
  return { status: 200, body: await services.webhooks.destinations.pause(workspaceId, params.id, auditOf(c, services)) };
};

const resumeWebhookDestination: TwinHandler<'resumeWebhookDestination', 'resumeWebhookDestinationOfWorkspace'> = async (c, { params }, services) => {
  const resumed = await services.webhooks.destinations.resume(await settingsWorkspace(c, params, services), params.id, auditOf(c, services));
  services.webhooks.wake();
  return { status: 200, body: resumed };
};

const pingWebhookDestination: TwinHandler<'pingWebhookDestination', 'pingWebhookDestinationOfWorkspace'> = async (c, { params }, services) => {
  const queued = await services.webhooks.destinations.ping(await settingsWorkspace(c, params, services), params.id, auditOf(c, services));
  services.webhooks.wake();
  return { status: 202, body: queued };
};

const sendWebhookDestinationTestEvent: TwinHandler<'sendWebhookDestinationTestEvent', 'sendWebhookDestinationTestEventOfWorkspace'> = async (
  c,
  { params, body },
  services,
) => {
  const workspaceId = await settingsWorkspace(c, params, services);
  const queued = await services.webhooks.destinations.testEvent(workspaceId, params.id, body.type, auditOf(c, services));
  services.webhooks.wake();
  return { status: 202, body: queued };
};

const replayWebhookDestination: TwinHandler<'replayWebhookDestination', 'replayWebhookDestinationOfWorkspace'> = async (c, { params }, services) => {
  const queued = await services.webhooks.destinations.replay(await settingsWorkspace(c, params, services), params.id, auditOf(c, services));
  services.webhooks.wake();
  return { status: 202, body: queued };
};

const listDestinationDeliveries: Handler<'listDestinationDeliveries'> = async (c, { params, query }, { webhooks }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const page = await webhooks.destinations.deliveries(workspaceId, params.id, { status: query.status, limit: query.limit, offset: query.offset });
  // The signatures' starts are shown as the receiver got them (attempt-detail.ts).
  keepUnredacted(c, ...page.data.flatMap((d) => d.attempts.flatMap((a) => shownSignatures(a.requestHeaders ?? []))));
  return { status: 200, body: page };
};

export const webhookDestinationHandlers = {
  listWebhookDestinations,
  createWebhookDestination,
  rotateWebhookDestinationSecret,
  pauseWebhookDestination,
  resumeWebhookDestination,
  pingWebhookDestination,
  sendWebhookDestinationTestEvent,
  replayWebhookDestination,
  listDestinationDeliveries,
  // The operator's twins (routes/operator.ts `settingsWorkspace`: the workspace its path names).
  listWebhookDestinationsOfWorkspace: listWebhookDestinations,
  createWebhookDestinationOfWorkspace: createWebhookDestination,
  rotateWebhookDestinationSecretOfWorkspace: rotateWebhookDestinationSecret,
  pauseWebhookDestinationOfWorkspace: pauseWebhookDestination,
  resumeWebhookDestinationOfWorkspace: resumeWebhookDestination,
  pingWebhookDestinationOfWorkspace: pingWebhookDestination,
  sendWebhookDestinationTestEventOfWorkspace: sendWebhookDestinationTestEvent,
  replayWebhookDestinationOfWorkspace: replayWebhookDestination,
} satisfies Partial<Handlers>;
