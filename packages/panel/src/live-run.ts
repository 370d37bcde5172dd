/**
 * @module What the run page shows while it follows a run's events: the answer so far, the agent it was routed to,
 * the tool calls, approvals requested (and how each was decided) and drafts as they arrive, the approval the run
 * waits for, the usage, the terminal event, and one sentence for the page's status region (said on each change of
 * state, not on every fragment).
 */
import type { Schemas } from './api.ts';
import type { Connection, RunEvent, TerminalRunEvent } from './run-events.ts';

type Of<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;

export interface LiveRun {
  answer: string;
  /** The agent the run was addressed to (from `run.created`). */
  agentSlug: Schemas['AgentSlug'] | undefined;
  routedTo: Schemas['AgentSlug'] | undefined;
  toolCalls: Of<'tool.called'>[];
  approvals: LiveApproval[];
  drafts: Of<'draft.created'>[];
  usage: Schemas['RunUsage'] | undefined;
  /**
   * The approval the run waits for (it holds no budget until the decision): from the run's `waitingFor` when the page
   * starts following, then from `approval.requested` (one with an `approvalId` pauses the run) until `approval.decided`.
   */
  waiting: Waiting | undefined;
  end: TerminalRunEvent | undefined;
  /** `stopped`: the live view ended on an error before the terminal event. */
  connection: Connection | 'connecting' | 'stopped';
  /** The latest change worth saying, for the status region. */
  said: string;
}

/** An approval requested, and once decided, the decision (`expired`: unanswered in time, taken as a rejection). */
export type LiveApproval = Of<'approval.requested'> & { decision?: Decision };
export type Decision = Of<'approval.decided'>['decision'];

export interface Waiting {
  approvalId: Schemas['ApprovalId'];
  action: string;
  summary: string;
  expiresAt: string | undefined;
}

export const NOT_YET_LIVE: LiveRun = {
  answer: '',
  agentSlug: undefined,
  routedTo: undefined,
  toolCalls: [],
  approvals: [],
  drafts: [],
  usage: undefined,
  waiting: undefined,
  end: undefined,
  connection: 'connecting',
  said: 'Connecting to the run’s live events…',
};

export function applyRunEvent(live: LiveRun, event: RunEvent): LiveRun {
  switch (event.type) {
    case 'run.created':
      return { ...live, agentSlug: event.agentSlug };
    case 'run.routed':
      // Sent for every run: the orchestrator's choice, or the addressed department itself; again at each handoff of a
      // run the orchestrator delegates (the department taking that part).
      return {
        ...live,
        routedTo: event.agentSlug,
        said: event.agentSlug === live.agentSlug ? `${event.agentSlug} is answering.` : `Routed to ${event.agentSlug}.`,
      };
    case 'text.delta':
      return { ...live, answer: live.answer + event.delta };
    case 'tool.called':
      return { ...live, toolCalls: [...live.toolCalls, event], said: `Called the tool ${event.name}.` };
    case 'approval.requested':
      if (event.approvalId === undefined)
        // Without an id the run does not wait: the approval is created when the run completes.
        return { ...live, approvals: [...live.approvals, event], said: `Asked for approval: ${event.action}.` };
      return {
        ...live,
        approvals: [...live.approvals, event],
        waiting: { approvalId: event.approvalId, action: event.action, summary: event.summary, expiresAt: event.expiresAt },
        said: `Waiting for an approval: ${event.action}.`,
      };
    case 'approval.decided':
      return {
        ...live,
        approvals: live.approvals.map((a) => (a.approvalId === event.approvalId ? { ...a, decision: event.decision } : a)),
        waiting: live.waiting?.approvalId === event.approvalId ? undefined : live.waiting,
        said: DECIDED[event.decision],
      };
    case 'run.resumed':
      return { ...live, said: 'The run resumed.' };
    case 'draft.created':
      return { ...live, drafts: [...live.drafts, event], said: `Wrote a draft ${event.kind}: ${event.subject}.` };
    case 'run.usage':
      return { ...live, usage: event.usage };
    case 'run.completed':
      return { ...live, end: event, waiting: undefined, said: 'The run completed.' };
    case 'run.failed':
      return { ...live, end: event, waiting: undefined, said: `The run failed: ${event.message}` };
    case 'run.canceled':
      // A canceled run's approval expires with it.
      return { ...live, end: event, waiting: undefined, said: 'The run was canceled.' };
    case 'run.restarted':
      // The execution that wrote what is shown stopped midway; a new one starts the answer again.
      return {
        ...live,
        answer: '',
        toolCalls: [],
        approvals: [],
        drafts: [],
        waiting: undefined,
        said: 'The run started again: the instance running it stopped.',
      };
    default:
      // An event type this panel does not know yet (a later contract): nothing to show.
      return live;
  }
}

/** What the status region says of a decision; `run.resumed` (or `run.failed`) follows. */
const DECIDED: Record<Decision, string> = {
  approved: 'Approved by a person; the run goes on.',
  rejected: 'Rejected by a person; the run goes on without that action.',
  expired: 'The approval expired unanswered; the run goes on without that action.',
};

/**
 * The department the run page names: the run's record (`routedTo`) as last read, unless the run is followed (`live`)
 * and its latest `run.routed` names another agent than the one addressed (a handoff since that read).
 */
export function routedToShown(run: Pick<Schemas['Run'], 'agentSlug' | 'routedTo'> | undefined, live: LiveRun | undefined): Schemas['AgentSlug'] | null {
  if (live?.routedTo && live.routedTo !== (run?.agentSlug ?? live.agentSlug)) return live.routedTo;
  return run?.routedTo ?? null;
}

/** Where the page starts following: the approval the run already waits for, as its last read says. */
export function startLive(waitingFor: Schemas['PendingApproval'] | undefined): LiveRun {
  if (!waitingFor) return NOT_YET_LIVE;
  const { id, action, summary, expiresAt } = waitingFor;
  return { ...NOT_YET_LIVE, waiting: { approvalId: id, action, summary, expiresAt } };
}

export function applyConnection(live: LiveRun, connection: Connection): LiveRun {
  if (connection === live.connection) return live;
  const said = connection === 'reconnecting' ? 'The connection dropped; resuming where it stopped…' : 'Live: the page follows the run as it happens.';
  return { ...live, connection, said };
}

/** The live view ended on an error (shown beside it), before the terminal event. */
export function stopped(live: LiveRun): LiveRun {
  return live.end ? live : { ...live, connection: 'stopped', said: 'Live updates stopped.' };
}

/** The status a terminal event leaves the run in (shown before the run is read again). */
export function statusAfter(end: TerminalRunEvent): Schemas['RunStatus'] {
  return end.type === 'run.completed' ? 'completed' : end.type === 'run.failed' ? 'failed' : 'canceled';
}
