/**
 * @module The idempotency claims of a credential's requests (`idempotency_keys`).
 * One typed function per statement (the policy files of domain/runs call these and hold no SQL).
 */
import type { TableRow } from '../../../../../../generated/db.ts';
import type { Db, Tx } from '../../../store/db.ts';

/** The claim of an Idempotency-Key, undefined when the key is not claimed. */
export async function readClaim(db: Db | Tx, credentialId: string, key: string): Promise<{ requestHash: string; runId: string; expiresAt: Date } | undefined> {
  const [row] = await db.query<Pick<TableRow<'idempotency_keys'>, 'request_hash' | 'run_id' | 'expires_at'>>(
    `SELECT request_hash, run_id, expires_at FROM idempotency_keys WHERE credential_id = $1 AND idempotency_key = $2`,
    [credentialId, key],
  );
  return row && { requestHash: row.request_hash, runId: row.run_id, expiresAt: row.expires_at };
}

export async function deleteClaim(db: Db | Tx, credentialId: string, key: string): Promise<void> {
  await db.query(`DELETE FROM idempotency_keys WHERE credential_id = $1 AND idempotency_key = $2`, [credentialId, key]);
}

/** Claims the key for `runId` until `expiresAt`; false when it is claimed already. */
export async function insertClaim(
  tx: Tx,
  claim: { credentialId: string; key: string; workspaceId: string; requestHash: string; runId: string; now: Date; expiresAt: Date },
): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO idempotency_keys (credential_id, idempotency_key, workspace_id, request_hash, run_id, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (credential_id, idempotency_key) DO NOTHING RETURNING 1`,
    [claim.credentialId, claim.key, claim.workspaceId, claim.requestHash, claim.runId, claim.now, claim.expiresAt],
  );
  return rows.length > 0;
}
