/**
 * @module Key management (admin session): listApiKeys, createApiKey, rotateApiKey, revokeApiKey,
 * and their Set B twins under /v1. The workspace is the session's.
 */
import { keepUnredacted } from '../middleware/redact/index.ts';
import type { OperationHandler } from './handler.ts';
import { authOf } from './handler.ts';

const listApiKeys: OperationHandler = async (c, { keys }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return c.json({ data: await keys.list(workspaceId) }, 200);
};

const createApiKey: OperationHandler = async (c, { keys }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const body = c.get('valid').body as { name: string; scopes: string[]; expiresInDays?: number };
  const key = await keys.create(workspaceId, body);
  // The one answer that must show the secret: the redactor lets exactly this value through.
  keepUnredacted(c, key.secret);
  return c.json(key, 201);
};

const rotateApiKey: OperationHandler = async (c, { keys }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const key = await keys.rotate(workspaceId, c.get('valid').params.id as string);
  keepUnredacted(c, key.secret);
  return c.json(key, 201);
};

const revokeApiKey: OperationHandler = async (c, { keys }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return c.json(await keys.revoke(workspaceId, c.get('valid').params.id as string), 200);
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
} satisfies Record<string, OperationHandler>;
