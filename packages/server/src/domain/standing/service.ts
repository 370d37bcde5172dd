/**
 * @module The standing service handlers receive: a workspace's standing read by its id, for a caller whose
 * credential does not carry it (a session that starts a run from the panel; index.ts).
 */
import type { Db } from '../../store/db.ts';
import { loadStanding, requireGoodStanding } from './index.ts';

export type StandingService = ReturnType<typeof createStandingService>;

export function createStandingService(deps: { db: Db }) {
  const { db } = deps;
  return {
    /** @throws tenant_forbidden when suspended, payment_not_completed when unpaid, not_authenticated when gone */
    requireGood: async (workspaceId: string): Promise<void> => requireGoodStanding(await loadStanding(db, workspaceId)),
  };
}
