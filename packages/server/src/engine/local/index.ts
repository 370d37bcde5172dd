/**
 * @module The local engine: the embedded default behind every alias, a deterministic model that
 * speaks the engine protocol (engine.ts). No network; the same request always gives the same
 * events. It answers in the voice of the department (routing an `orchestrator` request itself),
 * streams in fragments and counts tokens with a real tokenizer.
 *
 * Tools, by fixed rules (./actions.ts), only among the tools the request offers: on a new request
 * (no tool result since the latest user message) it asks for the department's lookup (`crm.search`,
 * `ledger.search`, …) when offered, `draft.create` for the draft the request asks for (or the
 * department's everyday one), and the tool named after each sensitive action the request asks for
 * (`email.send`, `payment.initiate`, …). It then stops, without text. Once the results are in, it
 * answers, mentioning each result. Without any tool to ask for, it answers at once.
 *
 * Knobs: `effort` sets how many points the answer makes (low 1 … max 6) and `low` effort skips the
 * lookup; `powerMode: low` halves the points, drops the closing and skips the lookup; `maxTokens`
 * is a budget on all output: tool calls are kept while they fit (when none fits it answers at
 * once), the text is cut to it. Failure triggers (./triggers.ts): `[[fail]]` and `[[timeout]]` fail
 * the call at once; `[[fail-mid-stream]]` and `[[hang]]` act on the call that answers with text (the
 * tool calls before it go through).
 */
import { isDepartmentSlug, type DepartmentSlug } from '../../vocabulary/catalog.ts';
import { routeRequest } from '../../vocabulary/router.ts';
import type { ConversationMessage, Engine, EngineEvent, EngineRequest, TokenUsage, ToolCallRequest } from '../engine.ts';
import { EngineError } from '../engine-error.ts';
import { countMessageTokensAsync, countTextTokensAsync, countToolCallTokens, createPace, truncateToTokens, type Pace } from '../tokens.ts';
import { approvalsFor, draftFor } from './actions.ts';
import { composeAnswer, topicOf } from './answer.ts';
import { DEPARTMENT_VOICES } from './departments.ts';
import { latestUserText, triggerOf, withoutTriggers, type Trigger } from './triggers.ts';

export interface LocalEngineOptions {
  /** Words per text fragment. Default 4. */
  readonly fragmentWords?: number;
  /** Pause between events, for demos. Default 0 (a stream still yields to the event loop). */
  readonly fragmentDelayMs?: number;
  /** How long `[[hang]]` waits for an abort before failing with `timeout`. Default 30 s. */
  readonly hangLimitMs?: number;
  /** Whether `[[fail]]` and friends are honoured. Default true. */
  readonly triggers?: boolean;
}

export function createLocalEngine(options: LocalEngineOptions = {}): Engine {
  const settings = {
    fragmentWords: Math.max(1, options.fragmentWords ?? 4),
    fragmentDelayMs: Math.max(0, options.fragmentDelayMs ?? 0),
    hangLimitMs: options.hangLimitMs ?? 30_000,
    triggers: options.triggers ?? true,
  };
  return {
    // Told the instructions and the tools, it answers from the conversation: that is its input (see localStream).
    reads: 'conversation',
    stream(request) {
      return localStream(request, settings);
    },
  };
}

type Settings = Required<LocalEngineOptions>;

interface Output {
  readonly text: string;
  /** Tokens of `text`, counted once. */
  readonly textTokens: number;
  readonly toolCalls: readonly ToolCallRequest[];
  /** Tokens of each of `toolCalls`, counted once. */
  readonly toolCallTokens: readonly number[];
}

async function* localStream(request: EngineRequest, settings: Settings): AsyncGenerator<EngineEvent> {
  const trigger: Trigger | null = settings.triggers ? triggerOf(request.messages) : null;
  if (trigger === 'fail') throw new EngineError('engine_error');
  if (trigger === 'timeout') throw new EngineError('timeout');
  // A request may hold megabytes of text: counting pauses for the event loop (see tokens.ts).
  const pace = createPace();
  // It reads the conversation: its input is the conversation's tokens (instructions and tool definitions are not counted).
  const inputTokens = await countMessageTokensAsync(request.messages, pace);
  const output = await plan(request, pace);
  // Text is counted as a whole (BPE merges across fragment boundaries), tool calls one by one.
  let emitted = '';
  let structuredTokens = 0;
  const usage = async (): Promise<TokenUsage> => ({
    inputTokens,
    outputTokens: structuredTokens + (emitted === output.text ? output.textTokens : await countTextTokensAsync(emitted, pace)),
  });
  // A synchronous call waits for the whole answer anyway: no pause between its events. A stream
  // yields to the event loop (setImmediate, not a timer of at least 1 ms) so a cancel or a
  // disconnect can interleave between fragments.
  const yields = settings.fragmentDelayMs > 0 || request.stream !== false;
  const pause = async () => {
    if (settings.fragmentDelayMs > 0) await sleep(settings.fragmentDelayMs, request.signal);
    else if (yields) await new Promise<void>((resolve) => setImmediate(resolve));
    if (request.signal?.aborted) throw new EngineError('aborted', await usage());
  };
  if (request.signal?.aborted) throw new EngineError('aborted');
  // Not streamed: the text in one piece (EngineRequest.stream), unless a trigger needs fragments.
  const whole = request.stream === false && trigger === null && settings.fragmentDelayMs === 0;
  const fragments = whole ? [output.text].filter((t) => t !== '') : fragmentsOf(output.text, settings.fragmentWords);
  const failAfter = trigger === 'fail-mid-stream' ? Math.max(1, Math.floor(fragments.length / 2)) : Infinity;
  for (const [index, delta] of fragments.entries()) {
    yield { type: 'text', delta };
    emitted += delta;
    if (index + 1 >= failAfter) throw new EngineError('engine_error', await usage());
    if (trigger === 'hang') await hang(settings.hangLimitMs, request.signal, usage);
    await pause();
  }
  for (const [index, call] of output.toolCalls.entries()) {
    yield { type: 'tool_call', ...call };
    structuredTokens += output.toolCallTokens[index]!;
    await pause();
  }
  yield { type: 'usage', ...(await usage()) };
}

