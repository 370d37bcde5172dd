/**
 * @module The agents as the panel shows and switches them: every agent of the catalog with its alias,
 * whether the workspace's plan includes it, and whether it is paused (reason, since when). Pausing
 * and resuming are the same functions the CLI uses (settings.ts); an unknown slug is
 * `404 agent_not_found`.
 */
import type { Clock } from '../../clock.ts';
import { fail } from '../../errors.ts';
import type { Db, Tx } from '../../store/db.ts';
import { date, selectRows, tableRow, text } from '../../store/rows.ts';
import { AGENT_CATALOG, getAgent, type AgentEntry } from '../../vocabulary/catalog.ts';
import { isAgentInPlan, type PlanName } from '../../vocabulary/plans.ts';
import { getPlan, pauseAgent, resumeAgent } from './settings.ts';
import { settingsChanged } from './settings-version.ts';
import { type AuditContext, recordAudit } from '../audit/index.ts';

interface WorkspaceAgent {
  slug: string;
  name: string;
  kind: 'orchestrator' | 'department';
  description: string;
  alias: AgentEntry['defaultAlias'];
  state: 'active' | 'paused' | 'not_in_plan';
  pausedReason: string | null;
  pausedAt: string | null;
}

const pausedRow = tableRow('paused_agents', { agent_slug: text, reason: text, paused_at: date });
type Paused = ReturnType<typeof pausedRow>;

/** The plan and every agent of the catalog, orchestrator first (the catalog's order). */
export async function listWorkspaceAgents(db: Db, workspaceId: string): Promise<{ plan: PlanName; data: WorkspaceAgent[] }> {
  const [plan, paused] = await Promise.all([getPlan(db, workspaceId), pausedRows(db, workspaceId)]);
  return { plan, data: AGENT_CATALOG.map((agent) => toWorkspaceAgent(agent, plan, paused.get(agent.slug))) };
}

/** Pauses the agent with the reason (a paused one gets the new reason). */
export async function pauseWorkspaceAgent(
  db: Db,
  clock: Clock,
  workspaceId: string,
  slug: string,
  reason: string,
  audit?: AuditContext,
): Promise<WorkspaceAgent> {
  known(slug);
  await db.transaction((tx) => pauseAgentAudited(tx, clock, workspaceId, slug, reason, audit));
  // Once more after the commit: a read cached meanwhile saw the settings before it.
  settingsChanged();
  return workspaceAgent(db, workspaceId, slug);
}

/** Resumes the agent; one that was not paused is answered as it is. */
export async function resumeWorkspaceAgent(db: Db, clock: Clock, workspaceId: string, slug: string, audit?: AuditContext): Promise<WorkspaceAgent> {
  known(slug);
  await db.transaction((tx) => resumeAgentAudited(tx, clock, workspaceId, slug, audit));
  settingsChanged();
  return workspaceAgent(db, workspaceId, slug);
}

/** Pauses the agent and records who did, in the caller's transaction (the panel's route, the command line). */
export async function pauseAgentAudited(
  tx: Tx,
  clock: Clock,
  workspaceId: string,
  slug: string,
  reason: string,
  audit: AuditContext | undefined,
): Promise<void> {
  await pauseAgent(tx, clock, workspaceId, slug, reason);
  await recordAudit(tx, audit, workspaceId, { action: 'agent.paused', target: agentTarget(slug), details: { reason: reason.trim() } }, clock.now());
}

/** Resumes the agent and records who did, in the caller's transaction; whether it was paused. */
export async function resumeAgentAudited(tx: Tx, clock: Clock, workspaceId: string, slug: string, audit: AuditContext | undefined): Promise<boolean> {
  const wasPaused = await resumeAgent(tx, workspaceId, slug);
  await recordAudit(tx, audit, workspaceId, { action: 'agent.resumed', target: agentTarget(slug), details: { wasPaused } }, clock.now());
  return wasPaused;
}

function agentTarget(slug: string) {
  return { type: 'agent' as const, id: slug, label: getAgent(slug)?.name ?? slug };
}

async function workspaceAgent(db: Db, workspaceId: string, slug: string): Promise<WorkspaceAgent> {
  const { data } = await listWorkspaceAgents(db, workspaceId);
  return data.find((a) => a.slug === slug)!;
}

function known(slug: string): void {
  if (!getAgent(slug)) throw fail('agent_not_found', `No agent '${slug}' in the catalog.`);
}

async function pausedRows(db: Db, workspaceId: string): Promise<Map<string, Paused>> {
  const rows = await selectRows(db, pausedRow, `SELECT agent_slug, reason, paused_at FROM paused_agents WHERE workspace_id = $1`, [workspaceId]);
  return new Map(rows.map((r) => [r.agent_slug, r]));
}

function toWorkspaceAgent(agent: AgentEntry, plan: PlanName, paused: Paused | undefined): WorkspaceAgent {
  const state = !isAgentInPlan(plan, agent.slug) ? 'not_in_plan' : paused ? 'paused' : 'active';
  return {
    slug: agent.slug,
    name: agent.name,
    kind: agent.kind,
    description: agent.description,
    alias: agent.defaultAlias,
    state,
    pausedReason: paused?.reason ?? null,
    pausedAt: paused ? paused.paused_at.toISOString() : null,
  };
}
