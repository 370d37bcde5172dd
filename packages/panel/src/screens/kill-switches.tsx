/**
 * @module Kill-switch state, and the manual switch for admins.
 */
export function KillSwitches() {
  return null;
}
