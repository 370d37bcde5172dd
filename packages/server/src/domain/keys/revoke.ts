/**
 * @module Revoking a key: a soft delete, effective at once on every instance (the key caches are invalidated in the
 * same transaction, and the answer waits until every instance heard it: invalidation.ts).
 */
import type { Clock } from '../../clock.ts';
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import { selectRow } from '../../store/rows.ts';
import { type AuditContext, recordAudit } from '../audit/index.ts';
import { invalidateKeyCaches, type KeyInvalidation } from './invalidation.ts';
import { type ApiKeyRecord, keyRow, keyTarget, toRecord } from './record.ts';

/** Revoking a revoked key changes nothing. */
export async function revokeKey(
  deps: { db: Db; clock: Clock; invalidation: Pick<KeyInvalidation, 'settle'> },
  workspaceId: string,
  id: string,
  audit?: AuditContext,
): Promise<ApiKeyRecord> {
  const { db } = deps;
  const now = deps.clock.now();
  const record = await db.transaction(async (tx) => {
    const row = await selectRow(tx, keyRow, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $3) WHERE id = $1 AND workspace_id = $2 RETURNING *`, [
      id,
      workspaceId,
      now,
    ]);
    if (!row) throw fail('not_found', 'No API key with this id.');
    await recordAudit(tx, audit, workspaceId, { action: 'key.revoked', target: keyTarget(row), details: { prefix: row.prefix } }, now);
    return { record: toRecord(row, now), change: await invalidateKeyCaches(tx) };
  });
  await deps.invalidation.settle(db, record.change.version, record.change.at);
  return record.record;
}
