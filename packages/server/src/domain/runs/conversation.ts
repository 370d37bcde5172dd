/**
 * @module Conversation threads: the turns of a `conversationId` within a workspace. A new
 * invocation is given the earlier turns before its own messages; a completed run appends its
 * messages and its (redacted) answer (in its closing statement, `finish_run`: see close.ts).
 */
import { zMessage } from '../../contract.ts';
import type { Db } from '../../store/db.ts';
import type { TableRow } from '../../../../../generated/db.ts';
import type { EngineMessage } from '../../engine/index.ts';

/** Bounded history: the most recent turns only, so a long thread cannot grow a request without end. */
const MAX_EARLIER_TURNS = 50;

export async function earlierTurns(db: Db, workspaceId: string, conversationId: string): Promise<EngineMessage[]> {
  const rows = await db.query<Pick<TableRow<'conversation_turns'>, 'role' | 'content'>>(
    `SELECT role, content FROM (
       SELECT role, content, seq FROM conversation_turns
        WHERE workspace_id = $1 AND conversation_id = $2 ORDER BY seq DESC LIMIT $3
     ) recent ORDER BY seq`,
    [workspaceId, conversationId, MAX_EARLIER_TURNS],
  );
  return rows.map((r) => ({ role: zMessage.shape.role.parse(r.role), content: r.content }));
}
