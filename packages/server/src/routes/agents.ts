/**
 * @module listAgents (GET /v1/agents, API key): the active agents of the workspace (its plan minus
 * paused agents) with the alias assigned to each. For the panel (session): listWorkspaceAgents (any
 * member) shows every agent with its state; pauseAgent and resumeAgent (an admin) switch one;
 * getAgentConfiguration (any member) and updateAgentConfiguration (an admin) read and replace its
 * instructions, step limit, tools and approval policy.
 */
import { auditOf, authOf, type Handler, type Handlers } from './handler.ts';

const listAgents: Handler<'listAgents'> = async (c, _input, { agents }) => {
  const { workspaceId } = authOf(c, 'apiKey');
  const active = await agents.active(workspaceId);
  return {
    status: 200,
    body: { data: active.map((a) => ({ slug: a.slug, name: a.name, kind: a.kind, description: a.description, alias: a.defaultAlias })) },
  };
};

const listWorkspaceAgents: Handler<'listWorkspaceAgents'> = async (c, _input, { agents }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await agents.list(workspaceId) };
};

const pauseAgent: Handler<'pauseAgent'> = async (c, { params, body }, services) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await services.agents.pause(workspaceId, params.slug, body.reason, auditOf(c, services)) };
};

const resumeAgent: Handler<'resumeAgent'> = async (c, { params }, services) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await services.agents.resume(workspaceId, params.slug, auditOf(c, services)) };
};

const getAgentConfiguration: Handler<'getAgentConfiguration'> = async (c, { params }, { agents }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await agents.configuration(workspaceId, params.slug) };
};

const updateAgentConfiguration: Handler<'updateAgentConfiguration'> = async (c, { params, body }, services) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await services.agents.configure(workspaceId, params.slug, body, auditOf(c, services)) };
};

export const agentHandlers = {
  listAgents,
  listWorkspaceAgents,
  pauseAgent,
  resumeAgent,
  getAgentConfiguration,
  updateAgentConfiguration,
} satisfies Partial<Handlers>;
