/**
 * @module The operator API (operator token): listWorkspaces, createWorkspace, getWorkspace,
 * updateWorkspace, deleteWorkspace; createUserReset (an account's recovery, by email). The workspace is
 * the one named in the path, never the caller's.
 */
import {
  deleteWorkspace as removeWorkspace,
  getOperatorWorkspace,
  listOperatorWorkspaces,
  updateWorkspace as changeWorkspace,
} from '../domain/workspaces/index.ts';
import { resetUserByEmail } from '../domain/sessions/resets.ts';
import { createCustomerWorkspace } from '../domain/workspaces/init.ts';
import { keepUnredacted } from '../middleware/redact/index.ts';
import { authOf, type Handler, type Handlers } from './handler.ts';

const listWorkspaces: Handler<'listWorkspaces'> = async (c, _input, { db }) => {
  authOf(c, 'operatorToken');
  return { status: 200, body: { data: await listOperatorWorkspaces(db) } };
};

const createWorkspace: Handler<'createWorkspace'> = async (c, { body }, { db, clock, webhooks }) => {
  authOf(c, 'operatorToken');
  const created = await createCustomerWorkspace(db, clock, webhooks.secretBox, body);
  // The one answer that shows the first credentials: the redactor lets exactly these through.
  keepUnredacted(c, created.apiKey, created.admin.password, created.admin.totpSecret);
  return { status: 201, body: created };
};

const getWorkspace: Handler<'getWorkspace'> = async (c, { params }, { db }) => {
  authOf(c, 'operatorToken');
  return { status: 200, body: await getOperatorWorkspace(db, params.workspace_id) };
};

// A change of standing answers once this instance heard it: every instance's key cache has dropped it.
const updateWorkspace: Handler<'updateWorkspace'> = async (c, { params, body }, { db, clock, keys }) => {
  authOf(c, 'operatorToken');
  const changed = await changeWorkspace(db, clock, params.workspace_id, body);
  await keys.settle();
  return { status: 200, body: changed };
};

const deleteWorkspace: Handler<'deleteWorkspace'> = async (c, { params }, { db, keys }) => {
  authOf(c, 'operatorToken');
  await removeWorkspace(db, params.workspace_id);
  await keys.settle();
  return { status: 204 };
};

const createUserReset: Handler<'createUserReset'> = async (c, { body }, { db, clock }) => {
  authOf(c, 'operatorToken');
  const created = await resetUserByEmail(db, clock, body);
  keepUnredacted(c, created.token);
  return { status: 201, body: created };
};

export const operatorHandlers = {
  createUserReset,
  listWorkspaces,
  createWorkspace,
  getWorkspace,
  updateWorkspace,
  deleteWorkspace,
} satisfies Partial<Handlers>;
