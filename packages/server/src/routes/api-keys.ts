/**
 * @module Key management (admin session): listApiKeys, createApiKey, rotateApiKey, revokeApiKey,
 * and their Set B twins under /v1. The workspace is the session's.
 */
import type { OperationHandler } from './handler.ts';
import { authOf } from './handler.ts';

const listApiKeys: OperationHandler = async (c, { keys }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return c.json({ data: await keys.list(workspaceId) }, 200);
};

const createApiKey: OperationHandler = async (c, { keys }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  const body = c.get('valid').body as { name: string; scopes: string[]; expiresInDays?: number };
  return c.json(await keys.create(workspaceId, body), 201);
};

const rotateApiKey: OperationHandler = async (c, { keys }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return c.json(await keys.rotate(workspaceId, c.get('valid').params.id as string), 201);
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
