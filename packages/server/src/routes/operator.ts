/**
 * @module The operator API (operator token): listWorkspaces, createWorkspace, getWorkspace,
 * updateWorkspace, deleteWorkspace; createUserReset (an account's recovery, by email). The workspace is
 * the one named in the path, never the caller's.
 */
import { keepUnredacted } from '../middleware/redact/index.ts';
import { auditOf, authOf, type Handler, type Handlers } from './handler.ts';

const listWorkspaces: Handler<'listWorkspaces'> = async (c, _input, { operator }) => {
  authOf(c, 'operatorToken');
  return { status: 200, body: { data: await operator.listWorkspaces() } };
};

const createWorkspace: Handler<'createWorkspace'> = async (c, { body }, services) => {
  authOf(c, 'operatorToken');
  const created = await services.operator.createWorkspace(body, auditOf(c, services));
  // The one answer that shows the first credentials: the redactor lets exactly these through.
  keepUnredacted(c, created.apiKey, created.admin.password, created.admin.totpSecret);
  return { status: 201, body: created };
};

const getWorkspace: Handler<'getWorkspace'> = async (c, { params }, { operator }) => {
  authOf(c, 'operatorToken');
  return { status: 200, body: await operator.getWorkspace(params.workspace_id) };
};

// A change of standing answers once this instance heard it: every instance's key cache has dropped it.
const updateWorkspace: Handler<'updateWorkspace'> = async (c, { params, body }, services) => {
  const { operator, keys } = services;
  authOf(c, 'operatorToken');
  const changed = await operator.updateWorkspace(params.workspace_id, body, auditOf(c, services));
  await keys.settle();
  return { status: 200, body: changed };
};

const deleteWorkspace: Handler<'deleteWorkspace'> = async (c, { params }, { operator, keys }) => {
  authOf(c, 'operatorToken');
  await operator.deleteWorkspace(params.workspace_id);
  await keys.settle();
  return { status: 204 };
};

const createUserReset: Handler<'createUserReset'> = async (c, { body }, services) => {
  authOf(c, 'operatorToken');
  const created = await services.operator.resetUser(body, auditOf(c, services));
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
