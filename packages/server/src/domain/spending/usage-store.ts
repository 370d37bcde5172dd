/**
 * @module The usage ledger in the store: one row per workspace and period (the quota's rollover and
 * what was consumed) and one ledger line per charged run. `currentUsage` builds the Usage resource
 * (from the usage tally, usage-tally.ts).
 */
import type { Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';
import { computeUsage, periodOf, type Usage } from '../usage/index.ts';
import { ensurePeriodRow, readPeriod as readPeriodTotals } from './queries.ts';
import type { UsageTally } from './usage-tally.ts';

/** A period as the quota reads it; the STU columns are `numeric` (strings) in the row and read cast to numbers. */
interface PeriodUsage {
  period: string;
  rolloverStu: number;
  consumedStu: number;
}

/**
 * The period row of `now`, created on first use with the rollover of the period before it (when
 * that one exists; a workspace's first period has none), by the store's `ensure_usage_period`, the
 * rollover's one home (store/functions/ensure_usage_period.sql), which the money path's statements call too.
 */
export async function ensurePeriod(db: Db, workspaceId: string, now: Date, quotaStu: number): Promise<PeriodUsage> {
  const period = periodOf(now);
  const existing = await readPeriod(db, workspaceId, period);
  if (existing) return existing;
  await ensurePeriodRow(db, workspaceId, now, quotaStu);
  // Another request may have created it first: read what is stored.
  return (await readPeriod(db, workspaceId, period))!;
}

/**
 * The Usage resource of the current period (GET /usage/current, GET /v1/usage): the quota from the
 * agent settings and the period from the usage tally, both in memory while they are known current;
 * otherwise one statement reads the period, and only the first read of a period creates it.
 */
export async function currentUsage(
  db: Db,
  clock: Clock,
  deps: { settings: (workspaceId: string) => Promise<{ quotaStu: number }>; tally: UsageTally },
  workspaceId: string,
): Promise<Usage> {
  const now = clock.now();
  const { quotaStu } = await deps.settings(workspaceId);
  const period = periodOf(now);
  const tally = await deps.tally.read(workspaceId, period, async () => {
    const stored = await readPeriodTotals(db, workspaceId, period);
    if (stored) return { period, ...stored };
    await ensurePeriod(db, workspaceId, now, quotaStu);
    return { period, ...(await readPeriodTotals(db, workspaceId, period))! };
  });
  return computeUsage({ now, quotaStu, rolloverStu: tally.rolloverStu, consumedStu: tally.consumedStu });
}

async function readPeriod(db: Db, workspaceId: string, period: string): Promise<PeriodUsage | undefined> {
  const totals = await readPeriodTotals(db, workspaceId, period);
  return totals ? { period, ...totals } : undefined;
}
