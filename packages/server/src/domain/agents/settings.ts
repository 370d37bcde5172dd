/**
 * @module The workspace's agent settings in the store: its plan and its paused agents. Read at
 * every invocation (availability, router candidates; through settings-cache.ts) and changed by the
 * operator's CLI and the panel. Every change notifies `AGENT_SETTINGS_CHANNEL` with the workspace's
 * id in the statement that makes it, and tells this process's caches at once (`settingsChanged`).
 */
import type { Clock } from '../../clock.ts';
import type { Db, Tx } from '../../store/db.ts';
import { float, nullable, row, selectRow, selectRows, tableRow, text } from '../../store/rows.ts';
import type { WorkspaceAgents } from './availability.ts';
import { getAgent } from '../../vocabulary/catalog.ts';
import { isPlanName, PLANS, type PlanName } from '../../vocabulary/plans.ts';
import { notifySql } from '../../store/listen.ts';
import { settingsChanged } from './settings-version.ts';

/** Notified with a workspace's id whenever its plan, quota or paused agents change (any instance). */
export const AGENT_SETTINGS_CHANNEL = 'service_agent_settings';
/** Appended to a statement that writes the settings of `$1`'s workspace: tells every instance. */
const NOTIFY = `SELECT ${notifySql(AGENT_SETTINGS_CHANNEL, 'changed.workspace_id')} FROM changed`;

/**
 * The plan of a workspace that never chose one: every agent, the three standard aliases, and a
 * quota large enough to try the service (documented in docs/server.md).
 */
const DEFAULT_PLAN: PlanName = 'growth';

export async function getPlan(db: Db, workspaceId: string): Promise<PlanName> {
  return (await getPlanSettings(db, workspaceId)).plan;
}

/** The plan and the quota in force: the operator's override, or the plan's. */
interface PlanSettings {
  plan: PlanName;
  quotaStu: number;
  quotaOverride: number | null;
}

export async function getPlanSettings(db: Db | Tx, workspaceId: string): Promise<PlanSettings> {
  const found = await selectRow(db, planRow, `SELECT plan, quota_stu::float8 AS quota_stu FROM workspace_plans WHERE workspace_id = $1`, [workspaceId]);
  return planSettingsOf(found);
}

/** A workspace's plan and quota override (`numeric`, read as float8). */
const planRow = row({ plan: text, quota_stu: nullable(float) });

/** The settings a `workspace_plans` row (plan, quota_stu as float8) stands for; none: the defaults. */
export function planSettingsOf(row: { plan: string | null; quota_stu: number | null } | undefined): PlanSettings {
  const plan = row?.plan && isPlanName(row.plan) ? row.plan : DEFAULT_PLAN;
  const quotaOverride = row?.quota_stu == null ? null : Number(row.quota_stu);
  return { plan, quotaStu: quotaOverride ?? PLANS[plan].quotaStu, quotaOverride };
}

/** The operator's quota override in STU per period; null returns to the plan's quota. */
export async function setQuotaOverride(db: Db | Tx, clock: Clock, workspaceId: string, quotaStu: number | null): Promise<void> {
  await db.query(
    `WITH changed AS (
       INSERT INTO workspace_plans (workspace_id, plan, quota_stu, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (workspace_id) DO UPDATE SET quota_stu = EXCLUDED.quota_stu, updated_at = EXCLUDED.updated_at RETURNING workspace_id
     ) ${NOTIFY}`,
    [workspaceId, DEFAULT_PLAN, quotaStu, clock.now()],
  );
  settingsChanged();
}

export async function setPlan(db: Db | Tx, clock: Clock, workspaceId: string, plan: PlanName): Promise<void> {
  await db.query(
    `WITH changed AS (
       INSERT INTO workspace_plans (workspace_id, plan, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (workspace_id) DO UPDATE SET plan = EXCLUDED.plan, updated_at = EXCLUDED.updated_at RETURNING workspace_id
     ) ${NOTIFY}`,
    [workspaceId, plan, clock.now()],
  );
  settingsChanged();
}

export async function pausedAgents(db: Db, workspaceId: string): Promise<Map<string, string>> {
  const rows = await selectRows(
    db,
    tableRow('paused_agents', { agent_slug: text, reason: text }),
    `SELECT agent_slug, reason FROM paused_agents WHERE workspace_id = $1`,
    [workspaceId],
  );
  return new Map(rows.map((r) => [r.agent_slug, r.reason]));
}

/** The plan and paused agents together, in one statement: what availability and the router need (every invocation). */
export async function workspaceAgents(db: Db, workspaceId: string): Promise<WorkspaceAgents & { quotaStu: number }> {
  const [row] = await db.query<{ plan: string | null; quota_stu: number | null; paused: [string, string][] | string }>(
    `SELECT p.plan, p.quota_stu::float8 AS quota_stu,
            (SELECT COALESCE(json_agg(json_build_array(a.agent_slug, a.reason)), '[]'::json) FROM paused_agents a WHERE a.workspace_id = w.id) AS paused
       FROM (SELECT $1::text AS id) w LEFT JOIN workspace_plans p ON p.workspace_id = w.id`,
    [workspaceId],
  );
  const settings = planSettingsOf(row);
  // Both drivers parse json; a string is parsed here should one not.
  const paused: [string, string][] = typeof row?.paused === 'string' ? JSON.parse(row.paused) : (row?.paused ?? []);
  return { plan: settings.plan, quotaStu: settings.quotaStu, paused: new Map(paused) };
}

/** Pauses an agent (or changes the reason of a paused one). @throws Error for a slug that is not an agent */
export async function pauseAgent(db: Db | Tx, clock: Clock, workspaceId: string, slug: string, reason: string): Promise<void> {
  if (!getAgent(slug)) throw new Error(`not an agent: ${slug}`);
  if (reason.trim() === '') throw new Error('a pause needs a reason');
  await db.query(
    `WITH changed AS (
       INSERT INTO paused_agents (workspace_id, agent_slug, reason, paused_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (workspace_id, agent_slug) DO UPDATE SET reason = EXCLUDED.reason, paused_at = EXCLUDED.paused_at RETURNING workspace_id
     ) ${NOTIFY}`,
    [workspaceId, slug, reason.trim(), clock.now()],
  );
  settingsChanged();
}

/** Resumes an agent; returns whether it was paused. */
export async function resumeAgent(db: Db | Tx, workspaceId: string, slug: string): Promise<boolean> {
  const rows = await db.query(`WITH changed AS (DELETE FROM paused_agents WHERE workspace_id = $1 AND agent_slug = $2 RETURNING workspace_id) ${NOTIFY}`, [
    workspaceId,
    slug,
  ]);
  settingsChanged();
  return rows.length > 0;
}
