/**
 * @module The operator API (operator token): listWorkspaces, createWorkspace, getWorkspace,
 * updateWorkspace, deleteWorkspace; createUserReset (an account's recovery, by email); within a workspace
 * its API keys (listWorkspaceApiKeys, createWorkspaceApiKey, revokeWorkspaceApiKey, rotateWorkspaceApiKey)
 * its kill switches (getWorkspaceKillSwitches, setWorkspaceManualKillSwitch) and its agents
 * (listAgentsOfWorkspace, pauseAgentOfWorkspace, resumeAgentOfWorkspace), its users (listWorkspaceUsers,
 * createWorkspaceUser) and approvals (decideApprovalOfWorkspace), the same services as the admins' routes; its
 * webhooks are the admins' handlers (./inbound-webhooks.ts, ./webhook-destinations.ts, through `settingsWorkspace`). The workspace is the one named in the path, never the caller's; an unknown one answers
 * `404 not_found` before anything is done.
 */
import { keepUnredacted } from '../middleware/redact/index.ts';
import type { Services } from '../services.ts';
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

/**
 * The workspace a settings route shared with the operator acts in (handler.ts `TwinHandler`): the one the operator's
 * path names, once it is known to exist; else the admin session's. An admin route has no `workspace_id` in its path.
 */
export function settingsWorkspace(c: Parameters<Handler<'getWorkspace'>>[0], params: object, services: Pick<Services, 'operator'>): Promise<string> {
  if ('workspace_id' in params && typeof params.workspace_id === 'string') return namedWorkspace(c, params.workspace_id, services);
  return Promise.resolve(authOf(c, 'adminSession').workspaceId);
}

/** The workspace named in the path, once it is known to exist (`404 not_found` otherwise). */
export async function namedWorkspace(
  c: Parameters<Handler<'getWorkspace'>>[0],
  workspaceId: string,
  { operator }: Pick<Services, 'operator'>,
): Promise<string> {
  authOf(c, 'operatorToken');
  await operator.getWorkspace(workspaceId);
  return workspaceId;
}

const listWorkspaceApiKeys: Handler<'listWorkspaceApiKeys'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  return { status: 200, body: { data: await services.keys.list(workspaceId) } };
};

const createWorkspaceApiKey: Handler<'createWorkspaceApiKey'> = async (c, { params, body }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  const key = await services.keys.create(workspaceId, body, auditOf(c, services));
  keepUnredacted(c, key.secret);
  return { status: 201, body: key };
};

const revokeWorkspaceApiKey: Handler<'revokeWorkspaceApiKey'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  return { status: 200, body: await services.keys.revoke(workspaceId, params.id, auditOf(c, services)) };
};

const rotateWorkspaceApiKey: Handler<'rotateWorkspaceApiKey'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  const key = await services.keys.rotate(workspaceId, params.id, auditOf(c, services));
  keepUnredacted(c, key.secret);
  return { status: 201, body: key };
};

const getWorkspaceKillSwitches: Handler<'getWorkspaceKillSwitches'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  return { status: 200, body: await services.usage.killSwitches(workspaceId) };
};

const setWorkspaceManualKillSwitch: Handler<'setWorkspaceManualKillSwitch'> = async (c, { params, body }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  await services.usage.setManualKillSwitch(workspaceId, body.engaged, { reason: body.reason }, auditOf(c, services));
  return { status: 200, body: await services.usage.killSwitches(workspaceId) };
};

const listAgentsOfWorkspace: Handler<'listAgentsOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  return { status: 200, body: await services.agents.list(workspaceId) };
};

const pauseAgentOfWorkspace: Handler<'pauseAgentOfWorkspace'> = async (c, { params, body }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  return { status: 200, body: await services.agents.pause(workspaceId, params.slug, body.reason, auditOf(c, services)) };
};

const resumeAgentOfWorkspace: Handler<'resumeAgentOfWorkspace'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  return { status: 200, body: await services.agents.resume(workspaceId, params.slug, auditOf(c, services)) };
};

const listWorkspaceUsers: Handler<'listWorkspaceUsers'> = async (c, { params }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  return { status: 200, body: { data: await services.operator.listUsers(workspaceId) } };
};

const createWorkspaceUser: Handler<'createWorkspaceUser'> = async (c, { params, body }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  const user = await services.operator.addUser(workspaceId, body, auditOf(c, services));
  // The one answer that shows the new user's password and TOTP secret.
  keepUnredacted(c, user.password, ...(user.totpSecret ? [user.totpSecret] : []));
  return { status: 201, body: user };
};

const decideApprovalOfWorkspace: Handler<'decideApprovalOfWorkspace'> = async (c, { params, body }, services) => {
  const workspaceId = await namedWorkspace(c, params.workspace_id, services);
  const decision = { workspaceId, approvalId: params.approval_id, decision: body.decision };
  const approval = await services.approvals.decideAsOperator(decision, body.decidedBy, auditOf(c, services));
  services.webhooks.wake();
  return { status: 200, body: approval };
};

export const operatorHandlers = {
  listWorkspaceUsers,
  createWorkspaceUser,
  decideApprovalOfWorkspace,
  listAgentsOfWorkspace,
  pauseAgentOfWorkspace,
  resumeAgentOfWorkspace,
  listWorkspaceApiKeys,
  createWorkspaceApiKey,
  revokeWorkspaceApiKey,
  rotateWorkspaceApiKey,
  getWorkspaceKillSwitches,
  setWorkspaceManualKillSwitch,
  createUserReset,
  listWorkspaces,
  createWorkspace,
  getWorkspace,
  updateWorkspace,
  deleteWorkspace,
} satisfies Partial<Handlers>;
