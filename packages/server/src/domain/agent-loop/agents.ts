/**
 * @module Where the loop finds an agent's definition and a workspace's tools. The run context
 * receives both (`RunServiceDeps.agents`, `.tools`); until stored definitions and connected
 * integrations provide them, every agent has the default definition below and no workspace has
 * connected tools. Both are read from memory: the loop adds no statement to an invocation.
 */
import { getAgent } from '../../vocabulary/catalog.ts';
import type { AgentDefinition, ToolSource } from './tool.ts';

/** An agent's definition by workspace and slug. */
export interface AgentDefinitions {
  get(workspaceId: string, slug: string): Promise<AgentDefinition>;
}

export const DEFAULT_STEP_LIMIT = 8;

/** A short default instruction per agent of the catalog. */
export function defaultDefinition(slug: string): AgentDefinition {
  const entry = getAgent(slug);
  const who = entry ? `the ${entry.name} agent of the company (${entry.description})` : 'an agent of the company';
  return {
    slug,
    instructions: `You are ${who}. Answer the request clearly and briefly. Use the tools offered when they help; an action that needs a person's approval is not performed until it is approved, so say that it waits.`,
    stepLimit: DEFAULT_STEP_LIMIT,
    tools: null,
    approvals: {},
  };
}

/** The default definition of every agent, whatever the workspace. */
export const defaultAgentDefinitions: AgentDefinitions = {
  async get(_workspaceId, slug) {
    return defaultDefinition(slug);
  },
};

/** No connected tools anywhere. */
export const noConnectedTools: ToolSource = {
  async toolsOf() {
    return [];
  },
};
