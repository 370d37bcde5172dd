/**
 * @module What a session cookie proves: the live session, the user's role in its workspace, and the workspace's
 * standing and ceilings (middleware/auth reads it on every cookie-authenticated request).
 */
import type { Clock } from '../../clock.ts';
import { sha256Hex } from '../../crypto.ts';
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import type { TableRow } from '../../../../../generated/db.ts';
import { STANDING_COLUMNS, type StandingColumns, standingOf, type WorkspaceStanding } from '../standing/index.ts';
import { type Role, zRole } from './users.ts';

/** What a session cookie proves. */
export interface AdminSession {
  sessionId: string;
  userId: string;
  workspaceId: string;
  role: Role;
  totpEnabled: boolean;
  csrfHash: string;
  /** The workspace's requests-per-minute ceiling: its sessions share the counter with its keys. */
  rpmLimit: number;
  /** The workspace's raised per-address ceiling (null: the default per-IP limit). */
  ipRpmLimit: number | null;
  /** The workspace's standing: a session reads whatever it is, but writes only in good standing (middleware/auth). */
  standing: WorkspaceStanding;
}

/** @throws not_authenticated when the cookie names no live session */
export async function authenticate(deps: { db: Db; clock: Clock }, sessionToken: string | undefined): Promise<AdminSession> {
  if (!sessionToken) throw fail('not_authenticated', 'Sign in first.');
  const [row] = await deps.db.query<
    Pick<TableRow<'sessions'>, 'id' | 'user_id' | 'csrf_hash' | 'workspace_id'> &
      Pick<TableRow<'memberships'>, 'role'> &
      Pick<TableRow<'users'>, 'totp_enabled'> &
      StandingColumns
  >(
    // The role is the user's in the session's workspace; a removed member's sessions there are gone.
    `SELECT s.id, s.user_id, s.csrf_hash, s.workspace_id, m.role, u.totp_enabled, ${STANDING_COLUMNS}
     FROM sessions s JOIN users u ON u.id = s.user_id
       JOIN memberships m ON m.user_id = s.user_id AND m.workspace_id = s.workspace_id
       JOIN workspaces w ON w.id = s.workspace_id
     WHERE s.token_hash = $1 AND s.expires_at > $2`,
    [sha256Hex(sessionToken), deps.clock.now()],
  );
  if (!row) throw fail('not_authenticated', 'The session is unknown or has expired; sign in again.');
  return {
    sessionId: row.id,
    userId: row.user_id,
    workspaceId: row.workspace_id,
    role: zRole.parse(row.role),
    totpEnabled: row.totp_enabled,
    csrfHash: row.csrf_hash,
    rpmLimit: standingOf(row).rpmLimit,
    ipRpmLimit: standingOf(row).ipRpmLimit,
    standing: standingOf(row),
  };
}
