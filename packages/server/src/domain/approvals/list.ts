/**
 * @module The approval requests of a workspace as the panel lists them, by state. A pending request
 * past its expiry is `expired` (it can no longer be decided, decision.ts), whatever its stored status.
 */
import type { Db } from '../../store/db.ts';
import { int, row, selectRow, selectRows } from '../../store/rows.ts';
import { type Approval, approvalColumns, toRecord } from './decision.ts';

export type ApprovalFilter = 'pending' | 'approved' | 'rejected' | 'expired' | 'all';

interface ApprovalPage {
  data: Approval[];
  total: number;
  limit: number;
  offset: number;
}

/**
 * One page of the workspace's approvals in the given state: pending ones soonest to expire first (what
 * needs a decision now), the others newest first.
 */
export async function listApprovals(
  db: Db,
  input: { workspaceId: string; status: ApprovalFilter; limit: number; offset: number; now: Date },
): Promise<ApprovalPage> {
  const rows = await selectRows(
    db,
    row({ ...approvalColumns, total: int }),
    `SELECT *, count(*) OVER ()::integer AS total FROM approvals
      WHERE workspace_id = $1
        AND CASE $2::text
              WHEN 'all' THEN true
              WHEN 'pending' THEN status = 'pending' AND expires_at > $3
              WHEN 'expired' THEN status = 'expired' OR (status = 'pending' AND expires_at <= $3)
              ELSE status = $2
            END
      ORDER BY CASE WHEN $2::text = 'pending' THEN expires_at END ASC, created_at DESC, id DESC
      LIMIT $4 OFFSET $5`,
    [input.workspaceId, input.status, input.now, input.limit, input.offset],
  );
  const total = rows[0]?.total ?? (input.offset > 0 ? await count(db, input) : 0);
  return { data: rows.map(({ total: _total, ...row }) => toRecord(row, input.now)), total, limit: input.limit, offset: input.offset };
}

async function count(db: Db, input: { workspaceId: string; status: ApprovalFilter; now: Date }): Promise<number> {
  const found = await selectRow(
    db,
    row({ n: int }),
    `SELECT count(*)::integer AS n FROM approvals
      WHERE workspace_id = $1
        AND CASE $2::text
              WHEN 'all' THEN true
              WHEN 'pending' THEN status = 'pending' AND expires_at > $3
              WHEN 'expired' THEN status = 'expired' OR (status = 'pending' AND expires_at <= $3)
              ELSE status = $2
            END`,
    [input.workspaceId, input.status, input.now],
  );
  return found?.n ?? 0;
}
