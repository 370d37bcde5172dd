/**
 * @module STU rates: how many STU one token costs on each alias, and the STU of a run.
 * Defaults follow the spec's "growing capacity and cost from Prelude to Concerto"; a deployment
 * overrides them with `STU_RATE_<ALIAS>` (positive numbers, fractions allowed).
 */
import { ALIASES, type Alias } from '../../vocabulary/alias.ts';

export type StuRates = Readonly<Record<Alias, number>>;

/** STU per token (input and output alike). */
export const DEFAULT_STU_RATES: StuRates = { Prelude: 1, Sonata: 3, Symphony: 10, Concerto: 12 };

interface RunTokens {
  readonly alias: Alias;
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** STU of a run: tokens × the alias rate, rounded up so fractional rates never bill zero. */
export function stuForRun(run: RunTokens, rates: StuRates = DEFAULT_STU_RATES): number {
  const tokens = Math.max(0, run.inputTokens) + Math.max(0, run.outputTokens);
  return Math.ceil(tokens * rates[run.alias]);
}

/**
 * Reads `STU_RATE_PRELUDE` ... `STU_RATE_CONCERTO`; unset ones keep the default. Throws on a bad value.
 * `loadConfig` (config.ts) calls it once (`ServerConfig.stuRates`).
 */
export function readStuRates(env: Readonly<Record<string, string | undefined>>): StuRates {
  const rates = { ...DEFAULT_STU_RATES };
  for (const alias of ALIASES) {
    const name = `STU_RATE_${alias.toUpperCase()}`;
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
    rates[alias] = value;
  }
  return rates;
}
