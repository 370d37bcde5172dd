/**
 * @module Switching a session's workspace (`POST /auth/workspace`): the session acts on another workspace of the
 * user's, with the user's role there.
 */
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import { type Role, type UserWorkspace, userWorkspaces } from './users.ts';

/** @throws tenant_forbidden when the user is not a member of it (the session stays as it was) */
export async function selectWorkspace(
  db: Db,
  session: { sessionId: string; userId: string },
  workspaceId: string,
): Promise<{ workspaceId: string; role: Role; workspaces: UserWorkspace[] }> {
  const workspaces = await userWorkspaces(db, session.userId);
  const chosen = workspaces.find((w) => w.id === workspaceId);
  if (!chosen) throw fail('tenant_forbidden', 'You are not a member of this workspace.');
  await db.query(`UPDATE sessions SET workspace_id = $2 WHERE id = $1`, [session.sessionId, workspaceId]);
  return { workspaceId, role: chosen.role, workspaces };
}
