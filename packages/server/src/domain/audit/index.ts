/**
 * @module The workspace's audit log (`GET /audit-events`): every change a person or a credential makes, recorded in
 * the change's own transaction (record.ts), listed with filters (list.ts), deleted past its retention (retention.ts).
 */
import type { Db } from '../../store/db.ts';
import { type AuditFilter, listAuditEvents } from './list.ts';

export {
  type AuditAction,
  type AuditActor,
  type AuditContext,
  type AuditEntry,
  assertNoSecret,
  COMMAND_LINE,
  looksSecret,
  recordAudit,
  recordAuditForUser,
} from './record.ts';
export { auditRetentionSweeper, deleteAuditEventsBefore } from './retention.ts';
export type { AuditFilter };

export type AuditService = ReturnType<typeof createAuditService>;

export function createAuditService(deps: { db: Db }) {
  return {
    list: (workspaceId: string, filter: AuditFilter) => listAuditEvents(deps.db, workspaceId, filter),
  };
}
