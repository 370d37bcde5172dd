/**
 * @module The agent loop: model call → text and tool calls → the tools executed → their results,
 * redacted, fed back → the next model call, until the model answers without tool calls. Each model
 * call is a `model_call` step; each tool call a `tool_call` step (a `draft` step for `draft.create`,
 * an `approval` step for a call that needs approval: approval.ts) with its record and its run event.
 * The text of every step goes through the stream redactor to the run's stream, in order.
 *
 * Limits, all the run's, over the whole loop:
 * - The step limit (the agent's `stepLimit`) counts model calls. The last call it allows is offered
 *   no tools, so it answers in text; tool calls it still asks for are not performed.
 * - The output cap is shared: each call may produce at most what the earlier ones left of it.
 * - The reservation (the input estimate plus the output cap) covers every call: before each one,
 *   its conversation is counted, and each call may cost at most what is left; a call that would not
 *   fit is not made. Either way the loop stops as an answer cut at its cap (`cut`): the run ends
 *   with the text so far, or fails with the kill switch whose limit shrank its reservation. Each
 *   step is billed what its engine reported, within what was left; the rest is recorded unbilled.
 *   (What an engine counts beyond the conversation, such as the instructions and the tool
 *   definitions, is billed the same way, within the reservation.)
 * - The run's abort signal stops the engine and the tool under way; each tool call also has a
 *   timeout (an `ok: false` outcome the model is told).
 *
 * The loop's state is a plain object (state.ts): `continueAgentLoop` goes on from a saved one.
 */
import {
  countMessageTokensAsync,
  countTextTokensAsync,
  EngineError,
  type Engines,
  type EngineRequest,
  type TokenUsage,
  type ToolCallRequest,
} from '../../engine/index.ts';
import type { Redactor } from '../../redact/index.ts';
import { getAgent } from '../../vocabulary/catalog.ts';
import type { ExecutionEventBody } from '../run-events/log.ts';
import { createOutputCap } from '../spending/output-cap.ts';
import type { AgentDefinitions } from './agents.ts';
import { requestApproval } from './approval.ts';
import { BUILT_IN_TOOLS, DRAFT_TOOL, draftOf, isBuiltInAction } from './built-in-tools.ts';
import { initialLoopState, type LoopState } from './state.ts';
import { type AgentDefinition, type AgentTool, needsApproval, type ToolOutcome, type ToolSource, toolsOfAgent } from './tool.ts';
import { TOOL_NAME } from './tool-name.ts';

/** How long a tool call may take before the model is told it did not answer. */
export const TOOL_TIMEOUT_MS = 30_000;
/** A tool's result is cut to this many characters before the model reads it. */
const MAX_RESULT_CHARS = 20_000;

export interface LoopContext {
  engines: Engines;
  redactor: Redactor;
  tools: ToolSource;
  agents: AgentDefinitions;
  toolTimeoutMs?: number | undefined;
}

/** What the loop needs of the run. */
export interface LoopRun {
  readonly workspaceId: string;
  /** The agent that answers. */
  readonly answeredBy: string;
  /** The first model call's request (alias, conversation, knobs); `maxTokens` is set per call. */
  readonly request: Omit<EngineRequest, 'signal' | 'stream' | 'instructions' | 'tools'>;
  /** Tokens the reservation holds: the input estimate plus the output cap. */
  readonly reservedTokens: number;
  /** Output tokens the whole loop may produce. */
  readonly outputCap: number;
}

/** Where the loop's output goes while it runs. */
export interface LoopIO {
  /** Stops the engine and the tools: the run was canceled, its client left, or the server stops. */
  readonly signal: AbortSignal;
  /** Whether the engine streams (false: a synchronous invocation). */
  readonly stream: boolean;
  /** Adds an event (not text) to the run's log. */
  record(body: ExecutionEventBody): void;
  /** Sends a redacted text fragment (to the run's log and the caller's stream). */
  fragment(text: string): Promise<void>;
}

export interface LoopOutcome {
  readonly state: LoopState;
  /** Undefined when the loop ended with an answer (or at a limit); else an EngineError, or what broke. */
  readonly failure: unknown;
}

