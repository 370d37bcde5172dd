/**
 * @module The agent loop: model call → text and tool calls → the tools executed → their results,
 * redacted, fed back → the next model call, until the model answers without tool calls. Each model
 * call is a `model_call` step; each tool call a `tool_call` step (a `draft` step for `draft.create`,
 * an `approval` step for a call that needs approval: approval.ts) with its record and its run event.
 * The text of every step goes through the stream redactor to the run's stream, in order.
 *
 * The orchestrator delegates when its run lists departments (`LoopRun.departments`: on a real model, `Engine.delegates`):
 * its calls offer one handoff tool per department (handoff.ts) besides its own tools. A handoff runs that part of the
 * run as the department (`state.part`: its instructions, its tools, its approvals; the conversation, then what it is
 * asked), as steps of the same run, and its answer, redacted, is the handoff's result the orchestrator reads; it may
 * consult several departments, one after the other. The departments' text goes to the orchestrator, not to the
 * caller; the orchestrator's text waits for its call's end until a department has answered, so that an answer
 * choosing none is set aside: the keyword router (vocabulary/router.ts) picks the department, which answers the
 * request in its place (a `routing` step says so), unless the step limit leaves no call for it. `state.consulted`
 * lists who answered; the run's `routedTo` is the department whose part runs, else the last that answered
 * (state.ts `routedToOf`), and each part's start is told to the run (`LoopIO.routed`), so it says so while it runs.
 *
 * Limits, all the run's, over the whole loop:
 * - The step limit (the agent's `stepLimit`) counts model calls, the departments' too. The last call it allows is
 *   offered no tools, so it answers in text; tool calls it still asks for are not performed. A department's part
 *   ends likewise at its own step limit, or where the run's leaves only the orchestrator's answer; a handoff the
 *   limit leaves no room for is answered as a failed call.
 * - The output cap is shared: each call may produce at most what the earlier ones left of it.
 * - The reservation covers every call. Reserved up front (runs/start.ts): the first call's whole input (`firstCallInput`:
 *   the agent's instructions, the tool definitions it is offered, the orchestrator's handoffs, the conversation), counted
 *   as its engine reads it (engine/model-input.ts), plus the output cap. Checked per step: before each later call (after
 *   tool results, a department's part with the department's own instructions and tools), its whole input is counted the
 *   same way, from the value its request is built from (`inputOf`), and the call may produce at most
 *   `min(output cap − output billed, reservation − billed − its input)`; a call for which that is under one token is
 *   not made. Either way the loop stops as an answer cut at its cap (`cut`): the run ends with the text so far, or fails
 *   with the kill switch whose limit shrank its reservation. Each step is billed what its engine reported, within what
 *   was left; the rest is recorded unbilled. So later calls' inputs draw on what the output cap left, never beyond the
 *   reservation.
 * - The run's abort signal stops the engine and the tool under way; each tool call also has a
 *   timeout (an `ok: false` outcome the model is told).
 *
 * The loop's state is a plain object (state.ts): `continueAgentLoop` goes on from a saved one.
 */
