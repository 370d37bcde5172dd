/**
 * @module The current period's consumption day by day (UTC), split by alias and by the agent that
 * answered, from the usage ledger in one query: what the panel's usage chart shows. No money.
 */
import type { Clock } from '../../clock.ts';
import { zModelAlias, type Schema } from '../../contract.ts';
import type { Db } from '../../store/db.ts';
import { periodOf, periodStart, resetAt } from '../usage/index.ts';
import { ledgerByDay } from './queries.ts';

export type DailyUsage = Schema<'DailyUsage'>;

const DAY_MS = 86_400_000;

export async function dailyUsage(db: Db, clock: Clock, workspaceId: string): Promise<DailyUsage> {
  const now = clock.now();
  const period = periodOf(now);
  const start = periodStart(now);
  // One row per (day, alias, agent) with consumption.
  const rows = await ledgerByDay(db, workspaceId, period);
  const days = new Map<string, { stu: number; byAlias: Map<string, number>; byAgent: Map<string, number> }>();
  for (let t = start.getTime(); t <= now.getTime(); t += DAY_MS) {
    days.set(new Date(t).toISOString().slice(0, 10), { stu: 0, byAlias: new Map(), byAgent: new Map() });
  }
  for (const row of rows) {
    const day = days.get(row.day);
    if (!day) continue; // a ledger line dated after `now` (another instance's clock ahead): shown tomorrow
    const { stu } = row;
    day.stu += stu;
    day.byAlias.set(row.alias, (day.byAlias.get(row.alias) ?? 0) + stu);
    day.byAgent.set(row.agent, (day.byAgent.get(row.agent) ?? 0) + stu);
  }
  return {
    period,
    periodStart: start.toISOString(),
    periodEnd: resetAt(now).toISOString(),
    days: [...days].map(([date, d]) => ({
      date,
      stu: d.stu,
      byAlias: largestFirst(d.byAlias).map(([alias, stu]) => ({ alias: zModelAlias.parse(alias), stu })),
      byAgent: largestFirst(d.byAgent).map(([agentSlug, stu]) => ({ agentSlug, stu })),
    })),
  };
}

function largestFirst(totals: Map<string, number>): [string, number][] {
  return [...totals].filter(([, stu]) => stu > 0).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}
