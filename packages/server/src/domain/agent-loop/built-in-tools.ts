/**
 * @module The built-in tools every agent is offered beside its connected integrations' tools:
 *
 * - `draft.create` (kind, subject, body): writes a draft for a person to review (`GET /drafts`,
 *   `draft.created`). It only records: the draft is written when the run completes, as before.
 * - the sensitive actions (`email.send`, `crm.update`, `calendar.create`, `payment.initiate`,
 *   `content.publish`, `contract.sign`, `access.grant`, `record.delete`): asking for one records an
 *   approval request (`approval.created` when the run completes). The service performs none of
 *   them: once a person approves, `approval.decided` hands the action to the workspace's own
 *   systems (a webhook subscribed to it). So a built-in action always waits for approval, whatever
 *   the agent's `approvals` say. A connected integration's tool of the same name replaces it.
 */
import type { DraftKind } from '../../engine/index.ts';
import type { AgentTool, ToolOutcome } from './tool.ts';

/** The contract's `draft.created` kinds. */
const DRAFT_KINDS: readonly DraftKind[] = ['email', 'proposal', 'reply', 'message', 'document'];
const MAX_SUBJECT_CHARS = 200;
const MAX_BODY_CHARS = 20_000;

export interface DraftArguments {
  readonly kind: DraftKind;
  readonly subject: string;
  readonly body: string;
}

function isDraftKind(value: unknown): value is DraftKind {
  return DRAFT_KINDS.some((kind) => kind === value);
}

/** The draft a `draft.create` call describes, or why it describes none. */
export function draftOf(args: Readonly<Record<string, unknown>>): DraftArguments | string {
  const { kind, subject, body } = args;
  if (!isDraftKind(kind)) return `kind must be one of ${DRAFT_KINDS.join(', ')}.`;
  if (typeof subject !== 'string' || subject.trim() === '' || subject.length > MAX_SUBJECT_CHARS)
    return `subject must be a text of 1 to ${MAX_SUBJECT_CHARS} characters.`;
  if (typeof body !== 'string' || body.trim() === '' || body.length > MAX_BODY_CHARS) return `body must be a text of 1 to ${MAX_BODY_CHARS} characters.`;
  return { kind, subject, body };
}

export const DRAFT_TOOL: AgentTool = {
  definition: {
    name: 'draft.create',
    description: 'Write a draft (an email, proposal, reply, message or document) for a person to review. Nothing is sent.',
    inputSchema: {
      type: 'object',
      properties: {
        kind: { type: 'string', enum: [...DRAFT_KINDS] },
        subject: { type: 'string', maxLength: MAX_SUBJECT_CHARS },
        body: { type: 'string', maxLength: MAX_BODY_CHARS },
      },
      required: ['kind', 'subject', 'body'],
      additionalProperties: false,
    },
  },
  readOnly: true,
  integrationId: null,
  async call(args): Promise<ToolOutcome> {
    const draft = draftOf(args);
    if (typeof draft === 'string') return { ok: false, error: draft };
    return { ok: true, content: `Draft ${draft.kind} "${draft.subject}" saved for a person to review; nothing was sent.` };
  },
};

const ACTIONS: readonly (readonly [name: string, description: string])[] = [
  ['email.send', 'Send an email to its recipients.'],
  ['crm.update', 'Update a CRM record (for example move a deal to another stage).'],
  ['calendar.create', 'Create a calendar event and invite the participants.'],
  ['payment.initiate', 'Make a payment or a refund.'],
  ['content.publish', 'Publish content on a public channel.'],
  ['contract.sign', 'Sign an agreement on behalf of the company.'],
  ['access.grant', 'Grant access to a system or an account.'],
  ['record.delete', 'Delete records permanently.'],
];

function actionTool(name: string, description: string): AgentTool {
  return {
    definition: {
      name,
      description: `${description} Waits for a person's approval; once approved, the workspace's own systems perform it.`,
      inputSchema: {
        type: 'object',
        properties: { summary: { type: 'string', description: 'What exactly is to be done, for the person who approves it.' } },
        required: ['summary'],
      },
    },
    readOnly: false,
    integrationId: null,
    // Called only once a person approved it (every call of it asks): the service itself performs nothing; the
    // workspace's own systems act on `approval.decided`.
    async call(): Promise<ToolOutcome> {
      return { ok: true, content: "Approved by a person and handed to the workspace's own systems to perform." };
    },
  };
}

export const ACTION_TOOLS: readonly AgentTool[] = ACTIONS.map(([name, description]) => actionTool(name, description));

export const BUILT_IN_TOOLS: readonly AgentTool[] = [DRAFT_TOOL, ...ACTION_TOOLS];

/** A built-in action: performed by nobody here, so every call of it asks for approval. */
export function isBuiltInAction(tool: AgentTool): boolean {
  return ACTION_TOOLS.includes(tool);
}
