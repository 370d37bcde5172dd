/**
 * @module Spending settings (owners and admins): the kill switches' state, and the manual switch that stops all of
 * the workspace's spending, behind a confirmation that names the consequence.
 */
import { KillSwitches } from './kill-switches.tsx';

export function SpendingScreen() {
  return (
    <section aria-labelledby="spending-title">
      <h1 id="spending-title">Spending settings</h1>
      <p class="muted">
        The hourly, daily and per-run limits trip by themselves when spending reaches them. The manual switch stops everything at once, for an incident or a
        drill.
      </p>
      <KillSwitches manage />
    </section>
  );
}
