/**
 * @module Outbound destinations (admin session): list, create, rotate the secret, pause, resume,
 * ping, test events of any type, replay and the delivery log. Secrets appear only in the create and rotate answers.
 */
import { keepUnredacted } from '../middleware/redact/index.ts';
import { auditOf, authOf, type Handler, type Handlers } from './handler.ts';

const listWebhookDestinations: Handler<'listWebhookDestinations'> = async (c, _input, { webhooks }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const data = await webhooks.destinations.list(workspaceId);
  // The admin's own URLs (loopback test receivers included) are shown back as configured.
  keepUnredacted(c, ...data.map((d) => d.url));
  return { status: 200, body: { data } };
};

const createWebhookDestination: Handler<'createWebhookDestination'> = async (c, { body }, services) => {
  const { webhooks } = services;
  const { workspaceId } = authOf(c, 'adminSession');
  const created = await webhooks.destinations.create(workspaceId, body, auditOf(c, services));
  keepUnredacted(c, created.secret, created.url);
  return { status: 201, body: created };
};

const rotateWebhookDestinationSecret: Handler<'rotateWebhookDestinationSecret'> = async (c, { params }, services) => {
  const { webhooks } = services;
  const { workspaceId } = authOf(c, 'adminSession');
  const rotated = await webhooks.destinations.rotateSecret(workspaceId, params.id, auditOf(c, services));
  keepUnredacted(c, rotated.secret, rotated.url);
  return { status: 200, body: rotated };
};

const pauseWebhookDestination: Handler<'pauseWebhookDestination'> = async (c, { params }, services) => {
  const { webhooks } = services;
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await webhooks.destinations.pause(workspaceId, params.id, auditOf(c, services)) };
};

const resumeWebhookDestination: Handler<'resumeWebhookDestination'> = async (c, { params }, services) => {
  const { webhooks } = services;
  const { workspaceId } = authOf(c, 'adminSession');
  const resumed = await webhooks.destinations.resume(workspaceId, params.id, auditOf(c, services));
  webhooks.wake();
  return { status: 200, body: resumed };
};

const pingWebhookDestination: Handler<'pingWebhookDestination'> = async (c, { params }, services) => {
  const { webhooks } = services;
  const { workspaceId } = authOf(c, 'adminSession');
  const queued = await webhooks.destinations.ping(workspaceId, params.id, auditOf(c, services));
  webhooks.wake();
  return { status: 202, body: queued };
};

const sendWebhookDestinationTestEvent: Handler<'sendWebhookDestinationTestEvent'> = async (c, { params, body }, services) => {
  const { webhooks } = services;
  const { workspaceId } = authOf(c, 'adminSession');
  const queued = await webhooks.destinations.testEvent(workspaceId, params.id, body.type, auditOf(c, services));
  webhooks.wake();
  return { status: 202, body: queued };
};

const replayWebhookDestination: Handler<'replayWebhookDestination'> = async (c, { params }, services) => {
  const { webhooks } = services;
  const { workspaceId } = authOf(c, 'adminSession');
  const queued = await webhooks.destinations.replay(workspaceId, params.id, auditOf(c, services));
  webhooks.wake();
  return { status: 202, body: queued };
};

const listDestinationDeliveries: Handler<'listDestinationDeliveries'> = async (c, { params, query }, { webhooks }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const page = await webhooks.destinations.deliveries(workspaceId, params.id, { status: query.status, limit: query.limit, offset: query.offset });
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
} satisfies Partial<Handlers>;
