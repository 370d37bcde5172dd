/**
 * @module What a session cookie proves: the live session, the user's role in its workspace, and the workspace's
 * standing and ceilings (middleware/auth reads it on every cookie-authenticated request).
 */
import type { Clock } from '../../clock.ts';
import { sha256Hex } from '../../crypto.ts';
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import { bool, columnsOf, row, selectRow, text } from '../../store/rows.ts';
import { STANDING_COLUMNS, standingColumns, standingOf, type WorkspaceStanding } from '../standing/index.ts';
import { ssoAdmits } from './sso-rule.ts';
import { type Role, roleColumn } from './users.ts';

/** What a session cookie proves. */
export interface AdminSession {
  sessionId: string;
  userId: string;
  workspaceId: string;
  role: Role;
  /** Two-step verification active, or the session opened by the workspace's identity provider. */
  totpEnabled: boolean;
  csrfHash: string;
  /** The workspace's requests-per-minute ceiling: its sessions share the counter with its keys. */
  rpmLimit: number;
  /** The workspace's raised per-address ceiling (null: the default per-IP limit). */
  ipRpmLimit: number | null;
  /** The workspace's standing: a session reads whatever it is, but writes only in good standing (middleware/auth). */
  standing: WorkspaceStanding;
}

/** The live session of a cookie, its user's role in its workspace, and the workspace's standing. */
const sessionRow = row({
  ...columnsOf('sessions', { id: text, user_id: text, csrf_hash: text, workspace_id: text }),
  ...columnsOf('memberships', { role: roleColumn }),
  ...columnsOf('users', { totp_enabled: bool }),
  ...standingColumns,
});

/** @throws not_authenticated when the cookie names no live session */
export async function authenticate(deps: { db: Db; clock: Clock }, sessionToken: string | undefined): Promise<AdminSession> {
  if (!sessionToken) throw fail('not_authenticated', 'Sign in first.');
  const found = await selectRow(
    deps.db,
    sessionRow,
    // The role is the user's in the session's workspace; a removed member's sessions there are gone. A session that
    // single sign-on no longer admits there (sso-rule.ts) is refused from its next request. The identity provider's
    // sign-in stands for the two-step verification that admin rights need.
    `SELECT s.id, s.user_id, s.csrf_hash, s.workspace_id, m.role,
            (u.totp_enabled OR s.sso_workspace_id IS NOT NULL) AS totp_enabled, ${STANDING_COLUMNS}
     FROM sessions s JOIN users u ON u.id = s.user_id
       JOIN memberships m ON m.user_id = s.user_id AND m.workspace_id = s.workspace_id
       JOIN workspaces w ON w.id = s.workspace_id
     WHERE s.token_hash = $1 AND s.expires_at > $2
       AND ${ssoAdmits({ ssoWorkspace: 's.sso_workspace_id', workspace: 's.workspace_id', role: 'm.role' })}`,
    [sha256Hex(sessionToken), deps.clock.now()],
  );
  if (!found) throw fail('not_authenticated', 'The session is unknown or has expired; sign in again.');
  return {
    sessionId: found.id,
    userId: found.user_id,
    workspaceId: found.workspace_id,
    role: found.role,
    totpEnabled: found.totp_enabled,
    csrfHash: found.csrf_hash,
    rpmLimit: standingOf(found).rpmLimit,
    ipRpmLimit: standingOf(found).ipRpmLimit,
    standing: standingOf(found),
  };
}
