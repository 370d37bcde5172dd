/**
 * @module `requestApproval`: the one place where a tool call that needs a person's approval goes
 * (`needsApproval` in tool.ts, and every built-in action). It records the `approval` step (its tool
 * call `pending_approval`) and stops the loop at that call (`state.waiting`): the run then pauses
 * (domain/runs/pause.ts writes the approval, `approval.created` and `approval.requested`, and
 * settles what was spent) and holds nothing until the decision. `settleWaitingCall` takes the
 * decision's outcome as the call's result when the run resumes (domain/runs/resume-run.ts), and
 * the loop goes on (`continueAgentLoop`).
 */
import type { ToolCallRequest } from '../../engine/index.ts';
import type { LoopState } from './state.ts';
import type { AgentTool, ToolOutcome } from './tool.ts';

const MAX_SUMMARY_CHARS = 500;

export interface ApprovalRequest {
  readonly call: ToolCallRequest;
  readonly tool: AgentTool;
  /** The agent that asks. */
  readonly agentSlug: string;
  readonly state: LoopState;
}

export function requestApproval(request: ApprovalRequest): void {
  const { call, tool, agentSlug, state } = request;
  const summary = summaryOf(call, tool);
  state.steps.push({
    kind: 'approval',
    agentSlug,
    summary: `Asked for approval: ${summary}`,
    toolCall: { name: tool.definition.name, arguments: { ...call.arguments }, result: null, status: 'pending_approval' },
  });
  state.waiting = { call, action: tool.definition.name, summary, agentSlug };
}

/** What the model and the run's record are told of a waiting call once it is decided (and, if approved, made). */
export type Decided = { readonly status: 'approved'; readonly outcome: ToolOutcome } | { readonly status: 'rejected' | 'expired' | 'unknown' };

/** The result the model reads for a decision that did not let the call be made. */
const NOT_MADE: Record<'rejected' | 'expired' | 'unknown', string> = {
  rejected: 'A person rejected this action; it was not performed.',
  expired: 'Nobody decided on this action in time; it was not performed.',
  unknown: 'The outcome of this action is unknown: the service stopped while it was being performed. It was not performed again.',
};

/**
 * The waiting call's outcome: its approval step records it (`completed` or `failed`, with the result), the
 * model reads it as the call's result (redacted), and the loop goes on with the calls after it.
 */
export function settleWaitingCall(state: LoopState, decided: Decided, redact: (text: string) => string): ToolOutcome {
  const waiting = state.waiting;
  if (!waiting) throw new Error('no call waits for a decision');
  const outcome: ToolOutcome = decided.status === 'approved' ? decided.outcome : { ok: false, error: NOT_MADE[decided.status] };
  const text = redact(outcome.ok ? outcome.content : outcome.error);
  const step = state.steps.findLast((s) => s.kind === 'approval' && s.toolCall?.status === 'pending_approval');
  if (step?.toolCall) step.toolCall = { ...step.toolCall, result: text, status: outcome.ok ? 'completed' : 'failed' };
  // The call is the department's inside a part (loop.ts), else the run's agent's.
  const frame = state.part ?? state;
  frame.turns.push({ role: 'tool', toolCallId: waiting.call.id, name: waiting.call.name, content: outcome.ok ? text : `The tool failed: ${text}` });
  frame.pending = frame.pending.filter((call) => call.id !== waiting.call.id);
  state.waiting = null;
  return outcome;
}

/** The call's own `summary` when it gives one, else what the tool does; one line, bounded. */
function summaryOf(call: ToolCallRequest, tool: AgentTool): string {
  const given = call.arguments.summary;
  const text = (typeof given === 'string' && given.trim() !== '' ? given : tool.definition.description).replace(/\s+/g, ' ').trim();
  return text.length > MAX_SUMMARY_CHARS ? `${text.slice(0, MAX_SUMMARY_CHARS - 1)}…` : text;
}
