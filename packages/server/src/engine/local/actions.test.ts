import { describe, expect, it } from 'vitest';
import { approvalsFor, DRAFT_KINDS, draftFor } from './actions.ts';

describe('draftFor', () => {
  it.each([
    ['Please draft an email to the supplier', 'operations', 'email'],
    ['Write a proposal for the new client', 'strategy', 'proposal'],
    ['Compose a reply to this customer', 'legal', 'reply'],
    ['Prepare a newsletter for the launch', 'marketing', 'message'],
    ['Write a memo about the new policy', 'hr', 'document'],
    ['Check our pipeline', 'sales', 'email'],
    ['The printer is broken', 'customer-care', 'reply'],
    ['What is our budget?', 'finance', null],
    ['I got an email from a supplier', 'operations', null],
  ] as const)('%j (%s) → %s', (text, department, kind) => {
    const draft = draftFor(text, department, 'Team');
    expect(draft?.kind ?? null).toBe(kind);
    if (draft) {
      expect(DRAFT_KINDS).toContain(draft.kind);
      expect(draft.subject.length).toBeGreaterThan(3);
      expect(draft.body.length).toBeGreaterThan(20);
    }
  });

  it('never quotes the request in a draft', () => {
    const draft = draftFor('Draft an email about Project Zebra to Alice', 'sales', 'Sales');
    expect(JSON.stringify(draft)).not.toMatch(/zebra|alice/i);
  });
});

describe('approvalsFor', () => {
  it.each([
    ['Send an email to the new lead', ['email.send']],
    ['Please send the newsletter', ['email.send']],
    ['Move the deal to the next stage in the CRM', ['crm.update']],
    ['Schedule a call with the buyer', ['calendar.create']],
    ['Refund the customer', ['payment.initiate']],
    ['Publish the article on our blog', ['content.publish']],
    ['Sign the NDA for us', ['contract.sign']],
    ['Give Bob admin access', ['access.grant']],
    ['Delete the old contacts', ['record.delete']],
    ['Send the email and pay the invoice', ['email.send', 'payment.initiate']],
    ['Draft an email for me', []],
    ['What does the contract say?', []],
  ] as const)('%j → %j', (text, actions) => {
    const approvals = approvalsFor(text);
    expect(approvals.map((a) => a.action)).toEqual(actions);
    for (const approval of approvals) {
      // the contract's ApprovalCreatedData.action pattern
      expect(approval.action).toMatch(/^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/);
      expect(approval.summary).toMatch(/\.$/);
    }
  });
});
