/**
 * @module Switching a session's workspace (`POST /auth/workspace`): the session acts on another workspace of the
 * user's, with the user's role there.
 */
import { sessionWorkspaces, ssoAdmits } from './sso-rule.ts';
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import { type Role, type UserWorkspace, userWorkspaces } from './users.ts';

/** @throws tenant_forbidden when the user is not a member of it (the session stays as it was) */
export async function selectWorkspace(
  db: Db,
  session: { sessionId: string; userId: string },
  workspaceId: string,
): Promise<{ workspaceId: string; role: Role; workspaces: UserWorkspace[] }> {
  const [signedBy] = await db.query<{ sso_workspace_id: string | null }>(`SELECT sso_workspace_id FROM sessions WHERE id = $1`, [session.sessionId]);
  const ssoWorkspaceId = signedBy?.sso_workspace_id ?? null;
  const workspaces = sessionWorkspaces(await userWorkspaces(db, session.userId), ssoWorkspaceId);
  const chosen = workspaces.find((w) => w.id === workspaceId);
  if (!chosen) {
    throw fail(
      'tenant_forbidden',
      ssoWorkspaceId === null ? 'You are not a member of this workspace.' : 'This session was opened by single sign-on for another workspace; sign in there.',
    );
  }
  const admitted = await db.query(
    `SELECT 1 FROM sessions s JOIN memberships m ON m.user_id = s.user_id AND m.workspace_id = $2
      WHERE s.id = $1 AND ${ssoAdmits({ ssoWorkspace: 's.sso_workspace_id', workspace: 'm.workspace_id', role: 'm.role' })}`,
    [session.sessionId, workspaceId],
  );
  if (admitted.length === 0) throw fail('tenant_forbidden', 'This workspace requires single sign-on: sign in with SSO.');
  await db.query(`UPDATE sessions SET workspace_id = $2 WHERE id = $1`, [session.sessionId, workspaceId]);
  return { workspaceId, role: chosen.role, workspaces };
}
