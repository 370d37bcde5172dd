/**
 * @module Approvals: pending requests of agents, approve or reject.
 */
export function ApprovalsScreen() {
  return (
    <section>
      <h1>Approvals</h1>
    </section>
  );
}
