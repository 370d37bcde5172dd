/**
 * @module A conversation's recent turns (`conversation_turns`).
 * One typed function per statement (the policy files of domain/runs call these and hold no SQL).
 */
import type { TableRow } from '../../../../../../generated/db.ts';
import type { Db, Tx } from '../../../store/db.ts';

/** The `limit` most recent turns of a conversation, oldest first. */
export async function recentTurns(
  db: Db | Tx,
  workspaceId: string,
  conversationId: string,
  limit: number,
): Promise<{ role: string; content: string; seq: number }[]> {
  return db.query<Pick<TableRow<'conversation_turns'>, 'role' | 'content' | 'seq'>>(
    `SELECT role, content, seq FROM (
       SELECT role, content, seq FROM conversation_turns
        WHERE workspace_id = $1 AND conversation_id = $2 ORDER BY seq DESC LIMIT $3
     ) recent ORDER BY seq`,
    [workspaceId, conversationId, limit],
  );
}
