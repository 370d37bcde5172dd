/**
 * @module The value axis of the panel's charts: where it tops out, and how its figures are written.
 */

/** The axis's top: the smallest 1, 2 or 5 × 10ⁿ at or above the largest day. */
export function axisTop(max: number): number {
  const power = 10 ** Math.floor(Math.log10(Math.max(1, max)));
  return [1, 2, 5, 10].map((m) => m * power).find((top) => top >= max) ?? 10 * power;
}

/** "0", "500", "12k", "1.5M". */
export function compact(n: number): string {
  if (n >= 1_000_000) return `${+(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1_000) return `${+(n / 1_000).toFixed(1)}k`;
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}
