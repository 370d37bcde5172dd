/**
 * @module `requestApproval`: the one place where a tool call that needs a person's approval goes
 * (`needsApproval` in tool.ts, and every built-in action). For now it records the request, as
 * drafts and approvals are recorded: an `approval` step (its tool call `pending_approval`) and the
 * `approval.requested` run event; the approval and `approval.created` are written when the run
 * completes. The model is told the action waits and was not performed, and the loop goes on.
 *
 * This function is where a durable pause takes over: checkpoint the loop's state (state.ts), settle
 * what was spent, and continue the loop (`continueAgentLoop`) with the decision as the call's result.
 */
import type { ToolCallRequest } from '../../engine/index.ts';
import type { ExecutionEventBody } from '../run-events/log.ts';
import type { LoopState } from './state.ts';
import type { AgentTool, ToolOutcome } from './tool.ts';

/** What the model is told of an action that waits for a decision. */
export const AWAITING_APPROVAL = "Waiting for a person's approval; not performed yet.";
const MAX_SUMMARY_CHARS = 500;

export interface ApprovalRequest {
  readonly call: ToolCallRequest;
  readonly tool: AgentTool;
  /** The agent that asks. */
  readonly agentSlug: string;
  readonly state: LoopState;
  /** Adds an event to the run's log (redacted by the caller). */
  readonly record: (body: ExecutionEventBody) => void;
  readonly redact: (text: string) => string;
}

export async function requestApproval(request: ApprovalRequest): Promise<ToolOutcome> {
  const { call, tool, agentSlug, state } = request;
  const summary = summaryOf(call, tool);
  state.steps.push({
    kind: 'approval',
    agentSlug,
    summary: `Asked for approval: ${summary}`,
    toolCall: { name: tool.definition.name, arguments: { ...call.arguments }, result: null, status: 'pending_approval' },
    approval: { action: tool.definition.name, summary },
  });
  request.record({ type: 'approval.requested', action: request.redact(tool.definition.name), summary: request.redact(summary) });
  return { ok: true, content: AWAITING_APPROVAL };
}

/** The call's own `summary` when it gives one, else what the tool does; one line, bounded. */
function summaryOf(call: ToolCallRequest, tool: AgentTool): string {
  const given = call.arguments.summary;
  const text = (typeof given === 'string' && given.trim() !== '' ? given : tool.definition.description).replace(/\s+/g, ' ').trim();
  return text.length > MAX_SUMMARY_CHARS ? `${text.slice(0, MAX_SUMMARY_CHARS - 1)}…` : text;
}
