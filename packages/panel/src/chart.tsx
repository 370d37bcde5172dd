/**
 * @module A small stacked bar chart in plain SVG: one bar per day, one colour per series (alias or agent), a value
 * axis (0, half, top) with its gridlines, each bar's total over it while there is room, and a table of the same
 * figures for screen readers and keyboard users.
 */
import { axisTop, compact } from './axis.ts';

export interface DayBars {
  day: string;
  /** Series name -> STU that day. */
  values: Record<string, number>;
}

const COLOURS = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2', '#65a30d', '#dc2626', '#4b5563', '#ca8a04', '#0d9488'];

/** Room on the left for the axis's values. */
const AXIS = 40;

export function StackedBars({ title, days }: { title: string; days: DayBars[] }) {
  const series = [...new Set(days.flatMap((d) => Object.keys(d.values)))].sort();
  const totals = days.map((d) => Object.values(d.values).reduce((a, b) => a + b, 0));
  const max = axisTop(Math.max(1, ...totals));
  const plot = Math.max(300, days.length * 22);
  const width = AXIS + plot;
  const height = 160;
  const bar = plot / Math.max(1, days.length);
  const colour = (name: string) => COLOURS[series.indexOf(name) % COLOURS.length]!;
  // A bar's total is written over it while there is room for the figures (a fortnight or less).
  const labelled = days.length <= 16;
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${width} ${height + 18}`} role="img" aria-label={`${title}: ${summary(days, totals)}`}>
        <g class="axis">
          {[0, 0.5, 1].map((f) => {
            const y = height - f * (height - 14);
            return (
              <g key={f}>
                <line x1={AXIS} x2={width} y1={y} y2={y} stroke="#d1d5db" stroke-width="1" />
                <text x={AXIS - 4} y={y + 3} text-anchor="end" font-size="10" fill="#374151">
                  {compact(f * max)}
                </text>
              </g>
            );
          })}
        </g>
        {days.map((d, i) => {
          let y = height;
          const x = AXIS + i * bar;
          return (
            <g key={d.day}>
              {series.map((name) => {
                const value = d.values[name] ?? 0;
                if (value === 0) return null;
                const h = (value / max) * (height - 14);
                y -= h;
                return (
                  <rect key={name} x={x + 2} y={y} width={Math.max(2, bar - 4)} height={h} fill={colour(name)}>
                    <title>
                      {d.day} · {name}: {value} STU
                    </title>
                  </rect>
                );
              })}
              {labelled && totals[i]! > 0 ? (
                <text class="bar-total" x={x + bar / 2} y={y - 3} text-anchor="middle" font-size="9" fill="#111827">
                  {compact(totals[i]!)}
                </text>
              ) : null}
              {i % Math.ceil(days.length / 8) === 0 ? (
                <text x={x + bar / 2} y={height + 14} text-anchor="middle" font-size="10" fill="#374151">
                  {d.day.slice(5)}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <ul class="legend">
        {series.map((name) => (
          <li key={name}>
            <span class={`swatch swatch-${series.indexOf(name) % COLOURS.length}`} aria-hidden="true" /> {name}
          </li>
        ))}
      </ul>
      <details>
        <summary>Figures of “{title}”</summary>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Day</th>
                {series.map((s) => (
                  <th scope="col" key={s}>
                    {s}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {days.map((d) => (
                <tr key={d.day}>
                  <th scope="row">{d.day}</th>
                  {series.map((s) => (
                    <td key={s}>{d.values[s] ?? 0}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

function summary(days: DayBars[], totals: number[]): string {
  const sum = totals.reduce((a, b) => a + b, 0);
  return `${sum} STU over ${days.length} days`;
}
