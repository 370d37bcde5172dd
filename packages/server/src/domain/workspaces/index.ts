/**
 * @module Workspaces (tenants), the owner of the `workspaces` table: created by the first start or by
 * the operator, listed, updated (plan, ceiling, quota override, suspension, payment) and deleted with
 * all their data. Everything else in the store hangs off one workspace.
 */
import { type AuditContext, recordAudit } from '../audit/index.ts';
import type { Clock } from '../../clock.ts';
import type { Schema } from '../../contract.ts';
import { fail } from '../../errors.ts';
import { newId } from '../../random.ts';
import type { Db, Tx } from '../../store/db.ts';
import { date, int, nullable, oneOf, selectRow, selectRows, tableRow, text } from '../../store/rows.ts';
import type { TableRow } from '../../../../../generated/db.ts';
import { getPlanSettings, setPlan, setQuotaOverride } from '../agents/settings.ts';
import { invalidateKeyCaches } from '../keys/index.ts';
import { deleteUsersWithoutWorkspace } from '../sessions/users.ts';
import { DEFAULT_RPM_LIMIT } from '../standing/index.ts';

export { DEFAULT_RPM_LIMIT, requireGoodStanding, type WorkspaceStanding } from '../standing/index.ts';

export type OperatorWorkspace = Schema<'OperatorWorkspace'>;
export type WorkspaceUpdate = Schema<'UpdateWorkspaceRequest'>;

type WorkspaceRow = TableRow<'workspaces'>;

/** Decodes a row of `workspaces` (`SELECT *`, `RETURNING *`). */
const workspaceRow = tableRow('workspaces', {
  id: text,
  name: text,
  created_at: date,
  status: oneOf(['active', 'suspended']),
  payment: oneOf(['pending', 'completed']),
  rpm_limit: nullable(int),
  updated_at: nullable(date),
  ip_rpm_limit: nullable(int),
});

interface Workspace {
  id: string;
  name: string;
  createdAt: string;
}

export async function createWorkspace(db: Db | Tx, clock: Clock, name: string, options: { pendingPayment?: boolean } = {}): Promise<Workspace> {
  const id = newId('wksp');
  const now = clock.now();
  await db.query(`INSERT INTO workspaces (id, name, created_at, payment) VALUES ($1, $2, $3, $4)`, [
    id,
    name,
    now,
    options.pendingPayment ? 'pending' : 'completed',
  ]);
  return { id, name, createdAt: now.toISOString() };
}

export async function listWorkspaces(db: Db): Promise<Workspace[]> {
  const rows = await selectRows(
    db,
    tableRow('workspaces', { id: text, name: text, created_at: date }),
    `SELECT id, name, created_at FROM workspaces ORDER BY created_at, id`,
  );
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at.toISOString() }));
}

/** Every workspace as the operator sees it, oldest first. */
export async function listOperatorWorkspaces(db: Db): Promise<OperatorWorkspace[]> {
  const rows = await selectRows(db, workspaceRow, `SELECT * FROM workspaces ORDER BY created_at, id`);
  return Promise.all(rows.map((row) => toOperatorWorkspace(db, row)));
}

/** @throws not_found for an unknown id */
export async function getOperatorWorkspace(db: Db, id: string): Promise<OperatorWorkspace> {
  const row = await selectRow(db, workspaceRow, `SELECT * FROM workspaces WHERE id = $1`, [id]);
  if (!row) throw fail('not_found', 'No workspace with this id.');
  return toOperatorWorkspace(db, row);
}

/**
 * Applies the operator's settings in one transaction. A change of status, payment or a ceiling bumps
 * the key caches' version, so every instance sees it at its next request.
 * @throws not_found for an unknown id
 */
export async function updateWorkspace(db: Db, clock: Clock, id: string, update: WorkspaceUpdate, audit?: AuditContext): Promise<OperatorWorkspace> {
  return db.transaction(async (tx) => {
    const now = clock.now();
    const row = await selectRow(
      tx,
      workspaceRow,
      `UPDATE workspaces SET name = COALESCE($2, name), status = COALESCE($3, status), payment = COALESCE($4, payment),
              rpm_limit = COALESCE($5, rpm_limit), updated_at = $6,
              ip_rpm_limit = CASE WHEN $7::boolean THEN $8::integer ELSE ip_rpm_limit END
        WHERE id = $1 RETURNING *`,
      [
        id,
        update.name ?? null,
        update.status ?? null,
        update.payment ?? null,
        update.rpmLimit ?? null,
        now,
        // null is a value here (back to the default), absent leaves it as it is.
        update.ipRpmLimit !== undefined,
        update.ipRpmLimit ?? null,
      ],
    );
    if (!row) throw fail('not_found', 'No workspace with this id.');
    if (update.plan) await setPlan(tx, clock, id, update.plan);
    if (update.quotaOverride !== undefined) await setQuotaOverride(tx, clock, id, update.quotaOverride);
    if (update.status || update.payment || update.rpmLimit || update.ipRpmLimit !== undefined) await invalidateKeyCaches(tx);
    await recordAudit(tx, audit, id, { action: 'workspace.updated', target: { type: 'workspace', id, label: row.name }, details: { ...update } }, now);
    return toOperatorWorkspace(tx, row);
  });
}

/**
 * Deletes a workspace and everything that hangs off it (every table references `workspaces` with
 * ON DELETE CASCADE), in one transaction; cached keys of the workspace die with the version bump.
 * @throws not_found for an unknown id
 */
export async function deleteWorkspace(db: Db, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const deleted = await tx.query(`DELETE FROM workspaces WHERE id = $1 RETURNING id`, [id]);
    if (deleted.length === 0) throw fail('not_found', 'No workspace with this id.');
    // Its people who belong to no other workspace go too.
    await deleteUsersWithoutWorkspace(tx);
    await invalidateKeyCaches(tx);
  });
}

async function toOperatorWorkspace(db: Db | Tx, row: WorkspaceRow): Promise<OperatorWorkspace> {
  const plan = await getPlanSettings(db, row.id);
  return {
    id: row.id,
    name: row.name,
    status: row.status === 'suspended' ? 'suspended' : 'active',
    payment: row.payment === 'pending' ? 'pending' : 'completed',
    plan: plan.plan,
    rpmLimit: row.rpm_limit ?? DEFAULT_RPM_LIMIT,
    ipRpmLimit: row.ip_rpm_limit,
    quotaStu: plan.quotaStu,
    quotaOverride: plan.quotaOverride,
    createdAt: row.created_at.toISOString(),
    updatedAt: (row.updated_at ?? row.created_at).toISOString(),
  };
}
