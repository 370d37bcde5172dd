/**
 * @module Overview: the period's usage (consumed against quota plus rollover, the level as a coloured badge,
 * the projection, the reset), the daily consumption chart by alias and by agent, and the kill switches.
 */
import { api, ok } from '../api.ts';
import { Badge, ErrorNote, useLoad, when } from '../ui.tsx';
import { DailyUsage } from './daily-usage.tsx';
import { KillSwitches } from './kill-switches.tsx';

export function OverviewScreen() {
  const usage = useLoad(() => ok(api.GET('/usage/current', {})), []);
  const u = usage.data;
  const allowance = u ? u.quotaStu + u.rolloverStu : 0;
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <ErrorNote error={usage.error} />
      {u ? (
        <div class="card">
          <h2>
            Usage of {u.period} <Badge tone={`level-${u.level}`}>{u.level}</Badge>
          </h2>
          <meter min={0} max={Math.max(allowance, u.consumedStu)} value={u.consumedStu} aria-label="STU consumed of quota plus rollover" />
          <dl class="facts">
            <dt>Consumed</dt>
            <dd>
              {fmt(u.consumedStu)} STU of {fmt(allowance)} ({fmt(u.quotaStu)} quota + {fmt(u.rolloverStu)} rollover) · {u.pctConsumed}%
            </dd>
            <dt>Projected</dt>
            <dd>{fmt(u.projectedStu)} STU by the end of the period</dd>
            <dt>Resets</dt>
            <dd>{when(u.resetAt)}</dd>
          </dl>
        </div>
      ) : null}
      <DailyUsage />
      <KillSwitches />
    </section>
  );
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}