import {
  type ConversationMessage,
  countModelInputTokens,
  countTextTokensAsync,
  EngineError,
  type Engines,
  type EngineRequest,
  type ModelInput,
  type TokenUsage,
  type ToolCallRequest,
} from '../../engine/index.ts';
import type { Redactor } from '../../redact/index.ts';
import { getAgent, isDepartmentSlug } from '../../vocabulary/catalog.ts';
import { routeRequest } from '../../vocabulary/router.ts';
import type { ExecutionEventBody } from '../run-events/log.ts';
import { createOutputCap } from '../spending/output-cap.ts';
import type { AgentDefinitions } from './agents.ts';
import { requestApproval } from './approval.ts';
import { BUILT_IN_TOOLS, DRAFT_TOOL, draftOf, isBuiltInAction } from './built-in-tools.ts';
import { handoffTools, requestOf } from './handoff.ts';
import { type DelegatedPart, initialLoopState, type LoopState } from './state.ts';
import { type AgentDefinition, type AgentTool, needsApproval, type ToolDefinition, type ToolOutcome, type ToolSource, toolsOfAgent } from './tool.ts';
import { TOOL_NAME } from './tool-name.ts';
import { SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { inSpan, traceHeaders, tracer } from '../../tracing/index.ts';
import { endChatSpan, executeToolSpan, startChatSpan } from '../../tracing/gen-ai.ts';

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
  /**
   * The departments the orchestrator may delegate to (its handoff tools: handoff.ts), when the run is addressed to it
   * on an engine that delegates; absent or empty otherwise (the agent answers alone).
   */
  readonly departments?: readonly string[] | undefined;
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
  /** The orchestrator handed a part of the run to `department`, whose part starts now: the run's `routedTo` from here on. */
  routed(department: string): Promise<void>;
  /**
   * Told the milliseconds each model call took (from its request to its last event) and each tool call (from its call
   * to its outcome): time spent waiting for others, which the answer's `X-Service-Overhead-Ms` leaves out.
   */
  waited?(ms: number): void;
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

/** Who speaks in a model call: an agent, its turns and pending calls (the state's, or a part's), its conversation and tools. */
interface Speaker {
  readonly slug: string;
  readonly agent: AgentDefinition;
  readonly frame: { turns: ConversationMessage[]; pending: ToolCallRequest[] };
  /** The conversation before its turns. */
  readonly messages: readonly ConversationMessage[];
  readonly tools: readonly AgentTool[];
  /** The handoff tools it is offered besides (the orchestrator's, when the run delegates), by name. */
  readonly handoffs: Handoffs;
}

type Handoffs = ReturnType<typeof handoffTools>;
const NO_HANDOFFS: Handoffs = new Map();

/** Goes on from `state` (a fresh one, or one saved between two steps). Never throws. */
export async function continueAgentLoop(ctx: LoopContext, run: LoopRun, io: LoopIO, state: LoopState): Promise<LoopOutcome> {
  try {
    const connected = await ctx.tools.toolsOf(run.workspaceId);
    const self = await runSpeaker(ctx, run, state, connected);
    const { agent, handoffs } = self;
    while (!state.done && state.waiting === null) {
      if (state.part) {
        await partStep(ctx, run, io, state, state.part, connected, agent.stepLimit);
        continue;
      }
      if (state.pending.length > 0) {
        await callTools(ctx, io, state, self, agent.stepLimit);
        continue;
      }
      // Until a department answered, the orchestrator's text waits for its call's end: an answer that chose none is
      // set aside, and the keyword router's department answers in its place (while the step limit leaves a call).
      const choosing = handoffs.size > 0 && !state.consulted?.length;
      const { raw, answered } = await modelCall(ctx, run, io, state, self, offeredDefinitions(self, runCallIsLast(state, agent)), choosing ? 'hold' : 'speak');
      if (choosing && answered && !state.cut && state.modelCalls < agent.stepLimit) {
        await fallBack(
          run,
          io,
          state,
          [...handoffs.values()].map((handoff) => handoff.department),
        );
        continue;
      }
      if (choosing) await deliver(ctx, io, state, raw);
      if (answered || state.cut) state.done = true;
    }
    return { state, failure: undefined };
  } catch (failure) {
    state.done = true;
    return { state, failure };
  }
}

/**
 * One step of a department's part: its pending calls, or its next model call with its instructions and tools. Its
 * last call is the one its step limit allows, or the run's (keeping one for the orchestrator to answer after it).
 * Its answer goes back to the orchestrator as the handoff's result; the fallback's is the run's answer.
 */
async function partStep(
  ctx: LoopContext,
  run: LoopRun,
  io: LoopIO,
  state: LoopState,
  part: DelegatedPart,
  connected: readonly AgentTool[],
  runLimit: number,
): Promise<void> {
  const speaker = await partSpeaker(ctx, run, part, connected);
  if (part.pending.length > 0) {
    await callTools(ctx, io, state, speaker, runLimit);
    return;
  }
  const answersOrchestrator = part.callId !== null;
  const last = partCallIsLast(state, part, speaker.agent, runLimit);
  const { raw, answered } = await modelCall(ctx, run, io, state, speaker, offeredDefinitions(speaker, last), answersOrchestrator ? 'hold' : 'speak');
  part.modelCalls += 1;
  if (answersOrchestrator && raw !== '') part.text += part.text === '' || /\s$/.test(part.text) ? raw : `\n\n${raw}`;
  if (state.cut) {
    // The run stops at its cap inside the part: what the department said so far is the answer.
    if (answersOrchestrator) await deliver(ctx, io, state, part.text);
    state.done = true;
    return;
  }
  if (!answered) return;
  state.consulted = [...(state.consulted ?? []), part.agentSlug];
  state.part = null;
  if (!answersOrchestrator) {
    state.done = true;
    return;
  }
  const call = state.pending.find((pending) => pending.id === part.callId);
  state.turns.push({
    role: 'tool',
    toolCallId: part.callId!,
    name: call?.name ?? 'handoff',
    content: resultText({ ok: true, content: part.text }, ctx.redactor.text),
  });
  state.pending = state.pending.filter((pending) => pending.id !== part.callId);
}

/** The model answered without choosing a department: the keyword router's choice answers the request, recorded as a routing step. */
async function fallBack(run: LoopRun, io: LoopIO, state: LoopState, departments: readonly string[]): Promise<void> {
  const decision = routeRequest(run.request.messages, { candidates: departments.filter(isDepartmentSlug) });
  state.steps.push({ kind: 'routing', agentSlug: run.answeredBy, summary: `The model chose no department. ${decision.rationale}` });
  await beginPart(io, state, { agentSlug: decision.agentSlug, callId: null, request: null });
}

/** A department's part of the run begins (a handoff, or the fallback's): the run is routed to it from now on. */
async function beginPart(io: LoopIO, state: LoopState, part: Pick<DelegatedPart, 'agentSlug' | 'callId' | 'request'>): Promise<void> {
  state.part = { ...part, turns: [], pending: [], modelCalls: 0, text: '' };
  await io.routed(part.agentSlug);
}

/** Sends text held back to the run's stream (redacted), after the text so far, a blank line apart. */
async function deliver(ctx: LoopContext, io: LoopIO, state: LoopState, raw: string): Promise<void> {
  if (raw === '') return;
  const text = state.text !== '' && !/\s$/.test(state.text) ? `\n\n${raw}` : raw;
  const redactor = ctx.redactor.stream();
  const out = redactor.push(text) + redactor.end();
  if (out !== '') await io.fragment(out);
  state.text += text;
}

/** The tool definitions a call of `speaker` is offered: its tools and handoffs, or none for the last call its limits allow. */
function offeredDefinitions(speaker: Speaker, last: boolean): ToolDefinition[] {
  if (last) return [];
  return [...speaker.tools.map((tool) => tool.definition), ...[...speaker.handoffs.values()].map((handoff) => handoff.definition)];
}

/** Whether the run's agent's next call is the last its step limit allows. */
function runCallIsLast(state: LoopState, agent: AgentDefinition): boolean {
  return state.modelCalls + 1 >= agent.stepLimit;
}

/** Whether a department's next call is the last: its own step limit's, or the run's (keeping one for the orchestrator to answer after it). */
function partCallIsLast(state: LoopState, part: DelegatedPart, agent: AgentDefinition, runLimit: number): boolean {
  return part.modelCalls + 1 >= agent.stepLimit || state.modelCalls + (part.callId !== null ? 2 : 1) >= runLimit;
}

/** The run's agent as it speaks: its own turns (`frame`), the run's conversation, its tools and (the orchestrator's) handoffs. */
async function runSpeaker(ctx: Pick<LoopContext, 'agents'>, run: CallingRun, frame: Speaker['frame'], connected: readonly AgentTool[]): Promise<Speaker> {
  const agent = await ctx.agents.get(run.workspaceId, run.answeredBy);
  const handoffs = handoffTools(run.departments ?? []);
  const tools = offeredTools(connected, agent).filter((tool) => !handoffs.has(tool.definition.name));
  return { slug: run.answeredBy, agent, frame, messages: run.request.messages, tools, handoffs };
}

/** A department as it speaks in its part: the run's conversation then what it is asked, its own tools, no handoffs. */
async function partSpeaker(ctx: Pick<LoopContext, 'agents'>, run: CallingRun, part: DelegatedPart, connected: readonly AgentTool[]): Promise<Speaker> {
  const agent = await ctx.agents.get(run.workspaceId, part.agentSlug);
  const asked: ConversationMessage[] = part.request === null ? [] : [{ role: 'user', content: part.request }];
  return {
    slug: part.agentSlug,
    agent,
    frame: part,
    messages: [...run.request.messages, ...asked],
    tools: offeredTools(connected, agent),
    handoffs: NO_HANDOFFS,
  };
}

/** What a model call of `speaker` reads and the engine is sent: its instructions, `tools`, its conversation and turns. */
function inputOf(speaker: Speaker, tools: readonly ToolDefinition[]): ModelInput & { agentSlug: string } {
  return { agentSlug: speaker.slug, instructions: speaker.agent.instructions, tools, messages: [...speaker.messages, ...speaker.frame.turns] };
}

/** What of the run the model input is made from. */
export type CallingRun = Pick<LoopRun, 'workspaceId' | 'answeredBy' | 'departments'> & { readonly request: Pick<LoopRun['request'], 'messages'> };

/**
 * What the run's first model call reads, built as the loop builds it: the agent's instructions, the tools it is
 * offered (the built-in ones, the connected ones it may use, the orchestrator's handoffs), and the conversation. The
 * reservation counts it (domain/runs/start.ts).
 */
export async function firstCallInput(ctx: Pick<LoopContext, 'agents' | 'tools'>, run: CallingRun): Promise<ModelInput> {
  const state = initialLoopState();
  const self = await runSpeaker(ctx, run, state, await ctx.tools.toolsOf(run.workspaceId));
  return inputOf(self, offeredDefinitions(self, runCallIsLast(state, self.agent)));
}

/**
 * What the next model call of a loop stopped at `state` reads (a run paused for a decision: its resume reserves for
 * it, domain/runs/execute.ts): the run's agent's, or the department's inside a part, with the tools it is offered, and
 * the conversation so far (without the result of the call that waits).
 */
export async function nextCallInput(ctx: Pick<LoopContext, 'agents' | 'tools'>, run: CallingRun, state: LoopState): Promise<ModelInput> {
  const connected = await ctx.tools.toolsOf(run.workspaceId);
  if (state.part) {
    const speaker = await partSpeaker(ctx, run, state.part, connected);
    const runLimit = (await ctx.agents.get(run.workspaceId, run.answeredBy)).stepLimit;
    return inputOf(speaker, offeredDefinitions(speaker, partCallIsLast(state, state.part, speaker.agent, runLimit)));
  }
  const self = await runSpeaker(ctx, run, state, connected);
  return inputOf(self, offeredDefinitions(self, runCallIsLast(state, self.agent)));
}

/**
 * Makes the call that waited for a decision, now approved (the run resumed: domain/runs/resume-run.ts): the tool of
 * that name its agent (the department's, inside a part) is offered now, within the run's signal and the timeout. Never throws.
 */
export async function callWaitingTool(ctx: LoopContext, run: LoopRun, io: LoopIO, state: LoopState): Promise<ToolOutcome> {
  const waiting = state.waiting;
  if (!waiting) throw new Error('no call waits for a decision');
  try {
    const agent = await ctx.agents.get(run.workspaceId, state.part?.agentSlug ?? run.answeredBy);
    const tool = offeredTools(await ctx.tools.toolsOf(run.workspaceId), agent).find((t) => t.definition.name === waiting.call.name);
    if (!tool) return { ok: false, error: `No tool named ${waiting.call.name} is available.` };
    const timeoutMs = ctx.toolTimeoutMs ?? TOOL_TIMEOUT_MS;
    const traces = tracer();
    return traces === undefined
      ? await callTool(tool, waiting.call.arguments, io.signal, timeoutMs)
      : await tracedToolCall(traces, ctx.redactor.text(waiting.call.name), tool, waiting.call.arguments, io.signal, timeoutMs);
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

/**
 * One model call as `speaker`: its usage to the state, its tool calls to the speaker's `pending`, its text to the
 * stream (`speak`), or only returned (`hold`: the caller decides). `answered`: it asked for no tool call.
 */
async function modelCall(
  ctx: LoopContext,
  run: LoopRun,
  io: LoopIO,
  state: LoopState,
  speaker: Speaker,
  tools: readonly ToolDefinition[],
  voice: 'speak' | 'hold',
): Promise<{ raw: string; answered: boolean }> {
  const input = inputOf(speaker, tools);
  const engine = ctx.engines[run.request.alias];
  // The call's whole input as its engine reads it (the instructions and the tool definitions too): counted before
  // it is made, from the value the request is built from.
  const estimate = await countModelInputTokens(engine, input);
  const room = run.reservedTokens - state.billed.inputTokens - state.billed.outputTokens;
  const maxTokens = Math.min(run.outputCap - state.billed.outputTokens, room - estimate);
  if (maxTokens < 1) {
    // The next call would cross the reservation: stop here, as an answer cut at its cap.
    state.cut = true;
    return { raw: '', answered: true };
  }
  state.modelCalls += 1;
  // Traces on: the call's `chat {alias}` span (tracing/gen-ai.ts), its context sent to the provider with the request.
  const traces = tracer();
  const span = traces === undefined ? undefined : startChatSpan(traces, run.request.alias, maxTokens);
  const speak = voice === 'speak';
  // The reservation is the ceiling of the run's cost: text beyond this call's share is cut here,
  // whatever the engine was told (a provider may ignore max_tokens).
  const cap = createOutputCap(maxTokens);
  // A stream's text is redacted as it comes; a synchronous call's once it is whole (the same text: redact/index.ts).
  const redactor = io.stream ? ctx.redactor.stream() : undefined;
  const stop = new AbortController();
  const signal = AbortSignal.any([io.signal, stop.signal]);
  const calls: ToolCallRequest[] = [];
  let raw = '';
  let usage: TokenUsage | undefined;
  const send = async (text: string) => {
    const passed = cap.push(text);
    raw += passed;
    if (speak && redactor) {
      const out = redactor.push(passed);
      if (out !== '') await io.fragment(out);
    }
    // Stop the engine: what it would still produce can be neither delivered nor billed.
    if (cap.cut) stop.abort();
  };
  const began = performance.now();
  try {
    try {
      const request: EngineRequest =
        span === undefined
          ? { ...run.request, ...input, maxTokens, signal, stream: io.stream }
          : { ...run.request, ...input, maxTokens, signal, stream: io.stream, traceHeaders: traceHeaders(span) };
      for await (const event of engine.stream(request)) {
        // Once cut, only the engine's usage report is still read (recorded, not billed beyond the cap).
        if (cap.cut && event.type !== 'usage') continue;
        if (event.type === 'text') {
          // Each step's text follows the one before it in the answer, a blank line apart.
          if (speak && raw === '' && state.text !== '' && !/\s$/.test(state.text)) await send('\n\n');
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
    io.waited?.(performance.now() - began);
    if (speak) {
      if (!redactor && raw !== '') await io.fragment(ctx.redactor.text(raw));
      state.text += raw;
    }
    const spent = await failedUsage(err, raw, estimate);
    if (span !== undefined) endChatSpan(span, spent, err);
    charge(state, spent, room, maxTokens, false);
    throw err;
  }
  io.waited?.(performance.now() - began);
  if (span !== undefined) endChatSpan(span, usage);
  if (speak) {
    const rest = redactor ? redactor.end() : ctx.redactor.text(raw);
    if (rest !== '') await io.fragment(rest);
    state.text += raw;
  }
  charge(state, usage, room, maxTokens, cap.cut);
  const name = getAgent(speaker.slug)?.name ?? speaker.slug;
  const asked = cap.cut || tools.length === 0 ? [] : calls;
  state.steps.push({
    kind: 'model_call',
    agentSlug: speaker.slug,
    summary:
      asked.length > 0
        ? `${run.request.alias} asked for ${[...new Set(asked.map((call) => call.name))].join(', ')} as ${name}.`
        : `${run.request.alias} answered as ${name}.`,
  });
  if (cap.cut) state.cut = true;
  if (asked.length > 0) {
    speaker.frame.turns.push({ role: 'assistant', content: raw, toolCalls: asked });
    speaker.frame.pending = asked;
  }
  return { raw, answered: asked.length === 0 };
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

/**
 * Executes the speaker's pending calls in order; each result (or error), redacted, becomes a tool turn. A handoff
 * (the orchestrator's) starts the department's part and stops here: the part's answer is that call's result.
 */
async function callTools(ctx: LoopContext, io: LoopIO, state: LoopState, speaker: Speaker, runLimit: number): Promise<void> {
  const redact = ctx.redactor.text;
  const { frame } = speaker;
  const byName = new Map(speaker.tools.map((tool) => [tool.definition.name, tool]));
  while (frame.pending.length > 0) {
    if (io.signal.aborted) throw new EngineError('aborted');
    const call = frame.pending[0]!;
    const handoff = speaker.handoffs.get(call.name);
    const tool = byName.get(call.name);
    let outcome: ToolOutcome;
    if (handoff) {
      const name = getAgent(handoff.department)?.name ?? handoff.department;
      // The part needs a model call, and the orchestrator one more to answer after it.
      if (state.modelCalls + 2 <= runLimit) {
        const summary = `Handed a part of the request to ${name}.`;
        state.steps.push({ kind: 'routing', agentSlug: speaker.slug, summary });
        io.record({ type: 'tool.called', name: call.name, summary });
        await beginPart(io, state, { agentSlug: handoff.department, callId: call.id, request: requestOf(call.arguments) });
        return;
      }
      outcome = { ok: false, error: `The run has no model calls left to consult ${name}.` };
    } else if (!tool) {
      outcome = { ok: false, error: `No tool named ${call.name} is available.` };
    } else if (isBuiltInAction(tool) || needsApproval(tool, speaker.agent)) {
      // The loop stops at this call: the run pauses until a person decides (approval.ts).
      requestApproval({ call, tool, agentSlug: speaker.slug, state });
      return;
    } else {
      const timeoutMs = ctx.toolTimeoutMs ?? TOOL_TIMEOUT_MS;
      const traces = tracer();
      const began = performance.now();
      outcome =
        traces === undefined
          ? await callTool(tool, call.arguments, io.signal, timeoutMs)
          : await tracedToolCall(traces, redact(call.name), tool, call.arguments, io.signal, timeoutMs);
      io.waited?.(performance.now() - began);
      if (io.signal.aborted) throw new EngineError('aborted');
      record(io, state, speaker.slug, call, tool, outcome, redact);
    }
    // Only a name of the contract's form is recorded as a tool call (every offered tool's is: tool-name.ts).
    if (!tool && !handoff && TOOL_NAME.test(call.name)) record(io, state, speaker.slug, call, null, outcome, redact);
    frame.turns.push({ role: 'tool', toolCallId: call.id, name: call.name, content: resultText(outcome, redact) });
    frame.pending = frame.pending.slice(1);
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

/** `callTool` inside its `execute_tool {name}` span (traces on); a failed outcome marks the span failed (`tool_error`). */
function tracedToolCall(
  traces: Tracer,
  name: string,
  tool: AgentTool,
  args: Readonly<Record<string, unknown>>,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<ToolOutcome> {
  const { name: spanName, kind, attributes } = executeToolSpan(name);
  return inSpan(traces, spanName, kind, attributes, async (span) => {
    const outcome = await callTool(tool, args, signal, timeoutMs);
    if (!outcome.ok) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute('error.type', 'tool_error');
    }
    return outcome;
  });
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
