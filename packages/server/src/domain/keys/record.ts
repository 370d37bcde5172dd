/**
 * @module A key as the contract shows it (`ApiKey`): never the secret, never the hash; and a workspace's keys.
 */
import type { Clock } from '../../clock.ts';
import type { Schema } from '../../contract.ts';
import type { TableRow } from '../../../../../generated/db.ts';
import type { Db } from '../../store/db.ts';
import { columnsOf, date, nullable, row, selectRows, text, textArray } from '../../store/rows.ts';

/** A key as the contract shows it (`ApiKey`). */
export type ApiKeyRecord = Schema<'ApiKey'>;

type ApiKeyStatus = ApiKeyRecord['status'];

/** A key just created or rotated: the record plus the secret, shown this once. */
export interface IssuedKey extends ApiKeyRecord {
  secret: string;
}

/** A row of `api_keys` (generated/db.ts, from the migrations). */
export type KeyRow = TableRow<'api_keys'>;

/** The columns of `api_keys`. */
export const keyColumns = columnsOf('api_keys', {
  id: text,
  workspace_id: text,
  name: text,
  prefix: text,
  secret_hash: text,
  scopes: textArray,
  created_at: date,
  expires_at: date,
  last_used_at: nullable(date),
  revoked_at: nullable(date),
  replaced_by: nullable(text),
});

/** Decodes a row of `api_keys` (`SELECT *`, `RETURNING *`). */
export const keyRow = row(keyColumns);

/** The workspace's keys, newest first. */
export async function listKeys(deps: { db: Db; clock: Clock }, workspaceId: string): Promise<ApiKeyRecord[]> {
  const rows = await selectRows(deps.db, keyRow, `SELECT * FROM api_keys WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC`, [workspaceId]);
  const now = deps.clock.now();
  return rows.map((row) => toRecord(row, now));
}

/** A key as the audit log names it: its id and name (the prefix goes in the details). */
export function keyTarget(key: { id: string; name: string }) {
  return { type: 'api_key' as const, id: key.id, label: key.name };
}

export function toRecord(row: KeyRow, now: Date): ApiKeyRecord {
  const status: ApiKeyStatus = row.revoked_at ? 'revoked' : row.expires_at <= now ? 'expired' : 'active';
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    status,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}
