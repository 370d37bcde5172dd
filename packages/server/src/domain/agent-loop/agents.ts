/**
 * @module Where the loop finds an agent's definition and a workspace's tools. The run context
 * receives both (`RunServiceDeps.agents`: the stored definitions, domain/agents/definitions-cache.ts,
 * whose defaults are domain/agents/instructions.ts; `.tools`: the connected integrations'). Both are
 * read from memory: the loop adds no statement to an invocation.
 */
import type { AgentDefinition, ToolSource } from './tool.ts';

/** An agent's definition by workspace and slug. */
export interface AgentDefinitions {
  get(workspaceId: string, slug: string): Promise<AgentDefinition>;
}

/** No connected tools anywhere. */
export const noConnectedTools: ToolSource = {
  async toolsOf() {
    return [];
  },
};
