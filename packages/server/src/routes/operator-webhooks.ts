/**
 * @module A workspace's webhook settings by the operator (operator token): its inbound webhooks and outbound
 * destinations, with the services, rules and answers of the admins' routes (./inbound-webhooks.ts,
 * ./webhook-destinations.ts) in the workspace named in the path; an unknown one answers `404 not_found`
 * before anything is done. Secrets appear only in the create and rotate answers.
 */
import { keepUnredacted } from '../middleware/redact/index.ts';
import { auditOf, type Handler, type Handlers } from './handler.ts';
import { namedWorkspace } from './operator.ts';

const listInboundWebhooksOfWorkspace: Handler<'listInboundWebhooksOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  return { status: 200, body: { data: await services.webhooks.inbound.list(workspaceId) } };
};

const createInboundWebhookOfWorkspace: Handler<'createInboundWebhookOfWorkspace'> = async (c, { params, body }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  const created = await services.webhooks.inbound.create(workspaceId, body, auditOf(c, services));
  keepUnredacted(c, created.secret);
  return { status: 201, body: created };
};

const pauseInboundWebhookOfWorkspace: Handler<'pauseInboundWebhookOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  return { status: 200, body: await services.webhooks.inbound.pause(workspaceId, params.slug, auditOf(c, services)) };
};

const resumeInboundWebhookOfWorkspace: Handler<'resumeInboundWebhookOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  return { status: 200, body: await services.webhooks.inbound.resume(workspaceId, params.slug, auditOf(c, services)) };
};

const revokeInboundWebhookOfWorkspace: Handler<'revokeInboundWebhookOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  return { status: 200, body: await services.webhooks.inbound.revoke(workspaceId, params.slug, auditOf(c, services)) };
};

const listWebhookDestinationsOfWorkspace: Handler<'listWebhookDestinationsOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  const data = await services.webhooks.destinations.list(workspaceId);
  // The workspace's own URLs (loopback test receivers included) are shown back as configured.
  keepUnredacted(c, ...data.map((d) => d.url));
  return { status: 200, body: { data } };
};

const createWebhookDestinationOfWorkspace: Handler<'createWebhookDestinationOfWorkspace'> = async (c, { params, body }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  const created = await services.webhooks.destinations.create(workspaceId, body, auditOf(c, services));
  keepUnredacted(c, created.secret, created.url);
  return { status: 201, body: created };
};

const rotateWebhookDestinationSecretOfWorkspace: Handler<'rotateWebhookDestinationSecretOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  const rotated = await services.webhooks.destinations.rotateSecret(workspaceId, params.id, auditOf(c, services));
  keepUnredacted(c, rotated.secret, rotated.url);
  return { status: 200, body: rotated };
};

const pauseWebhookDestinationOfWorkspace: Handler<'pauseWebhookDestinationOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  return { status: 200, body: await services.webhooks.destinations.pause(workspaceId, params.id, auditOf(c, services)) };
};

const resumeWebhookDestinationOfWorkspace: Handler<'resumeWebhookDestinationOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  const resumed = await services.webhooks.destinations.resume(workspaceId, params.id, auditOf(c, services));
  services.webhooks.wake();
  return { status: 200, body: resumed };
};

const pingWebhookDestinationOfWorkspace: Handler<'pingWebhookDestinationOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  const queued = await services.webhooks.destinations.ping(workspaceId, params.id, auditOf(c, services));
  services.webhooks.wake();
  return { status: 202, body: queued };
};

const sendWebhookDestinationTestEventOfWorkspace: Handler<'sendWebhookDestinationTestEventOfWorkspace'> = async (c, { params, body }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  const queued = await services.webhooks.destinations.testEvent(workspaceId, params.id, body.type, auditOf(c, services));
  services.webhooks.wake();
  return { status: 202, body: queued };
};

const replayWebhookDestinationOfWorkspace: Handler<'replayWebhookDestinationOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  const queued = await services.webhooks.destinations.replay(workspaceId, params.id, auditOf(c, services));
  services.webhooks.wake();
  return { status: 202, body: queued };
};

export const operatorWebhookHandlers = {
  listInboundWebhooksOfWorkspace,
  createInboundWebhookOfWorkspace,
  pauseInboundWebhookOfWorkspace,
  resumeInboundWebhookOfWorkspace,
  revokeInboundWebhookOfWorkspace,
  listWebhookDestinationsOfWorkspace,
  createWebhookDestinationOfWorkspace,
  rotateWebhookDestinationSecretOfWorkspace,
  pauseWebhookDestinationOfWorkspace,
  resumeWebhookDestinationOfWorkspace,
  pingWebhookDestinationOfWorkspace,
  sendWebhookDestinationTestEventOfWorkspace,
  replayWebhookDestinationOfWorkspace,
} satisfies Partial<Handlers>;
