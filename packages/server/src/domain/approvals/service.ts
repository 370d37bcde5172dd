/**
 * @module The approval service handlers receive: a page of the workspace's approvals (list.ts) and the
 * decision on one (decision.ts, which emits `approval.decided`), by an admin or by the operator for one (decider.ts).
 */
import type { Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';
import type { AuditContext } from '../audit/index.ts';
import { approvalDecider } from './decider.ts';
import { decideApproval, type DecideApprovalInput } from './decision.ts';
import { type ApprovalFilter, listApprovals } from './list.ts';

export type ApprovalService = ReturnType<typeof createApprovalService>;

export function createApprovalService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  return {
    /** One page of the workspace's approvals in the given state, as of now. */
    list: (input: { workspaceId: string; status: ApprovalFilter; limit: number; offset: number }) => listApprovals(db, { ...input, now: clock.now() }),
    decide: (input: DecideApprovalInput, audit?: AuditContext) => decideApproval(db, clock, input, audit),
    /** The operator's decision, recorded for the owner or admin with `deciderEmail` (the first owner when absent). */
    decideAsOperator: async (input: Omit<DecideApprovalInput, 'decidedBy'>, deciderEmail: string | undefined, audit?: AuditContext) =>
      decideApproval(db, clock, { ...input, decidedBy: await approvalDecider(db, input.workspaceId, deciderEmail) }, audit),
  };
}
