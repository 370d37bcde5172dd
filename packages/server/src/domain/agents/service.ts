/**
 * @module The agent service handlers receive: the workspace's active agents (the public list), and the
 * panel's view of every agent with pause and resume (panel.ts, settings.ts) and its configuration
 * (configuration.ts). An unknown slug is
 * `404 agent_not_found`.
 */
import type { Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';
import type { AuditContext } from '../audit/index.ts';
import { activeAgents } from './availability.ts';
import { getAgentConfiguration, updateAgentConfiguration } from './configuration.ts';
import type { AgentConfigurationUpdate } from './definitions.ts';
import { listWorkspaceAgents, pauseWorkspaceAgent, resumeWorkspaceAgent } from './panel.ts';
import { workspaceAgents } from './settings.ts';

export type AgentService = ReturnType<typeof createAgentService>;

export function createAgentService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  return {
    /** The agents the workspace may invoke now: its plan's, minus the paused ones. */
    active: async (workspaceId: string) => activeAgents(await workspaceAgents(db, workspaceId)),
    /** The plan and every agent of the catalog with its state, for the panel. */
    list: (workspaceId: string) => listWorkspaceAgents(db, workspaceId),
    pause: (workspaceId: string, slug: string, reason: string, audit?: AuditContext) => pauseWorkspaceAgent(db, clock, workspaceId, slug, reason, audit),
    resume: (workspaceId: string, slug: string, audit?: AuditContext) => resumeWorkspaceAgent(db, clock, workspaceId, slug, audit),
    /** The agent's instructions, step limit, tools and approval policy (configuration.ts). */
    configuration: (workspaceId: string, slug: string) => getAgentConfiguration(db, workspaceId, slug),
    configure: (workspaceId: string, slug: string, update: AgentConfigurationUpdate, audit?: AuditContext) =>
      updateAgentConfiguration(db, clock, workspaceId, slug, update, audit),
  };
}
