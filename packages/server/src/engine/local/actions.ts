/**
 * @module What the local engine does beyond text: drafts it writes and sensitive actions it asks a
 * person to approve, detected from the request by fixed rules (deterministic, documented here).
 *
 * Drafts: a request that asks to draft/write/compose/prepare/send/reply with an email, proposal,
 * reply, message (post, newsletter) or document (letter, memo, report) yields a draft of that
 * kind. Without such an ask, Sales drafts a follow-up email and Customer care a reply, their
 * everyday deliverables.
 * Approvals (action `<area>.<verb>`): sending mail (`email.send`), changing a CRM record
 * (`crm.update`), booking a meeting (`calendar.create`), paying (`payment.initiate`), publishing
 * (`content.publish`), signing (`contract.sign`), granting access (`access.grant`) and deleting
 * records (`record.delete`) each need a person's approval.
 */
import type { DepartmentSlug } from '../../vocabulary/catalog.ts';
import { words } from '../../vocabulary/router.ts';

export interface Draft {
  readonly kind: DraftKind;
  readonly subject: string;
  readonly body: string;
}

export interface ApprovalRequest {
  readonly action: string;
  readonly summary: string;
}

const DRAFT_VERBS = /^(draft|write|compose|prepare|send|reply|respond)/;
/** The contract's `draft.created` kinds. */
export const DRAFT_KINDS = ['email', 'proposal', 'reply', 'message', 'document'] as const;
type DraftKind = (typeof DRAFT_KINDS)[number];

const KIND_WORDS: readonly [RegExp, DraftKind][] = [
  [/^(e-?mails?|mails?)$/, 'email'],
  [/^(proposals?|offers?|quotes?|quotations?)$/, 'proposal'],
  [/^(replies|reply|responses?|answers?)$/, 'reply'],
  [/^(messages?|posts?|newsletters?|announcements?)$/, 'message'],
  [/^(documents?|letters?|memos?|reports?|articles?|briefs?)$/, 'document'],
];

const DEFAULT_DRAFT: Partial<Record<DepartmentSlug, DraftKind>> = { sales: 'email', 'customer-care': 'reply' };

/**
 * What the local engine reads of a request to find the draft and the approvals it asks for: the
 * first 50,000 characters, like the router (`MAX_CHARS_PER_MESSAGE`), so the cost of a message
 * near the 500,000-character limit stays small.
 */
const MAX_READ_CHARS = 50_000;

function wordsRead(text: string): string[] {
  return words(text.slice(0, MAX_READ_CHARS));
}

/** The draft the request asks for (or the department's default one), or null. */
export function draftFor(text: string, department: DepartmentSlug, team: string): Draft | null {
  const tokens = wordsRead(text);
  const asked = tokens.some((t) => DRAFT_VERBS.test(t)) ? KIND_WORDS.find(([pattern]) => tokens.some((t) => pattern.test(t)))?.[1] : undefined;
  const kind = asked ?? DEFAULT_DRAFT[department];
  if (!kind) return null;
  return { kind, subject: subjectFor(kind, team), body: bodyFor(kind, team) };
}

const APPROVAL_RULES: readonly { action: string; summary: string; when: (tokens: readonly string[]) => boolean }[] = [
  {
    action: 'email.send',
    summary: 'Send the drafted email to its recipients.',
    when: (t) => has(t, /^(send|sending|sent)$/) && has(t, /^(e-?mails?|mails?|messages?|newsletters?)$/),
  },
  {
    action: 'crm.update',
    summary: 'Update the CRM record (for example move it to another stage).',
    when: (t) => has(t, /^(move|moving|update|updating|change)$/) && has(t, /^(crm|records?|deals?|stages?|pipeline)$/),
  },
  {
    action: 'calendar.create',
    summary: 'Create the calendar event and invite the participants.',
    when: (t) => has(t, /^(schedule|scheduling|book|booking)$/) && has(t, /^(meetings?|calls?|appointments?|events?|calendar|demo)$/),
  },
  {
    action: 'payment.initiate',
    summary: 'Make the payment or refund.',
    when: (t) => has(t, /^(pay|paying|transfer|wire|refund|reimburse)$/),
  },
  {
    action: 'content.publish',
    summary: 'Publish the content on the public channel.',
    when: (t) => has(t, /^(publish|publishing)$/),
  },
  {
    action: 'contract.sign',
    summary: 'Sign the agreement on behalf of the company.',
    when: (t) => has(t, /^(sign|signing|countersign)$/) && has(t, /^(contracts?|agreements?|nda|offer)$/),
  },
  {
    action: 'access.grant',
    summary: 'Grant access to a system or account.',
    when: (t) => has(t, /^(grant|give|giving)$/) && has(t, /^(access|permissions?|admin)$/),
  },
  {
    action: 'record.delete',
    summary: 'Delete records permanently.',
    when: (t) => has(t, /^(delete|deleting|erase|purge)$/),
  },
];

/** Sensitive actions the request asks for, in the order of the rules above. */
export function approvalsFor(text: string): ApprovalRequest[] {
  const tokens = wordsRead(text);
  return APPROVAL_RULES.filter((rule) => rule.when(tokens)).map(({ action, summary }) => ({ action, summary }));
}

function has(tokens: readonly string[], pattern: RegExp): boolean {
  return tokens.some((t) => pattern.test(t));
}

function subjectFor(kind: DraftKind, team: string): string {
  switch (kind) {
    case 'email':
      return `Following up from the ${team} team`;
    case 'proposal':
      return `Proposal from the ${team} team`;
    case 'reply':
      return 'Re: your request';
    default:
      return `${kind.charAt(0).toUpperCase()}${kind.slice(1)} from the ${team} team`;
  }
}

/** Drafts do not quote the request: they go to third parties, so they carry only our own wording. */
function bodyFor(kind: DraftKind, team: string): string {
  const opening = kind === 'message' ? 'A quick update from our team.' : 'Hello,\n\nThank you for your time.';
  const middle =
    kind === 'proposal'
      ? 'We propose a first phase with clear deliverables, a fixed scope and a review after four weeks.'
      : 'Here is a short summary and the next step we suggest. Could we confirm a time this week?';
  const sign = kind === 'message' ? '' : `\n\nBest regards,\nThe ${team} team`;
  return `${opening} ${middle}${sign}`;
}
