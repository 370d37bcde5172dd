/**
 * @module The chart of daily consumption this period (GET /usage/daily), by alias and by agent.
 */
import { api, ok } from '../api.ts';
import { StackedBars } from '../chart.tsx';
import { ErrorNote, useLoad } from '../ui.tsx';

export function DailyUsage() {
  const daily = useLoad(() => ok(api.GET('/usage/daily', {})), []);
  const days = daily.data?.days ?? [];
  return (
    <section aria-labelledby="daily-title">
      <h2 id="daily-title">Daily consumption{daily.data ? ` in ${daily.data.period}` : ''} (STU)</h2>
      <ErrorNote error={daily.error} />
      {daily.data ? (
        <div class="charts">
          <StackedBars title="By alias" days={days.map((d) => ({ day: d.date, values: Object.fromEntries(d.byAlias.map((a) => [a.alias, a.stu])) }))} />
          <StackedBars title="By agent" days={days.map((d) => ({ day: d.date, values: Object.fromEntries(d.byAgent.map((a) => [a.agentSlug, a.stu])) }))} />
        </div>
      ) : null}
    </section>
  );
}
