/**
 * @module A page of the workspace's audit log, newest first (then by id), with the filters of `GET /audit-events`:
 * each an optional (NULL-able) parameter of one fixed statement, which counts every match too (`count(*) OVER ()`;
 * a page past the end counts them apart, as the delivery log does).
 */
import { type Schema, zAuditAction, zAuditActor, zAuditTarget } from '../../contract.ts';
import type { Db } from '../../store/db.ts';
import { columnsOf, date, int, jsonObject, nullable, row, selectRow, selectRows, text } from '../../store/rows.ts';

type AuditEvent = Schema<'AuditEvent'>;

/** A row of `audit_events` with the count of every match. */
const eventRow = row({
  ...columnsOf('audit_events', {
    id: text,
    workspace_id: text,
    action: text,
    actor_type: text,
    actor_id: text,
    actor_label: text,
    target_type: text,
    target_id: text,
    target_label: nullable(text),
    address: nullable(text),
    request_id: nullable(text),
    created_at: date,
  }),
  details: nullable(jsonObject),
  total: int,
});

export interface AuditFilter {
  action?: string | undefined;
  /** An actor's id, or its label (an email in any case, a key's prefix). */
  actor?: string | undefined;
  target?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  limit: number;
  offset: number;
}

const WHERE = `workspace_id = $1
   AND ($2::text IS NULL OR action = $2)
   AND ($3::text IS NULL OR actor_id = $3 OR lower(actor_label) = lower($3))
   AND ($4::text IS NULL OR target_id = $4)
   AND ($5::timestamptz IS NULL OR created_at >= $5)
   AND ($6::timestamptz IS NULL OR created_at < $6)`;

export async function listAuditEvents(db: Db, workspaceId: string, filter: AuditFilter): Promise<Schema<'AuditEventList'>> {
  const params = [workspaceId, filter.action ?? null, filter.actor ?? null, filter.target ?? null, filter.since ?? null, filter.until ?? null];
  const rows = await selectRows(
    db,
    eventRow,
    `SELECT *, count(*) OVER ()::int AS total FROM audit_events WHERE ${WHERE} ORDER BY created_at DESC, id DESC LIMIT $7 OFFSET $8`,
    [...params, filter.limit, filter.offset],
  );
  const total = rows[0]?.total ?? (filter.offset > 0 ? await countEvents(db, params) : 0);
  return { data: rows.map(toEvent), total, limit: filter.limit, offset: filter.offset };
}

/** Every match, for a page past the end (it has no row to carry the count). */
async function countEvents(db: Db, params: unknown[]): Promise<number> {
  const found = await selectRow(db, row({ total: int }), `SELECT count(*)::int AS total FROM audit_events WHERE ${WHERE}`, params);
  return found?.total ?? 0;
}

function toEvent(row: ReturnType<typeof eventRow>): AuditEvent {
  return {
    id: row.id,
    action: zAuditAction.parse(row.action),
    actor: { type: zAuditActor.shape.type.parse(row.actor_type), id: row.actor_id, label: row.actor_label },
    target: { type: zAuditTarget.shape.type.parse(row.target_type), id: row.target_id, label: row.target_label },
    createdAt: row.created_at.toISOString(),
    address: row.address,
    requestId: row.request_id,
    details: row.details ?? {},
  };
}
