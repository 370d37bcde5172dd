/**
 * @module The agent loop's state: a plain object (JSON in and out), so a run can be checkpointed
 * between two steps and continued from it (loop.ts `continueAgentLoop`), on this instance or
 * another. It holds what the loop added; the run's own messages stay with the run.
 */
import type { ConversationMessage, TokenUsage, ToolCallRequest } from '../../engine/index.ts';
import type { StepDraft } from '../runs/steps.ts';

export interface LoopState {
  /** The loop's turns after the run's messages: the assistant turns that asked for tools, and the results. */
  turns: ConversationMessage[];
  /** The steps the loop recorded (model calls, tool calls, drafts, approvals), written when the run closes. */
  steps: StepDraft[];
  /** Model calls made so far (the agent's `stepLimit` bounds them). */
  modelCalls: number;
  /** The answer so far, every step's text (raw: redacted when it is sent and stored). */
  text: string;
  /** What the run is billed so far: within its reservation. */
  billed: TokenUsage;
  /** What the engine reported (or what was counted); beyond `billed` it is recorded, not billed. */
  reported: TokenUsage;
  /** The calls the last model call asked for that have no result yet (the loop executes them next). */
  pending: ToolCallRequest[];
  /** The reservation or the output cap was reached: the loop stopped as an answer cut at its cap does. */
  cut: boolean;
  /** The loop has its answer (or was stopped): nothing more to do. */
  done: boolean;
  /**
   * The call (the first of `pending`) that waits for a person's decision (approval.ts): the loop stopped there, and
   * the run pauses (domain/runs/pause.ts) until the decision lets it go on (`settleWaitingCall`).
   */
  waiting: WaitingCall | null;
  /**
   * The part of the run a department is doing for the orchestrator (a handoff: handoff.ts), or absent: the loop
   * goes on inside it until the department answers, and a call in it may wait for a decision as any other.
   */
  part?: DelegatedPart | null;
  /** The departments that answered a part of the run, in order (the last one answered, `routedTo` unless a part runs). Absent: none. */
  consulted?: string[];
}

/**
 * The department the orchestrator routed the run to so far (the run's `routedTo`): the one whose part runs or waits
 * for a decision, else the last that answered a part; undefined before the first handoff (and for a run that does
 * not delegate).
 */
export function routedToOf(state: LoopState): string | undefined {
  return state.part?.agentSlug ?? state.consulted?.at(-1);
}

/**
 * A department's part of an orchestrator's run: its own turns and calls (its conversation is the run's, then what
 * it is asked), its model calls, and its answer so far. Its steps, usage and limits are the run's.
 */
export interface DelegatedPart {
  agentSlug: string;
  /**
   * The orchestrator's handoff call this part answers (its answer is that call's result); null when the model chose
   * no department and the keyword router's answers in its place (its text is the run's answer).
   */
  callId: string | null;
  /** What the orchestrator asked it (a user turn after the conversation), or null. */
  request: string | null;
  turns: ConversationMessage[];
  pending: ToolCallRequest[];
  modelCalls: number;
  /** Its answer so far (raw), for a part that answers the orchestrator. */
  text: string;
}

/** A call that waits for a decision: the action the person approves or rejects, and what it would do. */
export interface WaitingCall {
  call: ToolCallRequest;
  action: string;
  summary: string;
  /** The agent whose call it is (a department's, inside a part); absent: the run's. */
  agentSlug?: string;
}

export function initialLoopState(): LoopState {
  return {
    turns: [],
    steps: [],
    modelCalls: 0,
    text: '',
    billed: { inputTokens: 0, outputTokens: 0 },
    reported: { inputTokens: 0, outputTokens: 0 },
    pending: [],
    cut: false,
    done: false,
    waiting: null,
  };
}
