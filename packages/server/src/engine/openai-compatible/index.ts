/**
 * @module The openai-compatible engine: any Chat Completions server (OpenAI, vLLM, Ollama,
 * llama.cpp) through the official `openai` package. Each alias maps to a model name in server
 * configuration; the model name goes to the server and nowhere else.
 *
 * Mapping: `maxTokens` → `max_tokens` (or `max_completion_tokens`, configurable); `effort` →
 * `reasoning_effort` (low/medium/high; x-high and max send high, the top value every server knows;
 * can be turned off for servers that reject the field); `powerMode: low` lowers effort to low.
 * Usage comes from the server's usage block (streams ask for it with `stream_options.include_usage`),
 * else it is counted with the tokenizer (the request is counted only then, or when a failure bills
 * it). Only the answer text is streamed: reasoning fields and raw provider payloads are never
 * forwarded. Provider text is not redacted here; the redactor does that. Chunks that arrive together (a
 * burst in one read) are yielded as one text event after the first (./turn-groups.ts); a model streaming
 * at its pace gives one event per chunk.
 *
 * Traces: a request carries its model call's `traceparent` (EngineRequest.traceHeaders, when traces are on).
 *
 * Transport: the client's `fetch` is a kept-alive undici `Pool` on the server's origin (./transport.ts), not Node's
 * global `fetch`, because every proxied invocation pays this call's CPU: on loopback a call cost 0.7-1.0 ms of CPU
 * answered whole and 0.95-1.4 ms streamed over the global `fetch`, 0.3-0.55 and 0.5-0.95 ms over the pool
 * (scripts/bench/engine-call.ts, docs/performance.md). `close()` drops its connections when the server stops.
 *
 * Tools: the instructions go first as a system message; the offered tools as function tools, their
 * names mapped into what every server accepts (./tool-names.ts); an assistant turn's tool calls as
 * `tool_calls`, their results as `tool` messages. The tool calls of the answer are read whole, or
 * from a stream's deltas (accumulated by `index`), and yielded after the text, with their names
 * mapped back.
 */
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsBase, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { Alias } from '../../vocabulary/alias.ts';
import type { ConversationMessage, Effort, Engine, EngineEvent, EngineRequest, ToolCallRequest } from '../engine.ts';
import { EngineError } from '../engine-error.ts';
import { countRequestTokens } from '../model-input.ts';
import { countTextTokens, countToolCallTokens } from '../tokens.ts';
import { turnGroups } from './turn-groups.ts';
import { toEngineError } from './errors.ts';
import { toolNames, type ToolNames } from './tool-names.ts';
import { createTransport, type Transport } from './transport.ts';

export interface OpenAICompatibleOptions {
  /** e.g. `http://127.0.0.1:11434/v1`. */
  readonly baseURL: string;
  /** Servers without keys (Ollama, llama.cpp) accept any value. */
  readonly apiKey?: string;
  /** Model name per alias served by this engine. */
  readonly models: Readonly<Partial<Record<Alias, string>>>;
  /** Per request. Default 60 s. */
  readonly timeoutMs?: number;
  /** Client retries on connection errors, 408, 409, 429 and 5xx. Default 0: a failed run is reported, not hidden. */
  readonly maxRetries?: number;
  /** Default `max_tokens`, which every compatible server reads. */
  readonly maxTokensParam?: 'max_tokens' | 'max_completion_tokens';
  /** Send `reasoning_effort`. Default true. */
  readonly sendEffort?: boolean;
  /** Stream from the server. Default true; a request with `stream: false` is always answered in one piece. */
  readonly stream?: boolean;
}

type ReasoningEffort = 'low' | 'medium' | 'high';

const REASONING_EFFORT: Readonly<Record<Effort, ReasoningEffort>> = {
  low: 'low',
  medium: 'medium',
  high: 'high',
  'x-high': 'high',
  max: 'high',
};

export function createOpenAICompatibleEngine(options: OpenAICompatibleOptions, transport: Transport = createTransport(options.baseURL)): Engine {
  const client = new OpenAI({
    baseURL: options.baseURL,
    apiKey: options.apiKey || 'unused',
    // Never pick up OPENAI_* variables of the host: configuration comes only from ours.
    organization: null,
    project: null,
    timeout: options.timeoutMs ?? 60_000,
    maxRetries: options.maxRetries ?? 0,
    // The client would log unparsable provider chunks verbatim; they must not reach our logs either.
    logLevel: 'off',
    fetch: transport.fetch,
  });
  return {
    delegates: true,
    confidentialTerms: confidentialTerms(options),
    stream(request) {
      return completionEvents(client, options, request);
    },
    close: () => transport.close(),
  };
}

/** The model names, the base URL's host and the key: the deployment's names the redactor must know. */
function confidentialTerms(options: OpenAICompatibleOptions): string[] {
  const terms = Object.values(options.models).filter((model): model is string => Boolean(model));
  try {
    const host = new URL(options.baseURL).hostname.replace(/^\[|\]$/g, '');
    if (host) terms.push(host);
  } catch {
    // readEngineConfig refuses a base URL that is not http(s); nothing to add here.
  }
  if (options.apiKey) terms.push(options.apiKey);
  return terms;
}

