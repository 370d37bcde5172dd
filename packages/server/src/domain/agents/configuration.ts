/**
 * @module An agent's configuration as the panel reads and changes it (GET and PUT
 * /agents/{slug}/configuration): any member reads it, an admin replaces it, and the audit log records
 * each change (`agent.configured`) in its transaction. An unknown slug is `404 agent_not_found`.
 */
import type { Clock } from '../../clock.ts';
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import { getAgent, type AgentSlug } from '../../vocabulary/catalog.ts';
import { type AuditContext, recordAudit } from '../audit/index.ts';
import { type AgentConfiguration, type AgentConfigurationUpdate, checkUpdate, definitionsChanged, readConfiguration, writeDefinition } from './definitions.ts';

export function getAgentConfiguration(db: Db, workspaceId: string, slug: string): Promise<AgentConfiguration> {
  return readConfiguration(db, workspaceId, known(slug));
}

/** Replaces the agent's configuration; answers it as it now is. */
export async function updateAgentConfiguration(
  db: Db,
  clock: Clock,
  workspaceId: string,
  slug: string,
  update: AgentConfigurationUpdate,
  audit?: AuditContext,
): Promise<AgentConfiguration> {
  const agent = known(slug);
  checkUpdate(update);
  const configuration = await db.transaction(async (tx) => {
    const before = await readConfiguration(tx, workspaceId, agent);
    const now = clock.now();
    await writeDefinition(tx, workspaceId, agent, update, now);
    await recordAudit(
      tx,
      audit,
      workspaceId,
      { action: 'agent.configured', target: { type: 'agent', id: agent, label: getAgent(agent)!.name }, details: auditDetails(before, update) },
      now,
    );
    return readConfiguration(tx, workspaceId, agent);
  });
  definitionsChanged();
  return configuration;
}

/**
 * What the audit log keeps of a change: which parts changed and the new step limit, tool selection and
 * policy size; never the instructions' text (written by people, it may hold anything).
 */
function auditDetails(before: AgentConfiguration, update: AgentConfigurationUpdate): Record<string, unknown> {
  const instructions = update.instructions ?? null;
  const changed = [
    ...((before.customInstructions ? before.instructions : null) !== instructions ? ['instructions'] : []),
    ...(before.stepLimit !== update.stepLimit ? ['stepLimit'] : []),
    ...(JSON.stringify(before.tools) !== JSON.stringify(update.tools) ? ['tools'] : []),
    ...(JSON.stringify(sorted(before.approvals)) !== JSON.stringify(sorted(update.approvals)) ? ['approvals'] : []),
  ];
  return {
    changed,
    customInstructions: instructions !== null,
    stepLimit: update.stepLimit,
    tools: update.tools === null ? 'all' : update.tools.length,
    approvals: Object.keys(update.approvals).length,
  };
}

function sorted(record: Readonly<Record<string, string>>): [string, string][] {
  return Object.entries(record).sort(([a], [b]) => a.localeCompare(b));
}

function known(slug: string): AgentSlug {
  const agent = getAgent(slug);
  if (!agent) throw fail('agent_not_found', `No agent '${slug}' in the catalog.`);
  return agent.slug;
}
