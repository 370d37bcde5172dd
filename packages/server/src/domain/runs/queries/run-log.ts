/**
 * @module A run with what its execution stored of its event log (the log's own statements are run-events/queries.ts's).
 * One typed function per statement (the policy files of domain/runs call these and hold no SQL).
 */
import type { Db } from '../../../store/db.ts';
import { decodeRun, type RunRow, type RunRecord } from './run-row.ts';

/** The run and what its execution stored of its event log (null: nothing stored, yet or ever); the log's own statements are run-events/queries.ts's. */
export async function readRunLog(
  db: Db,
  workspaceId: string,
  runId: string,
): Promise<{ record: RunRecord; stored: unknown[] | null; lastSequence: number | null } | undefined> {
  const [row] = await db.query<RunRow & { log_events: unknown[] | null; log_last: number | null }>(
    `SELECT r.*, e.events AS log_events, e.last_sequence AS log_last FROM runs r LEFT JOIN run_events e ON e.run_id = r.id
      WHERE r.id = $1 AND r.workspace_id = $2`,
    [runId, workspaceId],
  );
  return row && { record: decodeRun(row), stored: row.log_events, lastSequence: row.log_last };
}
