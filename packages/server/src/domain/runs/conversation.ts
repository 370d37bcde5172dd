/**
 * @module Conversation threads: the turns of a `conversationId` within a workspace. A new
 * invocation is given the earlier turns before its own messages; a completed run appends its
 * messages and its (redacted) answer.
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

export async function appendTurns(
  tx: Db,
  input: { workspaceId: string; conversationId: string; runId: string; now: Date; turns: readonly EngineMessage[] },
): Promise<void> {
  // Serialises appends to one thread, so two runs of the same conversation cannot take the same seq.
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1 || ':' || $2))`, [input.workspaceId, input.conversationId]);
  // max() of no rows is NULL.
  const [last] = await tx.query<{ seq: TableRow<'conversation_turns'>['seq'] | null }>(
    `SELECT max(seq) AS seq FROM conversation_turns WHERE workspace_id = $1 AND conversation_id = $2`,
    [input.workspaceId, input.conversationId],
  );
  let seq = (last?.seq ?? -1) + 1;
  for (const turn of input.turns) {
    await tx.query(
      `INSERT INTO conversation_turns (workspace_id, conversation_id, seq, role, content, run_id, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [input.workspaceId, input.conversationId, seq++, turn.role, turn.content, input.runId, input.now],
    );
  }
}
