/**
 * @module Small statistics for the benchmark: percentiles of samples and the median of rounds.
 */

/** The q-quantile (0..1) of the samples, nearest rank; NaN when there are none. */
export function percentile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

/** A figure for the table: fixed decimals, or a dash when it was not measured. */
export function fmt(value: number | undefined, decimals = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}
