/**
 * @module The chart of daily consumption this period, by alias and by agent.
 */
export function DailyUsage() {
  return null;
}
