/**
 * @module Key management (admin session): listApiKeys, createApiKey, rotateApiKey, revokeApiKey,
 * and their Set B twins under /v1. The workspace is the session's.
 */
import { keepUnredacted } from '../middleware/redact/index.ts';
import { auditOf, authOf, type Handler, type Handlers } from './handler.ts';

const listApiKeys: Handler<'listApiKeys'> = async (c, _input, { keys }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: { data: await keys.list(workspaceId) } };
};

const createApiKey: Handler<'createApiKey'> = async (c, { body }, services) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const key = await services.keys.create(workspaceId, body, auditOf(c, services));
  // The one answer that must show the secret: the redactor lets exactly this value through.
  keepUnredacted(c, key.secret);
  return { status: 201, body: key };
};

const rotateApiKey: Handler<'rotateApiKey'> = async (c, { params }, services) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const key = await services.keys.rotate(workspaceId, params.id, auditOf(c, services));
  keepUnredacted(c, key.secret);
  return { status: 201, body: key };
};

const revokeApiKey: Handler<'revokeApiKey'> = async (c, { params }, services) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await services.keys.revoke(workspaceId, params.id, auditOf(c, services)) };
};

export const apiKeyHandlers = {
  listApiKeys,
  createApiKey,
  rotateApiKey,
  revokeApiKey,
  listApiKeysV1: listApiKeys,
  createApiKeyV1: createApiKey,
  rotateApiKeyV1: rotateApiKey,
  revokeApiKeyV1: revokeApiKey,
} satisfies Partial<Handlers>;