/** Runs the loop for a run, from its start. Never throws: a failure is in the outcome. */
export function runAgentLoop(ctx: LoopContext, run: LoopRun, io: LoopIO): Promise<LoopOutcome> {
  return continueAgentLoop(ctx, run, io, initialLoopState());
}

/** Goes on from `state` (a fresh one, or one saved between two steps). Never throws. */
export async function continueAgentLoop(ctx: LoopContext, run: LoopRun, io: LoopIO, state: LoopState): Promise<LoopOutcome> {
  try {
    const agent = await ctx.agents.get(run.workspaceId, run.answeredBy);
    const tools = offeredTools(await ctx.tools.toolsOf(run.workspaceId), agent);
    const byName = new Map(tools.map((tool) => [tool.definition.name, tool]));
    while (!state.done && state.waiting === null) {
      if (state.pending.length > 0) {
        await callTools(ctx, run, io, state, agent, byName);
        continue;
      }
      const last = state.modelCalls + 1 >= agent.stepLimit;
      await modelCall(ctx, run, io, state, agent, last ? [] : tools);
    }
    return { state, failure: undefined };
  } catch (failure) {
    state.done = true;
    return { state, failure };
  }
}

/**
 * Makes the call that waited for a decision, now approved (the run resumed: domain/runs/resume-run.ts): the tool of
 * that name the agent is offered now, within the run's signal and the timeout. Never throws.
 */
export async function callWaitingTool(ctx: LoopContext, run: LoopRun, io: LoopIO, state: LoopState): Promise<ToolOutcome> {
  const waiting = state.waiting;
  if (!waiting) throw new Error('no call waits for a decision');
  try {
    const agent = await ctx.agents.get(run.workspaceId, run.answeredBy);
    const tool = offeredTools(await ctx.tools.toolsOf(run.workspaceId), agent).find((t) => t.definition.name === waiting.call.name);
    if (!tool) return { ok: false, error: `No tool named ${waiting.call.name} is available.` };
    return await callTool(tool, waiting.call.arguments, io.signal, ctx.toolTimeoutMs ?? TOOL_TIMEOUT_MS);
  } catch {
    return { ok: false, error: 'The tool failed.' };
  }
}

/** The built-in tools and the connected ones the agent may use; a connected tool replaces a built-in of its name. */
function offeredTools(connected: readonly AgentTool[], agent: AgentDefinition): AgentTool[] {
  const own = toolsOfAgent(connected, agent);
  const names = new Set(own.map((tool) => tool.definition.name));
  return [...BUILT_IN_TOOLS.filter((tool) => !names.has(tool.definition.name)), ...own];
}

