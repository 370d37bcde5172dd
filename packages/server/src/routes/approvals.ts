/**
 * @module Approval decisions and integrations (admin session): decideApproval emits
 * `approval.decided`, createIntegration emits `integration.connected`.
 */
import { decideApproval as decide } from '../domain/approvals/decision.ts';
import { recordIntegration } from '../domain/integrations/index.ts';
import type { OperationHandler } from './handler.ts';
import { authOf } from './handler.ts';
import type { components } from '../../../../generated/types.ts';

const decideApproval: OperationHandler = async (c, { db, clock, webhooks }) => {
  const { workspaceId, userId } = authOf(c, 'adminSession');
  const { decision } = c.get('valid').body as { decision: 'approved' | 'rejected' };
  const approval = await decide(db, clock, {
    workspaceId,
    approvalId: c.get('valid').params.approval_id as string,
    decision,
    decidedBy: userId,
  });
  webhooks.wake();
  return c.json(approval, 200);
};

const createIntegration: OperationHandler = async (c, { db, clock, webhooks }) => {
  const { workspaceId, userId } = authOf(c, 'adminSession');
  const body = c.get('valid').body as components['schemas']['CreateIntegrationRequest'];
  const integration = await recordIntegration(db, clock, { workspaceId, ...body, connectedBy: userId });
  webhooks.wake();
  return c.json(integration, 201);
};

export const approvalHandlers = { decideApproval, createIntegration } satisfies Record<string, OperationHandler>;
