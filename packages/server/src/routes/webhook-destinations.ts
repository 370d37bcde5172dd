/**
 * @module Outbound destinations (admin session): list, create, rotate the secret, pause, resume,
 * ping and replay. Secrets appear only in the create and rotate answers.
 */
import type { WorkspaceEventType } from '../domain/webhooks/envelope.ts';
import { keepUnredacted } from '../middleware/redact/index.ts';
import type { OperationHandler } from './handler.ts';
import { authOf } from './handler.ts';

const listWebhookDestinations: OperationHandler = async (c, { webhooks }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const data = await webhooks.destinations.list(workspaceId);
  // The admin's own URLs (loopback test receivers included) are shown back as configured.
  keepUnredacted(c, ...data.map((d) => d.url));
  return c.json({ data }, 200);
};

const createWebhookDestination: OperationHandler = async (c, { webhooks }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const body = c.get('valid').body as { url: string; events: WorkspaceEventType[] };
  const created = await webhooks.destinations.create(workspaceId, body);
  keepUnredacted(c, created.secret, created.url);
  return c.json(created, 201);
};

const rotateWebhookDestinationSecret: OperationHandler = async (c, { webhooks }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const rotated = await webhooks.destinations.rotateSecret(workspaceId, idOf(c));
  keepUnredacted(c, rotated.secret, rotated.url);
  return c.json(rotated, 200);
};

const pauseWebhookDestination: OperationHandler = async (c, { webhooks }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return c.json(await webhooks.destinations.pause(workspaceId, idOf(c)), 200);
};

const resumeWebhookDestination: OperationHandler = async (c, { webhooks }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const resumed = await webhooks.destinations.resume(workspaceId, idOf(c));
  webhooks.wake();
  return c.json(resumed, 200);
};

const pingWebhookDestination: OperationHandler = async (c, { webhooks }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const queued = await webhooks.destinations.ping(workspaceId, idOf(c));
  webhooks.wake();
  return c.json(queued, 202);
};

const replayWebhookDestination: OperationHandler = async (c, { webhooks }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const queued = await webhooks.destinations.replay(workspaceId, idOf(c));
  webhooks.wake();
  return c.json(queued, 202);
};

export const webhookDestinationHandlers = {
  listWebhookDestinations,
  createWebhookDestination,
  rotateWebhookDestinationSecret,
  pauseWebhookDestination,
  resumeWebhookDestination,
  pingWebhookDestination,
  replayWebhookDestination,
} satisfies Record<string, OperationHandler>;

function idOf(c: Parameters<OperationHandler>[0]): string {
  return c.get('valid').params.id as string;
}
