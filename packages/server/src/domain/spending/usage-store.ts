/**
 * @module The usage ledger in the store: one row per workspace and period (the quota's rollover and
 * what was consumed) and one ledger line per charged run. `currentUsage` builds the Usage resource.
 */
import type { Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';
import { computeUsage, nextRolloverStu, periodOf, previousPeriod, type Usage } from '../usage/index.ts';
import { insertPeriod, readPeriod as readPeriodTotals, readPlanAndPeriod } from './queries.ts';

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
  await insertPeriod(db, workspaceId, period, rolloverStu, now);
  // Another request may have created it first: read what is stored, not what was computed here.
  return (await readPeriod(db, workspaceId, period))!;
}

/**
 * The Usage resource of the current period (GET /usage/current, GET /v1/usage): one statement reads
 * the plan and the period; only the first read of a period creates it.
 */
export async function currentUsage(db: Db, clock: Clock, workspaceId: string): Promise<Usage> {
  const now = clock.now();
  const row = await readPlanAndPeriod(db, workspaceId, periodOf(now));
  const { quotaStu } = row.plan;
  const period = row.period ?? (await ensurePeriod(db, workspaceId, now, quotaStu));
  return computeUsage({ now, quotaStu, rolloverStu: period.rolloverStu, consumedStu: period.consumedStu });
}

async function readPeriod(db: Db, workspaceId: string, period: string): Promise<PeriodUsage | undefined> {
  const totals = await readPeriodTotals(db, workspaceId, period);
  return totals ? { period, ...totals } : undefined;
}
