/**
 * @module Who an approval decided by the operator (the command line, or the operator API) is recorded for:
 * the owner or admin of the workspace with the given email, or the workspace's first owner (else its first
 * admin). An admin session decides in its own name (routes/approvals.ts), never through this.
 */
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import { selectRow, tableRow, text } from '../../store/rows.ts';

/** The deciding user, by id. */
const deciderRow = tableRow('users', { id: text });

/** The deciding user's id; `404 member_not_found` when no owner or admin of the workspace answers to it. */
export async function approvalDecider(db: Db, workspaceId: string, email: string | undefined): Promise<string> {
  const found = email
    ? await selectRow(
        db,
        deciderRow,
        `SELECT u.id FROM users u JOIN memberships m ON m.user_id = u.id
          WHERE m.workspace_id = $1 AND m.role IN ('owner', 'admin') AND lower(u.email) = lower($2)`,
        [workspaceId, email],
      )
    : await selectRow(
        db,
        deciderRow,
        `SELECT user_id AS id FROM memberships WHERE workspace_id = $1 AND role IN ('owner', 'admin') ORDER BY role = 'owner' DESC, created_at LIMIT 1`,
        [workspaceId],
      );
  if (!found) throw fail('member_not_found', email ? `No owner or admin ${email} in this workspace.` : 'The workspace has no owner or admin.');
  return found.id;
}
