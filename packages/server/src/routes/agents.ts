/**
 * @module listAgents (GET /v1/agents, API key): the active agents of the workspace (its plan minus
 * paused agents) with the alias assigned to each. For the panel (session): listWorkspaceAgents (any
 * member) shows every agent with its state; pauseAgent and resumeAgent (an admin) switch one.
 */
import { activeAgents } from '../domain/agents/availability.ts';
import { listWorkspaceAgents as list, pauseWorkspaceAgent, resumeWorkspaceAgent } from '../domain/agents/panel.ts';
import { workspaceAgents } from '../domain/agents/settings.ts';
import { authOf, type Handler, type Handlers } from './handler.ts';

const listAgents: Handler<'listAgents'> = async (c, _input, { db }) => {
  const { workspaceId } = authOf(c, 'apiKey');
  const agents = activeAgents(await workspaceAgents(db, workspaceId));
  return {
    status: 200,
    body: { data: agents.map((a) => ({ slug: a.slug, name: a.name, kind: a.kind, description: a.description, alias: a.defaultAlias })) },
  };
};

const listWorkspaceAgents: Handler<'listWorkspaceAgents'> = async (c, _input, { db }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await list(db, workspaceId) };
};

const pauseAgent: Handler<'pauseAgent'> = async (c, { params, body }, { db, clock }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await pauseWorkspaceAgent(db, clock, workspaceId, params.slug, body.reason) };
};

const resumeAgent: Handler<'resumeAgent'> = async (c, { params }, { db }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await resumeWorkspaceAgent(db, workspaceId, params.slug) };
};

export const agentHandlers = { listAgents, listWorkspaceAgents, pauseAgent, resumeAgent } satisfies Partial<Handlers>;
