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
  /** CPU seconds used so far by what this side measures: given, each round's CPU per request is kept too. */
  cpuSeconds?: () => number | undefined;
  /** CPU seconds of the database's processes so far (part of `cpuSeconds`): given, its share per request is kept. */
  databaseCpuSeconds?: () => number | undefined;
  /** Write transactions begun so far in the database (processes.ts `databaseWriteTransactions`): given, their number per request is kept. */
  databaseWrites?: () => Promise<number | undefined>;
  /**
   * What changes in `spec` for round `r` (0-based), asked before that round: a new workspace's key per round, so that
   * no round runs into the hour's kill switch that the rounds before it spent.
   */
  forRound?: (round: number) => Partial<LoadSpec>;
}

export interface Measured {
  label: string;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  rounds: LoadResult[];
  /** Median over the rounds of the CPU milliseconds per request, when the side gives `cpuSeconds`. */
  cpuMsPerRequest?: number;
  /** The same for the database's processes alone, when the side gives `databaseCpuSeconds`. */
  databaseCpuMsPerRequest?: number;
  /** Median over the rounds of the database's write transactions per request, when the side gives `databaseWrites`. */
  databaseWritesPerRequest?: number;
}

/** `rounds` rounds over `sides` (the first is the one measured, the rest its comparisons); `onRound` after each. */
export async function measureRounds(sides: readonly Side[], rounds: number, onRound: (round: number, results: Measured[]) => void): Promise<Measured[]> {
  const runs: LoadResult[][] = sides.map(() => []);
  const cpu: number[][] = sides.map(() => []);
  const databaseCpu: number[][] = sides.map(() => []);
  const databaseWrites: number[][] = sides.map(() => []);
  const summary = (): Measured[] =>
    sides.map((side, i) => {
      const done = runs[i]!;
      return {
        ...(cpu[i]!.length > 0 ? { cpuMsPerRequest: median(cpu[i]!) } : {}),
        ...(databaseCpu[i]!.length > 0 ? { databaseCpuMsPerRequest: median(databaseCpu[i]!) } : {}),
        ...(databaseWrites[i]!.length > 0 ? { databaseWritesPerRequest: median(databaseWrites[i]!) } : {}),
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
      const side = sides[i]!;
      const spec = side.forRound ? { ...side.spec, ...side.forRound(r) } : side.spec;
      // The transaction id is read on a connection of its own, outside the CPU readings.
      const writesBefore = await side.databaseWrites?.();
      const before = side.cpuSeconds?.();
      const databaseBefore = side.databaseCpuSeconds?.();
      const result = await runLoad(spec);
      const after = side.cpuSeconds?.();
      const databaseAfter = side.databaseCpuSeconds?.();
      const writesAfter = await side.databaseWrites?.();
      runs[i]!.push(result);
      if (before !== undefined && after !== undefined && result.requests > 0) cpu[i]!.push(((after - before) * 1000) / result.requests);
      if (databaseBefore !== undefined && databaseAfter !== undefined && result.requests > 0) {
        databaseCpu[i]!.push(((databaseAfter - databaseBefore) * 1000) / result.requests);
      }
      if (writesBefore !== undefined && writesAfter !== undefined && result.requests > 0)
        databaseWrites[i]!.push((writesAfter - writesBefore) / result.requests);
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
