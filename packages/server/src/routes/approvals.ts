/**
 * @module Approval decisions and integrations (admin session): decideApproval emits
 * `approval.decided`, createIntegration emits `integration.connected`.
 */
import { decideApproval as decide } from '../domain/approvals/decision.ts';
import { recordIntegration } from '../domain/integrations/index.ts';
import { authOf, type Handler, type Handlers } from './handler.ts';

const decideApproval: Handler<'decideApproval'> = async (c, { params, body }, { db, clock, webhooks }) => {
  const { workspaceId, userId } = authOf(c, 'adminSession');
  const approval = await decide(db, clock, { workspaceId, approvalId: params.approval_id, decision: body.decision, decidedBy: userId });
  webhooks.wake();
  return { status: 200, body: approval };
};

const createIntegration: Handler<'createIntegration'> = async (c, { body }, { db, clock, webhooks }) => {
  const { workspaceId, userId } = authOf(c, 'adminSession');
  const integration = await recordIntegration(db, clock, { workspaceId, ...body, connectedBy: userId });
  webhooks.wake();
  return { status: 201, body: integration };
};

export const approvalHandlers = { decideApproval, createIntegration } satisfies Partial<Handlers>;
