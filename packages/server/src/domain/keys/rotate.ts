/**
 * @module Rotating a key: a new key with the same name, scopes and lifetime; the old one is revoked in the same
 * transaction, effective at once on every instance (invalidation.ts).
 */
import type { Clock } from '../../clock.ts';
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import { selectRow } from '../../store/rows.ts';
import { type AuditContext, recordAudit } from '../audit/index.ts';
import { invalidateKeyCaches, type KeyInvalidation } from './invalidation.ts';
import { DAY_MS, insertKeyRow } from './issue.ts';
import { type IssuedKey, keyRow, keyTarget, toRecord } from './record.ts';

export async function rotateKey(
  deps: { db: Db; clock: Clock; invalidation: Pick<KeyInvalidation, 'settle'> },
  workspaceId: string,
  id: string,
  audit?: AuditContext,
): Promise<IssuedKey> {
  const { db, clock } = deps;
  const now = clock.now();
  const issued = await db.transaction(async (tx) => {
    const old = await selectRow(tx, keyRow, `SELECT * FROM api_keys WHERE id = $1 AND workspace_id = $2 FOR UPDATE`, [id, workspaceId]);
    if (!old) throw fail('not_found', 'No API key with this id.');
    if (toRecord(old, now).status !== 'active') throw fail('not_found', 'No active API key with this id.');
    const days = Math.max(1, Math.round((old.expires_at.getTime() - old.created_at.getTime()) / DAY_MS));
    const fresh = await insertKeyRow(tx, clock, workspaceId, { name: old.name, scopes: old.scopes, days });
    await tx.query(`UPDATE api_keys SET revoked_at = $2, replaced_by = $3 WHERE id = $1`, [id, now, fresh.id]);
    const details = { replacedBy: fresh.id, prefix: old.prefix, newPrefix: fresh.prefix };
    await recordAudit(tx, audit, workspaceId, { action: 'key.rotated', target: keyTarget(old), details }, now);
    return { fresh, change: await invalidateKeyCaches(tx) };
  });
  await deps.invalidation.settle(db, issued.change.version, issued.change.at);
  return issued.fresh;
}
