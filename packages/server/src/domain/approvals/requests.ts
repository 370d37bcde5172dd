/**
 * @module Approval requests as a run writes them: the pending row an answer asks for, in the run's
 * closing transaction (domain/runs/steps.ts). The decision on it is in decision.ts.
 */
import type { Tx } from '../../store/db.ts';

interface ApprovalRequest {
  id: string;
  workspaceId: string;
  runId: string;
  agentSlug: string;
  action: string;
  /** Already redacted. */
  summary: string;
  expiresAt: Date;
  createdAt: Date;
}

/** Inserts a `pending` approval request in the caller's transaction. */
export async function insertApprovalRequest(tx: Tx, request: ApprovalRequest): Promise<void> {
  await tx.query(
    `INSERT INTO approvals (id, workspace_id, run_id, agent_slug, action, summary, expires_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [request.id, request.workspaceId, request.runId, request.agentSlug, request.action, request.summary, request.expiresAt, request.createdAt],
  );
}
