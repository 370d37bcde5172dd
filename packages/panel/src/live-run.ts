/**
 * @module What the run page shows while it follows a run's events: the answer so far, the agent it was routed to,
 * the tool calls, approvals requested and drafts as they arrive, the usage, the terminal event, and one sentence
 * for the page's status region (said on each change of state, not on every fragment).
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
  approvals: Of<'approval.requested'>[];
  drafts: Of<'draft.created'>[];
  usage: Schemas['RunUsage'] | undefined;
  end: TerminalRunEvent | undefined;
  /** `stopped`: the live view ended on an error before the terminal event. */
  connection: Connection | 'connecting' | 'stopped';
  /** The latest change worth saying, for the status region. */
  said: string;
}

export const NOT_YET_LIVE: LiveRun = {
  answer: '',
  agentSlug: undefined,
  routedTo: undefined,
  toolCalls: [],
  approvals: [],
  drafts: [],
  usage: undefined,
  end: undefined,
  connection: 'connecting',
  said: 'Connecting to the run’s live events…',
};

export function applyRunEvent(live: LiveRun, event: RunEvent): LiveRun {
  switch (event.type) {
    case 'run.created':
      return { ...live, agentSlug: event.agentSlug };
    case 'run.routed':
      // Sent for every run: the orchestrator's choice, or the addressed department itself.
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
      return { ...live, approvals: [...live.approvals, event], said: `Asked for approval: ${event.action}.` };
    case 'draft.created':
      return { ...live, drafts: [...live.drafts, event], said: `Wrote a draft ${event.kind}: ${event.subject}.` };
    case 'run.usage':
      return { ...live, usage: event.usage };
    case 'run.completed':
      return { ...live, end: event, said: 'The run completed.' };
    case 'run.failed':
      return { ...live, end: event, said: `The run failed: ${event.message}` };
    case 'run.canceled':
      return { ...live, end: event, said: 'The run was canceled.' };
    case 'run.restarted':
      // The execution that wrote what is shown stopped midway; a new one starts the answer again.
      return { ...live, answer: '', toolCalls: [], approvals: [], drafts: [], said: 'The run started again: the instance running it stopped.' };
    default:
      // An event type this panel does not know yet (a later contract): nothing to show.
      return live;
  }
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
