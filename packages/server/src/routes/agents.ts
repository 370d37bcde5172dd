/**
 * @module listAgents (GET /v1/agents): the active agents of the workspace (its plan minus paused
 * agents) with the alias assigned to each.
 */
import { activeAgents } from '../domain/agents/availability.ts';
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

export const agentHandlers = { listAgents } satisfies Partial<Handlers>;
