/**
 * @module The decision on a pending approval, by an admin. The approval changes and
 * `approval.decided` (with `decided_by`) is queued in one transaction: both or neither. The same
 * transaction notifies every instance (`APPROVAL_DECIDED_CHANNEL`, at its commit): the run that waits for
 * the approval, if any (domain/runs/pause.ts), is resumed by whichever instance claims it first
 * (worker/resumer.ts). Two concurrent decisions take turns on the approval's row: the second finds it
 * decided (`400 invalid_body`). A run canceled while it waits stores its approval `expired` in the cancel's
 * transaction (`expireApprovalsOfEndedRun`), so a decision after it answers as on any expired approval.
 */
import type { Clock } from '../../clock.ts';
import { fail } from '../../errors.ts';
import type { TableRow } from '../../../../../generated/db.ts';
import { zApproval } from '../../contract.ts';
import type { Db, Tx } from '../../store/db.ts';
import { columnsOf, date, nullable, oneOf, row, selectRow, text } from '../../store/rows.ts';
import { enqueueEvent } from '../events/outbox.ts';
import { notify } from '../../store/listen.ts';
import { type AuditContext, recordAudit } from '../audit/index.ts';

/** The channel (store/listen.ts) on which a decision tells every instance that a run may resume; the payload is the approval's id. */
export const APPROVAL_DECIDED_CHANNEL = 'service_approval_decided';

/** The contract's Approval record. */
export interface Approval {
  id: string;
  runId: string;
  agentSlug: string;
  action: string;
  summary: string;
  status: 'pending' | 'approved' | 'rejected' | 'expired';
  decidedBy: string | null;
  decidedAt: string | null;
  expiresAt: string;
  createdAt: string;
}

export interface DecideApprovalInput {
  workspaceId: string;
  approvalId: string;
  decision: 'approved' | 'rejected';
  /** The admin session's user (`usr_…`); never taken from the body. */
  decidedBy: string;
}

/** A row of `approvals` (generated/db.ts, from the migrations). */
type Row = TableRow<'approvals'>;

/** The columns of `approvals` (`SELECT *`, `RETURNING *`). */
export const approvalColumns = columnsOf('approvals', {
  id: text,
  workspace_id: text,
  run_id: text,
  agent_slug: text,
  action: text,
  summary: text,
  status: oneOf(['pending', 'approved', 'rejected', 'expired']),
  expires_at: date,
  decided_by: nullable(text),
  decided_at: nullable(date),
  created_at: date,
});
const approvalRow = row(approvalColumns);

/**
 * Decides a pending approval. Another workspace's approval is `not_found`; one already decided,
 * or past its expiry, is `400 invalid_body` (the decision can no longer be taken; the contract
 * lists no 409/410 for this route).
 */
export async function decideApproval(db: Db, clock: Clock, input: DecideApprovalInput, audit?: AuditContext): Promise<Approval> {
  const now = clock.now();
  return db.transaction(async (tx) => {
    const current = await selectRow(tx, approvalRow, `SELECT * FROM approvals WHERE id = $1 AND workspace_id = $2 FOR UPDATE`, [
      input.approvalId,
      input.workspaceId,
    ]);
    if (!current) throw fail('not_found', 'No such approval.');
    if (current.status !== 'pending' || current.expires_at.getTime() <= now.getTime()) {
      throw fail('invalid_body', 'This approval is no longer pending.');
    }
    const updated = await selectRow(tx, approvalRow, `UPDATE approvals SET status = $2, decided_by = $3, decided_at = $4 WHERE id = $1 RETURNING *`, [
      input.approvalId,
      input.decision,
      input.decidedBy,
      now,
    ]);
    await enqueueEvent(
      tx,
      {
        tenantId: input.workspaceId,
        type: 'approval.decided',
        data: { approval_id: input.approvalId, decision: input.decision, decided_by: input.decidedBy, run_id: current.run_id },
      },
      { now },
    );
    await notify(tx, APPROVAL_DECIDED_CHANNEL, input.approvalId);
    const target = { type: 'approval' as const, id: input.approvalId, label: current.action };
    await recordAudit(tx, audit, input.workspaceId, { action: 'approval.decided', target, details: { decision: input.decision, runId: current.run_id } }, now);
    return toRecord(updated!);
  });
}

/**
 * A pending approval past its expiry, as the resume of the run that waited for it claims it
 * (domain/runs/resume.ts): stored `expired`, in the caller's transaction. The run takes it as a rejection.
 */
export async function expireApproval(tx: Tx, approvalId: string, now: Date): Promise<void> {
  await tx.query(`UPDATE approvals SET status = 'expired' WHERE id = $1 AND status = 'pending' AND expires_at <= $2`, [approvalId, now]);
}

/**
 * The approvals a run waited for when it ended without resuming (canceled, domain/runs/recovery.ts): stored
 * `expired` in the caller's transaction, their expiry brought forward to the end, so nobody decides a request
 * whose run is gone (a decision then answers as on any expired approval). One already decided keeps its decision.
 */
export async function expireApprovalsOfEndedRun(tx: Tx, approvalIds: readonly string[], now: Date): Promise<void> {
  await tx.query(`UPDATE approvals SET status = 'expired', expires_at = LEAST(expires_at, $2) WHERE id = ANY ($1::text[]) AND status = 'pending'`, [
    approvalIds,
    now,
  ]);
}

/** The contract's record of a stored approval; a pending one past its expiry reads as `expired` at `now`. */
export function toRecord(row: Row, now?: Date): Approval {
  const expired = now !== undefined && row.status === 'pending' && row.expires_at.getTime() <= now.getTime();
  return {
    id: row.id,
    runId: row.run_id,
    agentSlug: row.agent_slug,
    action: row.action,
    summary: row.summary,
    status: expired ? 'expired' : zApproval.shape.status.parse(row.status),
    decidedBy: row.decided_by,
    decidedAt: row.decided_at ? row.decided_at.toISOString() : null,
    expiresAt: row.expires_at.toISOString(),
    createdAt: row.created_at.toISOString(),
  };
}
