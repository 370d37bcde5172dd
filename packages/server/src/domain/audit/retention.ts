/**
 * @module Retention of the audit log: events older than AUDIT_RETENTION_DAYS are deleted, in batches, at most once a
 * minute from the worker's tick (a backlog drains over several ticks).
 */
import { atMostEvery, type Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';

const BATCH = 5000;
const EVERY_MS = 60_000;

/** Deletes up to `batch` events created before `before`; answers how many. */
export async function deleteAuditEventsBefore(db: Db, before: Date, batch = BATCH): Promise<number> {
  const rows = await db.query(
    `DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE created_at < $1 ORDER BY created_at LIMIT $2) RETURNING id`,
    [before, batch],
  );
  return rows.length;
}

/** A pass over the events past their retention, run at most every minute; answers how many it deleted. */
export function auditRetentionSweeper(deps: { db: Db; clock: Clock; retentionDays: number }): () => Promise<number> {
  return atMostEvery(deps.clock, EVERY_MS, (now) => deleteAuditEventsBefore(deps.db, new Date(now.getTime() - deps.retentionDays * 86_400_000)));
}
