/**
 * @module Connected integrations (admin session): list, connect (the connection check first; emits
 * `integration.connected`), read, check again, pause, resume and remove. An auth header's value never appears.
 */
import { keepUnredacted } from '../middleware/redact/index.ts';
import { auditOf, authOf, type Handler, type Handlers } from './handler.ts';

const listIntegrations: Handler<'listIntegrations'> = async (c, _input, { integrations }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const data = await integrations.list(workspaceId);
  // The admin's own URLs (loopback test servers included) are shown back as configured.
  keepUnredacted(c, ...data.flatMap((i) => (i.url === null ? [] : [i.url])));
  return { status: 200, body: { data } };
};

const createIntegration: Handler<'createIntegration'> = async (c, { body }, services) => {
  const { integrations, webhooks } = services;
  const { workspaceId, userId } = authOf(c, 'adminSession');
  const integration = await integrations.connect(workspaceId, userId, body, auditOf(c, services));
  keepUnredacted(c, body.url);
  webhooks.wake();
  return { status: 201, body: integration };
};

const getIntegration: Handler<'getIntegration'> = async (c, { params }, { integrations }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const integration = await integrations.get(workspaceId, params.id);
  if (integration.url !== null) keepUnredacted(c, integration.url);
  return { status: 200, body: integration };
};

const testIntegration: Handler<'testIntegration'> = async (c, { params }, services) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const integration = await services.integrations.test(workspaceId, params.id, auditOf(c, services));
  if (integration.url !== null) keepUnredacted(c, integration.url);
  return { status: 200, body: integration };
};

const pauseIntegration: Handler<'pauseIntegration'> = async (c, { params }, services) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const integration = await services.integrations.pause(workspaceId, params.id, auditOf(c, services));
  if (integration.url !== null) keepUnredacted(c, integration.url);
  return { status: 200, body: integration };
};

const resumeIntegration: Handler<'resumeIntegration'> = async (c, { params }, services) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const integration = await services.integrations.resume(workspaceId, params.id, auditOf(c, services));
  if (integration.url !== null) keepUnredacted(c, integration.url);
  return { status: 200, body: integration };
};

const removeIntegration: Handler<'removeIntegration'> = async (c, { params }, services) => {
  const { workspaceId } = authOf(c, 'adminSession');
  await services.integrations.remove(workspaceId, params.id, auditOf(c, services));
  return { status: 204 };
};

export const integrationHandlers = {
  listIntegrations,
  createIntegration,
  getIntegration,
  testIntegration,
  pauseIntegration,
  resumeIntegration,
  removeIntegration,
} satisfies Partial<Handlers>;
