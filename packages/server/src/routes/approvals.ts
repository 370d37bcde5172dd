/**
 * @module Approvals: listApprovals (any member's session reads them), decideApproval (an admin;
 * emits `approval.decided`).
 */
import { auditOf, authOf, type Handler, type Handlers } from './handler.ts';

const decideApproval: Handler<'decideApproval'> = async (c, { params, body }, services) => {
  const { approvals, webhooks } = services;
  const { workspaceId, userId } = authOf(c, 'adminSession');
  const decision = { workspaceId, approvalId: params.approval_id, decision: body.decision, decidedBy: userId };
  const approval = await approvals.decide(decision, auditOf(c, services));
  webhooks.wake();
  return { status: 200, body: approval };
};

const listApprovals: Handler<'listApprovals'> = async (c, { query }, { approvals }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await approvals.list({ workspaceId, status: query.status ?? 'pending', limit: query.limit, offset: query.offset }) };
};

export const approvalHandlers = { listApprovals, decideApproval } satisfies Partial<Handlers>;