async function* completionEvents(client: OpenAI, options: OpenAICompatibleOptions, request: EngineRequest): AsyncGenerator<EngineEvent> {
  const model = options.models[request.alias];
  // A configuration gap (createEngines refuses it at start-up), reported like any engine failure.
  if (!model) throw new EngineError('engine_error');
  const names = toolNames(request.tools ?? []);
  const params = requestParams(model, options, request, names);
  // The request's own count, made only when it is needed: when the server reports no usage, or a failure bills what
  // was already received. Most servers report usage, so most calls never count.
  let counted: Promise<number> | undefined;
  const inputEstimate = () => (counted ??= countRequestTokens(request));
  let text = '';
  let calls: ToolCallRequest[] = [];
  const spent = async () => ({ inputTokens: text === '' ? 0 : await inputEstimate(), outputTokens: countTextTokens(text) });

  try {
    if (request.stream === false || options.stream === false) {
      const completion = await client.chat.completions.create({ ...params, stream: false }, { signal: request.signal, headers: request.traceHeaders });
      const message = completion.choices[0]?.message;
      text = message?.content ?? '';
      calls = (message?.tool_calls ?? []).flatMap((call, index) =>
        call.type === 'function' ? [toolCallOf(call.id, call.function.name, call.function.arguments, index, names)] : [],
      );
      if (text !== '') yield { type: 'text', delta: text };
      for (const call of calls) yield { type: 'tool_call', ...call };
      yield await usageEvent(completion.usage, inputEstimate, text, calls);
      return;
    }
    const stream = await client.chat.completions.create(
      { ...params, stream: true, stream_options: { include_usage: true } },
      { signal: request.signal, headers: request.traceHeaders },
    );
    let usage: OpenAI.CompletionUsage | undefined;
    let chunks = 0;
    // A tool call arrives in pieces: its id and name first, its arguments' JSON in fragments, by index.
    const pending = new Map<number, { id: string; name: string; arguments: string }>();
    // Chunks that arrive together (one read of a burst) are passed on as one fragment: turn-groups.ts.
    for await (const group of turnGroups(stream)) {
      let fragment = '';
      for (const chunk of group) {
        chunks += 1;
        if (chunk.usage) usage = chunk.usage;
        const delta = chunk.choices[0]?.delta;
        for (const piece of delta?.tool_calls ?? []) {
          const call = pending.get(piece.index) ?? { id: '', name: '', arguments: '' };
          if (piece.id) call.id = piece.id;
          if (piece.function?.name) call.name += piece.function.name;
          if (piece.function?.arguments) call.arguments += piece.function.arguments;
          pending.set(piece.index, call);
        }
        const content = delta?.content;
        if (typeof content === 'string') fragment += content;
      }
      if (fragment !== '') {
        text += fragment;
        yield { type: 'text', delta: fragment };
      }
    }
    // The client ends an aborted stream quietly; an aborted run must not look complete.
    if (request.signal?.aborted) throw new EngineError('aborted', await spent());
    // A 200 whose body holds no event at all (an HTML error page, plain text): the client parses
    // nothing from it and ends quietly, but no answer came, so the run must fail, not complete empty.
    if (chunks === 0) throw new EngineError('engine_error');
    calls = [...pending.entries()].sort(([a], [b]) => a - b).map(([index, call]) => toolCallOf(call.id, call.name, call.arguments, index, names));
    for (const call of calls) yield { type: 'tool_call', ...call };
    yield await usageEvent(usage, inputEstimate, text, calls);
  } catch (error) {
    throw toEngineError(error, await spent(), request.signal);
  }
}

/** A tool call of the answer: its name mapped back, its arguments parsed (a non-object or broken JSON is `{}`). */
function toolCallOf(id: string | undefined, wireName: string, args: string, index: number, names: ToolNames): ToolCallRequest {
  return { id: id || `call_${index}`, name: names.fromWire(wireName), arguments: parseArguments(args) };
}

function parseArguments(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json || '{}');
    return isJsonObject(value) ? value : {};
  } catch {
    return {};
  }
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function requestParams(model: string, options: OpenAICompatibleOptions, request: EngineRequest, names: ToolNames): ChatCompletionCreateParamsBase {
  const messages: ChatCompletionMessageParam[] = request.messages.map((m) => messageOf(m, names));
  if (request.instructions) messages.unshift({ role: 'system', content: request.instructions });
  const params: ChatCompletionCreateParamsBase = { model, messages };
  if (request.tools && request.tools.length > 0) {
    params.tools = request.tools.map((tool) => ({
      type: 'function' as const,
      function: { name: names.toWire(tool.name), description: tool.description, parameters: { ...tool.inputSchema } },
    }));
  }
  if (request.maxTokens !== undefined) {
    if (options.maxTokensParam === 'max_completion_tokens') params.max_completion_tokens = request.maxTokens;
    else params.max_tokens = request.maxTokens;
  }
  const effort: Effort | undefined = request.powerMode === 'low' ? 'low' : request.effort;
  if (effort && options.sendEffort !== false) params.reasoning_effort = REASONING_EFFORT[effort];
  return params;
}

function messageOf(message: ConversationMessage, names: ToolNames): ChatCompletionMessageParam {
  if ('toolCalls' in message) {
    return {
      role: 'assistant',
      content: message.content === '' ? null : message.content,
      tool_calls: message.toolCalls.map((call) => ({
        id: call.id,
        type: 'function' as const,
        function: { name: names.toWire(call.name), arguments: JSON.stringify(call.arguments) },
      })),
    };
  }
  if ('toolCallId' in message) return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  return { role: message.role, content: message.content };
}

async function usageEvent(
  usage: OpenAI.CompletionUsage | null | undefined,
  inputEstimate: () => Promise<number>,
  text: string,
  calls: readonly ToolCallRequest[],
): Promise<EngineEvent> {
  return {
    type: 'usage',
    inputTokens: usage?.prompt_tokens ?? (await inputEstimate()),
    outputTokens: usage?.completion_tokens ?? countTextTokens(text) + calls.reduce((sum, call) => sum + countToolCallTokens(call), 0),
  };
}
