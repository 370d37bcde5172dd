/**
 * @module The operator API (operator token): listWorkspaces, createWorkspace, getWorkspace,
 * updateWorkspace, deleteWorkspace. The workspace is the one named in the path, never the caller's.
 */
import { randomBase62 } from '../random.ts';
import {
  deleteWorkspace as removeWorkspace,
  getOperatorWorkspace,
  listOperatorWorkspaces,
  updateWorkspace as changeWorkspace,
} from '../domain/workspaces/index.ts';
import { initWorkspace } from '../domain/workspaces/init.ts';
import { keepUnredacted } from '../middleware/redact/index.ts';
import { authOf, type Handler, type Handlers } from './handler.ts';

const listWorkspaces: Handler<'listWorkspaces'> = async (c, _input, { db }) => {
  authOf(c, 'operatorToken');
  return { status: 200, body: { data: await listOperatorWorkspaces(db) } };
};

const createWorkspace: Handler<'createWorkspace'> = async (c, { body }, { db, clock, webhooks }) => {
  authOf(c, 'operatorToken');
  const created = await initWorkspace(db, clock, {
    workspaceName: body.name,
    adminEmail: body.adminEmail ?? `owner-${randomBase62(8).toLowerCase()}@workspace.invalid`,
    plan: body.plan,
    pendingPayment: body.pendingPayment,
    secretBox: webhooks.secretBox,
  });
  // The one answer that shows the first credentials: the redactor lets exactly these through.
  keepUnredacted(c, created.apiKey, created.admin.password, created.admin.totpSecret);
  const workspace = await getOperatorWorkspace(db, created.workspaceId);
  return { status: 201, body: { workspaceId: created.workspaceId, apiKey: created.apiKey, admin: created.admin, workspace } };
};

const getWorkspace: Handler<'getWorkspace'> = async (c, { params }, { db }) => {
  authOf(c, 'operatorToken');
  return { status: 200, body: await getOperatorWorkspace(db, params.workspace_id) };
};

const updateWorkspace: Handler<'updateWorkspace'> = async (c, { params, body }, { db, clock }) => {
  authOf(c, 'operatorToken');
  return { status: 200, body: await changeWorkspace(db, clock, params.workspace_id, body) };
};

const deleteWorkspace: Handler<'deleteWorkspace'> = async (c, { params }, { db }) => {
  authOf(c, 'operatorToken');
  await removeWorkspace(db, params.workspace_id);
  return { status: 204 };
};

export const operatorHandlers = {
  listWorkspaces,
  createWorkspace,
  getWorkspace,
  updateWorkspace,
  deleteWorkspace,
} satisfies Partial<Handlers>;