/** Everything the answer will contain, decided up front so the token budget can be applied. */
async function plan(request: EngineRequest, pace: Pace): Promise<Output> {
  const latest = withoutTriggers(latestUserText(request.messages));
  const spoken = request.messages.flatMap((m) => (m.role === 'user' || m.role === 'system' ? [{ role: m.role, content: withoutTriggers(m.content) }] : []));
  const department: DepartmentSlug = isDepartmentSlug(request.agentSlug) ? request.agentSlug : routeRequest(spoken).agentSlug;
  const topic = topicOf(latest);
  const results = resultsSinceLatestUser(request.messages);
  if (results.length === 0) {
    const { calls, tokens } = toolCallsFor(request, department, latest, topic);
    if (calls.length > 0) return { text: '', textTokens: 0, toolCalls: calls, toolCallTokens: tokens };
  }
  const extras = results.map((result) => `${result.name}: ${shortened(result.content)}`);
  const full = composeAnswer(request, department, topic, extras).text;
  if (request.maxTokens === undefined) return { text: full, textTokens: await countTextTokensAsync(full, pace), toolCalls: [], toolCallTokens: [] };
  const { text, tokens } = await truncateToTokens(full, request.maxTokens, pace);
  return { text, textTokens: tokens, toolCalls: [], toolCallTokens: [] };
}

/** The calls a new request asks for among the offered tools, in order, kept while they fit `maxTokens`, and their tokens. */
function toolCallsFor(
  request: EngineRequest,
  department: DepartmentSlug,
  latest: string,
  topic: string | null,
): { calls: ToolCallRequest[]; tokens: number[] } {
  const offered = new Set((request.tools ?? []).map((tool) => tool.name));
  if (offered.size === 0) return { calls: [], tokens: [] };
  const voice = DEPARTMENT_VOICES[department];
  const wanted: { name: string; arguments: Record<string, unknown> }[] = [];
  const brief = request.effort === 'low' || request.powerMode === 'low';
  if (!brief) wanted.push({ name: voice.tool, arguments: { query: topic ?? '' } });
  const draft = draftFor(latest, department, voice.team);
  if (draft) wanted.push({ name: 'draft.create', arguments: { kind: draft.kind, subject: draft.subject, body: draft.body } });
  for (const approval of approvalsFor(latest)) wanted.push({ name: approval.action, arguments: { summary: approval.summary } });
  // Ids unique within the conversation: the turn's number, then the call's.
  const turn = request.messages.filter((m) => 'toolCalls' in m).length + 1;
  let budget = request.maxTokens ?? Infinity;
  const calls: ToolCallRequest[] = [];
  const counts: number[] = [];
  for (const call of wanted.filter((c) => offered.has(c.name))) {
    const tokens = countToolCallTokens(call);
    if (tokens > budget) break;
    budget -= tokens;
    calls.push({ id: `call_${turn}_${calls.length + 1}`, ...call });
    counts.push(tokens);
  }
  return { calls, tokens: counts };
}

/** The tool results after the latest user message (an earlier turn's results are answered already). */
function resultsSinceLatestUser(messages: readonly ConversationMessage[]): Extract<ConversationMessage, { role: 'tool' }>[] {
  let start = 0;
  for (const [index, message] of messages.entries()) if (message.role === 'user') start = index + 1;
  return messages.slice(start).filter((m): m is Extract<ConversationMessage, { role: 'tool' }> => m.role === 'tool');
}

/** A result as the answer mentions it: one line, at most 200 characters. */
function shortened(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
/** Splits on word boundaries; the fragments join back to exactly the text. */
function fragmentsOf(text: string, wordsPerFragment: number): string[] {
  const pieces = text.split(/(?<=\s)(?=\S)/);
  const fragments: string[] = [];
  for (let i = 0; i < pieces.length; i += wordsPerFragment) {
    fragments.push(pieces.slice(i, i + wordsPerFragment).join(''));
  }
  return fragments.filter((f) => f !== '');
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

async function hang(limitMs: number, signal: AbortSignal | undefined, usage: () => Promise<TokenUsage>): Promise<never> {
  await sleep(limitMs, signal);
  throw new EngineError(signal?.aborted ? 'aborted' : 'timeout', await usage());
}
