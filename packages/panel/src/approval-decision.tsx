/**
 * @module Deciding an approval (`POST /approvals/{approval_id}/decision`, `decideApproval`): who may (owners and
 * admins), the call with the session's CSRF token, and the Approve / Reject buttons (each confirmed), shared by the
 * Approvals screen and the run page of a run that waits for one.
 */
import { api, csrfHeader, ok, type Schemas } from './api.ts';
import { isAdmin, type Session } from './session.ts';
import { ConfirmButton } from './ui.tsx';

export type Decision = 'approved' | 'rejected';

/** Owners and admins decide approvals; members see them. */
export function canDecide(session: Session): boolean {
  return isAdmin(session);
}

export function decideApproval(approvalId: string, decision: Decision): Promise<Schemas['Approval']> {
  return ok(api.POST('/approvals/{approval_id}/decision', { params: { path: { approval_id: approvalId }, header: csrfHeader() }, body: { decision } }));
}

/** Approve and Reject for one approval, each named after its action ("Approve email.send") and confirmed. */
export function DecisionButtons({ action, onDecide }: { action: string; onDecide(decision: Decision): unknown }) {
  return (
    <>
      <ConfirmButton
        label={`Approve ${action}`}
        confirmLabel="Approve now"
        question={`Approve ${action}? The agent goes ahead.`}
        onConfirm={() => onDecide('approved')}
      />
      <ConfirmButton danger label={`Reject ${action}`} confirmLabel="Reject now" question={`Reject ${action}?`} onConfirm={() => onDecide('rejected')} />
    </>
  );
}
