/**
 * @module Approvals and integrations: listApprovals (any member's session reads them),
 * decideApproval (an admin; emits `approval.decided`), createIntegration (an admin; emits
 * `integration.connected`).
 */
import { decideApproval as decide } from '../domain/approvals/decision.ts';
import { listApprovals as list } from '../domain/approvals/list.ts';
import { recordIntegration } from '../domain/integrations/index.ts';
import { authOf, type Handler, type Handlers } from './handler.ts';

const decideApproval: Handler<'decideApproval'> = async (c, { params, body }, { db, clock, webhooks }) => {
  const { workspaceId, userId } = authOf(c, 'adminSession');
  const approval = await decide(db, clock, { workspaceId, approvalId: params.approval_id, decision: body.decision, decidedBy: userId });
  webhooks.wake();
  return { status: 200, body: approval };
};

const listApprovals: Handler<'listApprovals'> = async (c, { query }, { db, clock }) => {
  const { workspaceId } = authOf(c, 'adminSession');
  return { status: 200, body: await list(db, { workspaceId, status: query.status ?? 'pending', limit: query.limit, offset: query.offset, now: clock.now() }) };
};

const createIntegration: Handler<'createIntegration'> = async (c, { body }, { db, clock, webhooks }) => {
  const { workspaceId, userId } = authOf(c, 'adminSession');
  const integration = await recordIntegration(db, clock, { workspaceId, ...body, connectedBy: userId });
  webhooks.wake();
  return { status: 201, body: integration };
};

export const approvalHandlers = { listApprovals, decideApproval, createIntegration } satisfies Partial<Handlers>;
