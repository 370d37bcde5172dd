/**
 * @module The reader of the agents' definitions the agent loop uses: every agent's definition of a
 * workspace held in memory (one read per workspace), kept current on every instance by
 * `AGENT_DEFINITIONS_CHANNEL` (store/workspace-cache.ts). An agent never configured has the defaults.
 */
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import { getAgent } from '../../vocabulary/catalog.ts';
import type { AgentDefinitions } from '../agent-loop/agents.ts';
import { AGENT_DEFINITIONS_CHANNEL, definitionsVersion, readDefinitions } from './definitions.ts';
import { createWorkspaceCache } from '../../store/workspace-cache.ts';

export type { AgentDefinitions };

/**
 * `version` is this process's count of its own changes (definitions.ts); a test that plays two
 * instances in one process gives one of them a count of its own, so that only the notification
 * reaches it, as it would another process.
 */
/** The agent's definition in the workspace (`get` throws ServiceError agent_not_found for a slug that is no agent). */
export function createAgentDefinitions(deps: { db: Db; version?: () => number }): AgentDefinitions {
  const cache = createWorkspaceCache({ db: deps.db, channel: AGENT_DEFINITIONS_CHANNEL, version: deps.version ?? definitionsVersion, load: readDefinitions });
  return {
    async get(workspaceId, slug) {
      const agent = getAgent(slug);
      if (!agent) throw fail('agent_not_found', `No agent '${slug}' in the catalog.`);
      return (await cache.read(workspaceId)).get(agent.slug)!;
    },
  };
}
