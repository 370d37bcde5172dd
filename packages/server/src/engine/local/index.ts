/**
 * @module The local engine: the embedded default behind every alias. No network; the same request
 * always gives the same events. It answers in the voice of the department (routing an
 * `orchestrator` request itself), consults a department tool, writes drafts, asks approval for
 * sensitive actions, streams in fragments and counts tokens with a real tokenizer.
 *
 * Knobs: `effort` sets how many points the answer makes (low 1 … max 6) and `low` effort skips the
 * tool lookup; `powerMode: low` halves the points, drops the closing and skips the lookup;
 * `maxTokens` is a budget on all output: the text is cut to it, then approvals, the draft and the
 * tool call are kept only while they still fit. Failure triggers: see ./triggers.ts.
 */
import { isDepartmentSlug, type DepartmentSlug } from '../../vocabulary/catalog.ts';
import { routeRequest } from '../../vocabulary/router.ts';
import type { Engine, EngineEvent, EngineRequest, TokenUsage } from '../engine.ts';
import { EngineError } from '../engine-error.ts';
import { countMessageTokensAsync, countTextTokens, countTextTokensAsync, createPace, truncateToTokens, type Pace } from '../tokens.ts';
import { approvalsFor, draftFor, type ApprovalRequest, type Draft } from './actions.ts';
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
  readonly toolCall: { name: string; arguments: Record<string, unknown>; result: string } | null;
  readonly draft: Draft | null;
  readonly approvals: readonly ApprovalRequest[];
}

async function* localStream(request: EngineRequest, settings: Settings): AsyncGenerator<EngineEvent> {
  const trigger: Trigger | null = settings.triggers ? triggerOf(request.messages) : null;
  if (trigger === 'fail') throw new EngineError('engine_error');
  if (trigger === 'timeout') throw new EngineError('timeout');

  // A request may hold megabytes of text: counting pauses for the event loop (see tokens.ts).
  const pace = createPace();
  const inputTokens = await countMessageTokensAsync(request.messages, pace);
  const output = await plan(request, pace);
  // Text is counted as a whole (BPE merges across fragment boundaries), structured output per item.
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
  if (output.toolCall) {
    yield { type: 'tool_call', ...output.toolCall };
    structuredTokens += toolCallTokens(output.toolCall);
    await pause();
  }

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

  if (output.draft) {
    yield { type: 'draft', ...output.draft };
    structuredTokens += draftTokens(output.draft);
    await pause();
  }
  for (const approval of output.approvals) {
    yield { type: 'approval_request', ...approval };
    structuredTokens += approvalTokens(approval);
    await pause();
  }
  yield { type: 'usage', ...(await usage()) };
}

/** Everything the answer will contain, decided up front so the token budget can be applied. */
async function plan(request: EngineRequest, pace: Pace): Promise<Output> {
  const latest = withoutTriggers(latestUserText(request.messages));
  const department: DepartmentSlug = isDepartmentSlug(request.agentSlug)
    ? request.agentSlug
    : routeRequest(request.messages.map((m) => ({ role: m.role, content: withoutTriggers(m.content) }))).agentSlug;
  const voice = DEPARTMENT_VOICES[department];
  const topic = topicOf(latest);
  const draft = draftFor(latest, department, voice.team);
  const approvals = approvalsFor(latest);
  const extras = [
    ...(draft ? [`I have prepared a draft ${draft.kind} for your review.`] : []),
    ...approvals.map((a) => `Waiting for approval before I act: ${a.summary}`),
  ];
  const brief = request.effort === 'low' || request.powerMode === 'low';
  const toolCall = brief ? null : { name: voice.tool, arguments: { query: topic ?? '' }, result: voice.toolResult };
  const full = composeAnswer(request, department, topic, extras).text;

  if (request.maxTokens === undefined) return { text: full, textTokens: await countTextTokensAsync(full, pace), toolCall, draft, approvals };
  let budget = request.maxTokens;
  const text = await truncateToTokens(full, budget, pace);
  const textTokens = await countTextTokensAsync(text, pace);
  budget -= textTokens;
  const kept: ApprovalRequest[] = [];
  for (const approval of approvals) {
    if (approvalTokens(approval) > budget) break;
    budget -= approvalTokens(approval);
    kept.push(approval);
  }
  const keepDraft = draft !== null && draftTokens(draft) <= budget;
  if (keepDraft) budget -= draftTokens(draft);
  const keepTool = toolCall !== null && toolCallTokens(toolCall) <= budget;
  return { text, textTokens, toolCall: keepTool ? toolCall : null, draft: keepDraft ? draft : null, approvals: kept };
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

/** The call is model output; its result is tool output the model reads, so it is not billed here. */
function toolCallTokens(call: { name: string; arguments: Record<string, unknown> }): number {
  return countTextTokens(call.name) + countTextTokens(JSON.stringify(call.arguments));
}

function draftTokens(draft: Draft): number {
  return countTextTokens(draft.kind) + countTextTokens(draft.subject) + countTextTokens(draft.body);
}

function approvalTokens(approval: ApprovalRequest): number {
  return countTextTokens(approval.action) + countTextTokens(approval.summary);
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
