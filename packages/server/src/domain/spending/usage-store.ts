/**
 * @module The usage ledger in the store: one row per workspace and period (the quota's rollover and
 * what was consumed) and one ledger line per charged run. `currentUsage` builds the Usage resource.
 */
import type { Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';
import { planSettingsOf } from '../agents/settings.ts';
import { computeUsage, nextRolloverStu, periodOf, previousPeriod, type Usage } from '../usage/index.ts';

/** A period as the quota reads it; the STU columns are `numeric` (strings) in the row and read cast to numbers. */
interface PeriodUsage {
  period: string;
  rolloverStu: number;
  consumedStu: number;
}

/**
 * The period row of `now`, created on first use with the rollover of the period before it (when
 * that one exists; a workspace's first period has none).
 */
export async function ensurePeriod(db: Db, workspaceId: string, now: Date, quotaStu: number): Promise<PeriodUsage> {
  const period = periodOf(now);
  const existing = await readPeriod(db, workspaceId, period);
  if (existing) return existing;
  const previous = await readPeriod(db, workspaceId, previousPeriod(period));
  // The rollover is capped at one period's quota (every plan's rolloverCapStu is its quota).
  const rolloverStu = previous ? nextRolloverStu({ quotaStu, rolloverStu: previous.rolloverStu, consumedStu: previous.consumedStu, capStu: quotaStu }) : 0;
  await db.query(
    `INSERT INTO usage_periods (workspace_id, period, rollover_stu, consumed_stu, created_at) VALUES ($1, $2, $3, 0, $4)
     ON CONFLICT (workspace_id, period) DO NOTHING`,
    [workspaceId, period, rolloverStu, now],
  );
  // Another request may have created it first: read what is stored, not what was computed here.
  return (await readPeriod(db, workspaceId, period))!;
}

/**
 * The Usage resource of the current period (GET /usage/current, GET /v1/usage): one statement reads
 * the plan and the period; only the first read of a period creates it.
 */
export async function currentUsage(db: Db, clock: Clock, workspaceId: string): Promise<Usage> {
  const now = clock.now();
  const [row] = await db.query<{ plan: string | null; quota_stu: number | null; rollover_stu: number | null; consumed_stu: number | null }>(
    `SELECT p.plan, p.quota_stu::float8 AS quota_stu, u.rollover_stu::float8 AS rollover_stu, u.consumed_stu::float8 AS consumed_stu
       FROM (SELECT $1::text AS workspace_id) w
       LEFT JOIN workspace_plans p ON p.workspace_id = w.workspace_id
       LEFT JOIN usage_periods u ON u.workspace_id = w.workspace_id AND u.period = $2`,
    [workspaceId, periodOf(now)],
  );
  const { quotaStu } = planSettingsOf(row);
  const period =
    row?.rollover_stu != null && row.consumed_stu != null
      ? { rolloverStu: Number(row.rollover_stu), consumedStu: Number(row.consumed_stu) }
      : await ensurePeriod(db, workspaceId, now, quotaStu);
  return computeUsage({ now, quotaStu, rolloverStu: period.rolloverStu, consumedStu: period.consumedStu });
}

async function readPeriod(db: Db, workspaceId: string, period: string): Promise<PeriodUsage | undefined> {
  const [row] = await db.query<{ rollover_stu: number; consumed_stu: number }>(
    `SELECT rollover_stu::float8 AS rollover_stu, consumed_stu::float8 AS consumed_stu
       FROM usage_periods WHERE workspace_id = $1 AND period = $2`,
    [workspaceId, period],
  );
  return row ? { period, rolloverStu: Number(row.rollover_stu), consumedStu: Number(row.consumed_stu) } : undefined;
}
