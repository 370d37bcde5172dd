/**
 * @module Interleaved rounds: each round runs the load on every side of a comparison (the server, and
 * what it is compared with), in an order that rotates from one round to the next, so that a machine
 * whose load drifts during the run weighs on every side alike. Figures are the medians of the rounds.
 */
import { type LoadResult, type LoadSpec, runLoad } from './load.ts';
import { median } from './stats.ts';

export interface Side {
  /** `service`, `bare Hono GET`, `Portkey`, `upstream` … */
  label: string;
  spec: LoadSpec;
}

export interface Measured {
  label: string;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  rounds: LoadResult[];
}

/** `rounds` rounds over `sides` (the first is the one measured, the rest its comparisons); `onRound` after each. */
export async function measureRounds(sides: readonly Side[], rounds: number, onRound: (round: number, results: Measured[]) => void): Promise<Measured[]> {
  const runs: LoadResult[][] = sides.map(() => []);
  const summary = (): Measured[] =>
    sides.map((side, i) => {
      const done = runs[i]!;
      return {
        label: side.label,
        rps: median(done.map((x) => x.rps)),
        p50Ms: median(done.map((x) => x.p50Ms)),
        p99Ms: median(done.map((x) => x.p99Ms)),
        non2xx: done.reduce((n, x) => n + x.non2xx, 0),
        errors: done.reduce((n, x) => n + x.errors, 0),
        rounds: done,
      };
    });
  for (let r = 0; r < rounds; r += 1) {
    for (let k = 0; k < sides.length; k += 1) {
      const i = (k + r) % sides.length;
      runs[i]!.push(await runLoad(sides[i]!.spec));
    }
    onRound(
      r,
      summary().map((m) => ({ ...m, ...last(m.rounds) })),
    );
  }
  return summary();
}

/** A round's own figures, for the progress line. */
function last(rounds: LoadResult[]): Pick<Measured, 'rps' | 'p50Ms' | 'p99Ms' | 'non2xx' | 'errors'> {
  const x = rounds.at(-1)!;
  return { rps: x.rps, p50Ms: x.p50Ms, p99Ms: x.p99Ms, non2xx: x.non2xx, errors: x.errors };
}
