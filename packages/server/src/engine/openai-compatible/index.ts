/**
 * @module The openai-compatible engine: any Chat Completions server (OpenAI, vLLM, Ollama,
 * llama.cpp) through the official `openai` package. Each alias maps to a model name in server
 * configuration; the model name goes to the server and nowhere else.
 *
 * Mapping: `maxTokens` → `max_tokens` (or `max_completion_tokens`, configurable); `effort` →
 * `reasoning_effort` (low/medium/high; x-high and max send high, the top value every server knows;
 * can be turned off for servers that reject the field); `powerMode: low` lowers effort to low.
 * Usage comes from the server's usage block (streams ask for it with `stream_options.include_usage`),
 * else it is counted with the tokenizer. Only the answer text is streamed: reasoning fields and raw
 * provider payloads are never forwarded. Provider text is not redacted here; the redactor does that.
 */
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions';
import type { Alias } from '../../vocabulary/alias.ts';
import type { Effort, Engine, EngineEvent, EngineRequest } from '../engine.ts';
import { EngineError } from '../engine-error.ts';
import { countMessageTokensAsync, countTextTokens } from '../tokens.ts';
import { toEngineError } from './errors.ts';

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

export function createOpenAICompatibleEngine(options: OpenAICompatibleOptions): Engine {
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
  });
  return {
    confidentialTerms: confidentialTerms(options),
    stream(request) {
      return completionEvents(client, options, request);
    },
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
  const params = requestParams(model, options, request);
  const inputEstimate = await countMessageTokensAsync(request.messages);
  let text = '';
  const spent = () => ({ inputTokens: text === '' ? 0 : inputEstimate, outputTokens: countTextTokens(text) });

  try {
    if (request.stream === false || options.stream === false) {
      const completion = await client.chat.completions.create({ ...params, stream: false }, { signal: request.signal });
      text = completion.choices[0]?.message?.content ?? '';
      if (text !== '') yield { type: 'text', delta: text };
      yield usageEvent(completion.usage, inputEstimate, text);
      return;
    }
    const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }, { signal: request.signal });
    let usage: OpenAI.CompletionUsage | undefined;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks += 1;
      if (chunk.usage) usage = chunk.usage;
      const delta = chunk.choices[0]?.delta?.content;
      if (typeof delta === 'string' && delta !== '') {
        text += delta;
        yield { type: 'text', delta };
      }
    }
    // The client ends an aborted stream quietly; an aborted run must not look complete.
    if (request.signal?.aborted) throw new EngineError('aborted', spent());
    // A 200 whose body holds no event at all (an HTML error page, plain text): the client parses
    // nothing from it and ends quietly, but no answer came, so the run must fail, not complete empty.
    if (chunks === 0) throw new EngineError('engine_error');
    yield usageEvent(usage, inputEstimate, text);
  } catch (error) {
    throw toEngineError(error, spent(), request.signal);
  }
}

function requestParams(model: string, options: OpenAICompatibleOptions, request: EngineRequest): ChatCompletionCreateParamsBase {
  const params: ChatCompletionCreateParamsBase = {
    model,
    messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
  };
  if (request.maxTokens !== undefined) {
    if (options.maxTokensParam === 'max_completion_tokens') params.max_completion_tokens = request.maxTokens;
    else params.max_tokens = request.maxTokens;
  }
  const effort: Effort | undefined = request.powerMode === 'low' ? 'low' : request.effort;
  if (effort && options.sendEffort !== false) params.reasoning_effort = REASONING_EFFORT[effort];
  return params;
}

function usageEvent(usage: OpenAI.CompletionUsage | null | undefined, inputEstimate: number, text: string): EngineEvent {
  return {
    type: 'usage',
    inputTokens: usage?.prompt_tokens ?? inputEstimate,
    outputTokens: usage?.completion_tokens ?? countTextTokens(text),
  };
}
