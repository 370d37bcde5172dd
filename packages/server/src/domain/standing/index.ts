/**
 * @module A workspace's standing: a low-level read under the credentials (keys, MCP tokens, sessions, inbound
 * webhooks) and the tenancy use-cases of domain/workspaces (suspend, delete, payment), which import it, never the
 * reverse. A workspace's standing is checked on every request made with one of its credentials (API key,
 * MCP token, inbound webhook): suspended by the operator → `403 tenant_forbidden`; payment pending →
 * `402 payment_not_completed`. A session still signs in and reads (usage, runs: what is owed and what ran),
 * and makes only the writes the contract marks `x-standing-exempt` (stop, revoke, leave); middleware/auth
 * refuses its other writes with the same codes.
 * The standing travels with the credential's lookup (one join), and every change of it bumps the key
 * caches' version, so it holds on every instance from the next request.
 */
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import { int, nullable, row, selectRow, text } from '../../store/rows.ts';

/** Requests per minute of a workspace whose operator set no ceiling (the spec's 600). */
export const DEFAULT_RPM_LIMIT = 600;

export interface WorkspaceStanding {
  status: string;
  payment: string;
  /** The workspace's own requests-per-minute ceiling. */
  rpmLimit: number;
  /** The operator's raised per-address ceiling for the workspace's authenticated callers; null = the default. */
  ipRpmLimit: number | null;
}

/** The columns a credential's lookup selects from `workspaces w` to know the standing. */
export const STANDING_COLUMNS =
  'w.status AS workspace_status, w.payment AS workspace_payment, w.rpm_limit AS workspace_rpm_limit, w.ip_rpm_limit AS workspace_ip_rpm_limit';

/** Readers of STANDING_COLUMNS: spread them into the decoder of a credential's lookup. */
export const standingColumns = {
  workspace_status: text,
  workspace_payment: text,
  workspace_rpm_limit: nullable(int),
  workspace_ip_rpm_limit: nullable(int),
};

const standingRow = row(standingColumns);

export type StandingColumns = ReturnType<typeof standingRow>;

export function standingOf(row: StandingColumns): WorkspaceStanding {
  return {
    status: row.workspace_status,
    payment: row.workspace_payment,
    rpmLimit: row.workspace_rpm_limit ?? DEFAULT_RPM_LIMIT,
    ipRpmLimit: row.workspace_ip_rpm_limit,
  };
}

/** @throws tenant_forbidden for a suspended workspace, payment_not_completed for one whose payment is pending */
export function requireGoodStanding(standing: WorkspaceStanding): void {
  if (standing.status !== 'active') throw fail('tenant_forbidden', 'This workspace is suspended.');
  if (standing.payment !== 'completed') throw fail('payment_not_completed', 'The payment of this workspace is not completed.');
}

/**
 * The standing of a workspace read by its id, for a caller whose credential does not carry it (a
 * session that starts a run from the panel: it may read, but spends only while the workspace may).
 */
export async function loadStanding(db: Db, workspaceId: string): Promise<WorkspaceStanding> {
  const found = await selectRow(db, standingRow, `SELECT ${STANDING_COLUMNS} FROM workspaces w WHERE w.id = $1`, [workspaceId]);
  if (!found) throw fail('not_authenticated');
  return standingOf(found);
}