/** One model call: its text to the stream, its usage to the state, its tool calls to `pending`. */
async function modelCall(ctx: LoopContext, run: LoopRun, io: LoopIO, state: LoopState, agent: AgentDefinition, tools: readonly AgentTool[]): Promise<void> {
  const messages = [...run.request.messages, ...state.turns];
  const estimate = await countMessageTokensAsync(messages);
  const room = run.reservedTokens - state.billed.inputTokens - state.billed.outputTokens;
  const maxTokens = Math.min(run.outputCap - state.billed.outputTokens, room - estimate);
  if (maxTokens < 1) {
    // The next call would cross the reservation: stop here, as an answer cut at its cap.
    state.cut = true;
    state.done = true;
    return;
  }
  state.modelCalls += 1;
  // The reservation is the ceiling of the run's cost: text beyond this call's share is cut here,
  // whatever the engine was told (a provider may ignore max_tokens).
  const cap = createOutputCap(maxTokens);
  const redactor = ctx.redactor.stream();
  const stop = new AbortController();
  const signal = AbortSignal.any([io.signal, stop.signal]);
  const calls: ToolCallRequest[] = [];
  let raw = '';
  let usage: TokenUsage | undefined;
  const send = async (text: string) => {
    const passed = cap.push(text);
    raw += passed;
    const out = redactor.push(passed);
    if (out !== '') await io.fragment(out);
    // Stop the engine: what it would still produce can be neither delivered nor billed.
    if (cap.cut) stop.abort();
  };
  try {
    try {
      const request: EngineRequest = {
        ...run.request,
        messages,
        instructions: agent.instructions,
        tools: tools.map((tool) => tool.definition),
        maxTokens,
        signal,
        stream: io.stream,
      };
      for await (const event of ctx.engines[run.request.alias].stream(request)) {
        // Once cut, only the engine's usage report is still read (recorded, not billed beyond the cap).
        if (cap.cut && event.type !== 'usage') continue;
        if (event.type === 'text') {
          // Each step's text follows the one before it in the answer, a blank line apart.
          if (raw === '' && state.text !== '' && !/\s$/.test(state.text)) await send('\n\n');
          await send(event.delta);
        } else if (event.type === 'tool_call') {
          calls.push({ id: event.id, name: event.name, arguments: event.arguments });
        } else {
          usage = { inputTokens: event.inputTokens, outputTokens: event.outputTokens };
        }
      }
    } catch (err) {
      // The abort that stopped the engine at the cap is ours, not a cancel nor a disconnect: the
      // answer is complete up to the cap, and what the engine counted so far is its report.
      if (!(cap.cut && err instanceof EngineError && err.reason === 'aborted' && !io.signal.aborted)) throw err;
      usage = { inputTokens: err.usage.inputTokens, outputTokens: Math.max(err.usage.outputTokens, cap.receivedTokens) };
    }
    // Stopped at the cap without a report: what it sent is the least it produced.
    if (!usage && cap.cut) usage = { inputTokens: estimate, outputTokens: cap.receivedTokens };
    // A stream that stops without its usage event broke upstream; never a complete answer.
    if (!usage) throw new EngineError('engine_error');
  } catch (err) {
    state.text += raw;
    charge(state, await failedUsage(err, raw, estimate), room, maxTokens, false);
    throw err;
  }
  const rest = redactor.end();
  if (rest !== '') await io.fragment(rest);
  state.text += raw;
  charge(state, usage, room, maxTokens, cap.cut);
  const name = getAgent(run.answeredBy)?.name ?? run.answeredBy;
  const asked = cap.cut || tools.length === 0 ? [] : calls;
  state.steps.push({
    kind: 'model_call',
    agentSlug: run.answeredBy,
    summary:
      asked.length > 0
        ? `${run.request.alias} asked for ${[...new Set(asked.map((call) => call.name))].join(', ')} as ${name}.`
        : `${run.request.alias} answered as ${name}.`,
  });
  if (cap.cut) state.cut = true;
  if (asked.length === 0) {
    state.done = true;
    return;
  }
  state.turns.push({ role: 'assistant', content: raw, toolCalls: asked });
  state.pending = asked;
}

/** Adds a call's usage: reported as is, billed within what was left of the reservation (`room`) and the call's output share. */
function charge(state: LoopState, usage: TokenUsage, room: number, maxTokens: number, cut: boolean): void {
  const outputTokens = cut ? maxTokens : Math.min(usage.outputTokens, maxTokens);
  const inputTokens = Math.min(usage.inputTokens, room - outputTokens);
  state.reported = { inputTokens: state.reported.inputTokens + usage.inputTokens, outputTokens: state.reported.outputTokens + usage.outputTokens };
  state.billed = { inputTokens: state.billed.inputTokens + inputTokens, outputTokens: state.billed.outputTokens + outputTokens };
}

/**
 * Tokens of a call that stopped early: what the engine reported with its error, or else counted
 * here from the conversation and the text received, so a disconnect or a cancel is still billed.
 */
async function failedUsage(failure: unknown, raw: string, estimate: number): Promise<TokenUsage> {
  const reported = failure instanceof EngineError ? failure.usage : { inputTokens: 0, outputTokens: 0 };
  const outputTokens = Math.max(reported.outputTokens, await countTextTokensAsync(raw));
  // The input counts once the engine began answering, or when the caller walked away mid-request.
  const began = outputTokens > 0 || reported.inputTokens > 0 || (failure instanceof EngineError && failure.reason === 'aborted');
  return { inputTokens: began ? Math.max(reported.inputTokens, estimate) : 0, outputTokens };
}

