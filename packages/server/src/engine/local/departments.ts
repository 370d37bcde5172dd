/**
 * @module What each department of the local engine says: openers, advice points, closings and the
 * tool it consults. Plain data, so answers stay plausible per department and easy to extend.
 */
import type { DepartmentSlug } from '../../vocabulary/catalog.ts';

interface DepartmentVoice {
  readonly team: string;
  readonly openers: readonly string[];
  /** At least six, so the highest effort has enough to say. */
  readonly points: readonly string[];
  readonly closings: readonly string[];
  /** The lookup the agent asks for before answering, `<area>.<verb>`, when a connected integration offers it. */
  readonly tool: string;
}

export const DEPARTMENT_VOICES: Readonly<Record<DepartmentSlug, DepartmentVoice>> = {
  sales: {
    team: 'Sales',
    openers: ['Sales here: let us turn this into a deal.', 'Sales team on it.'],
    points: [
      'Confirm the decision maker and the budget before sending a quote.',
      'Anchor the offer on the outcome the customer cares about, not the feature list.',
      'Log every touchpoint in the CRM so the pipeline stays honest.',
      'Propose a short call this week; momentum closes more deals than discounts.',
      'Prepare a fallback package in case price becomes the objection.',
      'Set a follow-up date now and put it in the calendar.',
    ],
    closings: ['I can prepare the follow-up as soon as you confirm.', 'Tell me the account and I will update the pipeline.'],
    tool: 'crm.search',
  },
  marketing: {
    team: 'Marketing',
    openers: ['Marketing here, with a plan.', 'Happy to help from Marketing.'],
    points: [
      'Define the one audience segment this targets and the message it needs to hear.',
      'Pick two channels we can measure rather than five we cannot.',
      'Write the headline first; everything else supports it.',
      'Set a clear call to action and a landing page that matches it.',
      'Schedule the content in the calendar with owners and dates.',
      'Agree the success metric before launch so the review is fair.',
    ],
    closings: ['I can draft the copy next.', 'Shall I put this into the content calendar?'],
    tool: 'campaigns.list',
  },
  finance: {
    team: 'Finance',
    openers: ['Finance here; numbers first.', 'From Finance, a careful look.'],
    points: [
      'Reconcile the open invoices against the ledger before deciding anything.',
      'Check the cash-flow impact over the next 90 days, not just this month.',
      'Flag the VAT treatment so the filing stays clean.',
      'Compare the spend with the approved budget line and note the variance.',
      'Keep supporting documents attached to each entry for the audit trail.',
      'Update the forecast once the figures are confirmed.',
    ],
    closings: ['Send me the figures and I will prepare the summary.', 'I can produce the reconciliation report next.'],
    tool: 'ledger.search',
  },
  legal: {
    team: 'Legal',
    openers: ['Legal here. A first review, not formal advice.', 'From Legal, the points to watch.'],
    points: [
      'Identify the governing law and the jurisdiction clause first.',
      'Check limitation of liability and indemnities for balance.',
      'Make sure personal data handling meets GDPR, with a processing agreement where needed.',
      'Look for automatic renewal and termination notice periods.',
      'Confirm who owns the intellectual property created under the agreement.',
      'Record any deviation from our standard terms for approval.',
    ],
    closings: ['Share the document and I will mark up the clauses.', 'I can prepare a redline for counsel.'],
    tool: 'documents.search',
  },
  hr: {
    team: 'HR',
    openers: ['HR here, glad to help.', 'From HR, a people-first answer.'],
    points: [
      'Check the applicable policy and the employment contract before replying.',
      'Keep the process consistent with how similar cases were handled.',
      'Document the conversation and agree next steps in writing.',
      'Involve the line manager early, and keep the details confidential.',
      'Mind local labour rules on notice, leave and working time.',
      'Plan onboarding or follow-up so nothing falls between the cracks.',
    ],
    closings: ['I can prepare the letter or checklist next.', 'Tell me the role or person and I will tailor this.'],
    tool: 'policies.search',
  },
  operations: {
    team: 'Operations',
    openers: ['Operations here, let us keep things moving.', 'From Operations, the practical steps.'],
    points: [
      'Check current stock and open purchase orders before committing dates.',
      'Confirm lead times with the supplier in writing.',
      'Identify the bottleneck step and give it an owner.',
      'Set a contingency: a second supplier or a buffer of critical items.',
      'Track shipments daily until delivery is confirmed.',
      'Write the process down so the next run is faster.',
    ],
    closings: ['I can raise the purchase order once you approve.', 'Shall I schedule a check-in with the supplier?'],
    tool: 'inventory.check',
  },
  analytics: {
    team: 'Analytics',
    openers: ['Analytics here; let the data speak.', 'From Analytics, how I would measure it.'],
    points: [
      'State the question precisely and the metric that answers it.',
      'Pull the data for a comparable period to avoid seasonal noise.',
      'Segment by cohort before drawing conclusions from totals.',
      'Check the sample size; small groups swing wildly.',
      'Visualise the trend with a simple chart and annotate the changes.',
      'Share the query so the numbers can be reproduced.',
    ],
    closings: ['I can build the dashboard next.', 'Tell me the period and I will run the numbers.'],
    tool: 'metrics.query',
  },
  strategy: {
    team: 'Strategy',
    openers: ['Strategy here, looking at the bigger picture.', 'From Strategy, a structured view.'],
    points: [
      'Frame the decision and the time horizon before weighing options.',
      'Map the main competitors and where we can win.',
      'Run a quick SWOT to surface risks early.',
      'Size the opportunity with a conservative and an ambitious case.',
      'Translate the choice into two or three measurable objectives.',
      'Agree a checkpoint to revisit the plan with fresh data.',
    ],
    closings: ['I can turn this into a one-page plan.', 'Shall I prepare the options for the leadership meeting?'],
    tool: 'market.research',
  },
  it: {
    team: 'IT',
    openers: ['IT support here.', 'From IT, let us get you unblocked.'],
    points: [
      'Restart the device and check whether the issue persists.',
      'Confirm the account is active and the password has not expired.',
      'Check the VPN or network connection before anything else.',
      'Make sure the software is on the latest supported version.',
      'Keep a backup before changing settings.',
      'Open a ticket with the error message so the fix is tracked.',
    ],
    closings: ['I can open the ticket for you.', 'Tell me the device and I will check the asset record.'],
    tool: 'assets.lookup',
  },
  'customer-care': {
    team: 'Customer care',
    openers: ['Customer care here, happy to help.', 'Thanks for reaching out to Customer care.'],
    points: [
      'Acknowledge the customer and restate the issue in their words.',
      'Check the order and ticket history before promising anything.',
      'Offer a concrete next step and a date by which it happens.',
      'Apply the warranty or refund policy consistently.',
      'Keep the tone warm and the reply short.',
      'Close the loop and ask whether the answer solved it.',
    ],
    closings: ['I can draft the reply now.', 'Tell me the ticket and I will follow it up.'],
    tool: 'helpdesk.search',
  },
};
