/**
 * @module Logout (`POST /auth/logout`): the session ends at once, audited in the same transaction.
 */
import type { Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';
import { type AuditContext, recordAudit } from '../audit/index.ts';

export async function logout(deps: { db: Db; clock: Clock }, session: { sessionId: string; workspaceId: string }, audit?: AuditContext): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await tx.query(`DELETE FROM sessions WHERE id = $1`, [session.sessionId]);
    await recordAudit(
      tx,
      audit,
      session.workspaceId,
      { action: 'session.signed_out', target: { type: 'session', id: session.sessionId, label: null } },
      deps.clock.now(),
    );
  });
}