/** Executes the pending calls in order; each result (or error), redacted, becomes a tool turn. */
async function callTools(
  ctx: LoopContext,
  run: LoopRun,
  io: LoopIO,
  state: LoopState,
  agent: AgentDefinition,
  byName: ReadonlyMap<string, AgentTool>,
): Promise<void> {
  const redact = ctx.redactor.text;
  while (state.pending.length > 0) {
    if (io.signal.aborted) throw new EngineError('aborted');
    const call = state.pending[0]!;
    const tool = byName.get(call.name);
    let outcome: ToolOutcome;
    if (!tool) {
      outcome = { ok: false, error: `No tool named ${call.name} is available.` };
    } else if (isBuiltInAction(tool) || needsApproval(tool, agent)) {
      // The loop stops at this call: the run pauses until a person decides (approval.ts).
      requestApproval({ call, tool, agentSlug: run.answeredBy, state });
      return;
    } else {
      outcome = await callTool(tool, call.arguments, io.signal, ctx.toolTimeoutMs ?? TOOL_TIMEOUT_MS);
      if (io.signal.aborted) throw new EngineError('aborted');
      record(io, state, run.answeredBy, call, tool, outcome, redact);
    }
    // Only a name of the contract's form is recorded as a tool call (every offered tool's is: tool-name.ts).
    if (!tool && TOOL_NAME.test(call.name)) record(io, state, run.answeredBy, call, null, outcome, redact);
    state.turns.push({ role: 'tool', toolCallId: call.id, name: call.name, content: resultText(outcome, redact) });
    state.pending = state.pending.slice(1);
  }
}

/** What the model reads of an outcome: the result or the error, redacted (a tool's output is never trusted), bounded. */
function resultText(outcome: ToolOutcome, redact: (text: string) => string): string {
  // An error is said as the tool's failure (a line starting `Error:` reads as an error dump to the redactor).
  const text = redact(outcome.ok ? outcome.content : `The tool failed: ${outcome.error}`);
  return text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS - 1)}…` : text;
}

/** The call's step (a `draft` step for a draft written) and its `tool.called` event (and `draft.created`). */
function record(
  io: LoopIO,
  state: LoopState,
  agentSlug: string,
  call: ToolCallRequest,
  tool: AgentTool | null,
  outcome: ToolOutcome,
  redact: (text: string) => string,
): void {
  const name = call.name;
  const toolCall = {
    name,
    arguments: { ...call.arguments },
    result: outcome.ok ? outcome.content : outcome.error,
    status: outcome.ok ? ('completed' as const) : ('failed' as const),
  };
  io.record({ type: 'tool.called', name: redact(name), summary: redact(`Called ${name}.`) });
  const draft = tool === DRAFT_TOOL && outcome.ok ? draftOf(call.arguments) : null;
  if (draft !== null && typeof draft !== 'string') {
    state.steps.push({ kind: 'draft', agentSlug, summary: `Wrote a draft ${draft.kind}: ${draft.subject}`, toolCall, draft: { ...draft } });
    io.record({ type: 'draft.created', kind: draft.kind, subject: redact(draft.subject) });
    return;
  }
  state.steps.push({ kind: 'tool_call', agentSlug, summary: outcome.ok ? `Called ${name}.` : `Called ${name}; it failed.`, toolCall });
}

/** Calls a tool once, within the run's signal and the timeout; a throw, a timeout or an abort is an `ok: false` outcome. */
async function callTool(tool: AgentTool, args: Readonly<Record<string, unknown>>, signal: AbortSignal, timeoutMs: number): Promise<ToolOutcome> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), timeoutMs);
  const combined = AbortSignal.any([signal, timeout.signal]);
  let onAbort = () => {};
  // A tool that does not heed its signal is not waited for.
  const stopped = new Promise<ToolOutcome>((resolve) => {
    onAbort = () => resolve({ ok: false, error: signal.aborted ? 'The run was stopped.' : 'The tool did not answer in time.' });
    combined.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const called = tool.call(args, { signal: combined }).catch((): ToolOutcome => ({ ok: false, error: 'The tool failed.' }));
    return await Promise.race([called, stopped]);
  } finally {
    clearTimeout(timer);
    combined.removeEventListener('abort', onAbort);
  }
}
