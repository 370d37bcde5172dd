/**
 * @module The Engine interface behind the aliases: one model call. A request carries the agent's
 * instructions, the conversation (which may hold earlier tool calls and their results) and the
 * definitions of the tools the model may ask for; the engine answers text and tool calls, and
 * reports usage. An engine never executes a tool: the agent loop (domain/agent-loop) does, and
 * calls the engine again with the results. Which engine (and which real model) serves an alias is
 * server configuration only. Nothing an engine yields or throws names a provider or a model.
 */
import type { ToolDefinition } from '../domain/agent-loop/tool.ts';
import type { Alias } from '../vocabulary/alias.ts';
import type { components } from '../../../../generated/types.ts';

/** The kinds of draft the contract names (`draft.created`). */
export type DraftKind = components['schemas']['DraftCreatedData']['kind'];

export type Effort = NonNullable<components['schemas']['InferenceRequest']['effort']>;
export type PowerMode = NonNullable<components['schemas']['InferenceRequest']['powerMode']>;

/** A message of the conversation, as the contract's `Message`. */
export type EngineMessage = Readonly<components['schemas']['Message']>;

/** A tool call the model asks for; `id` pairs it with its result in the next call. */
export interface ToolCallRequest {
  readonly id: string;
  /** A name of one of the request's `tools` (`<area>.<verb>`), or anything the model made up. */
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

/**
 * A message of the agent loop's conversation (internal; the contract's `Message` is unchanged): a
 * contract message, an assistant turn that asked for tool calls, or the result of one of them.
 */
export type ConversationMessage =
  | EngineMessage
  | { readonly role: 'assistant'; readonly content: string; readonly toolCalls: readonly ToolCallRequest[] }
  | { readonly role: 'tool'; readonly toolCallId: string; readonly name: string; readonly content: string };

export interface EngineRequest {
  readonly alias: Alias;
  /** The agent that answers (a department, or `orchestrator`). */
  readonly agentSlug: string;
  /** The agent's instructions (a system message before the conversation); none when absent. */
  readonly instructions?: string;
  /** The tools the model may ask for; none when absent or empty. */
  readonly tools?: readonly ToolDefinition[];
  /** The conversation so far, earlier turns first. */
  readonly messages: readonly ConversationMessage[];
  /** Cap on output tokens (1–32,000). */
  readonly maxTokens?: number;
  readonly effort?: Effort;
  readonly powerMode?: PowerMode;
  /** Aborting ends the stream with `EngineError` reason `aborted`. */
  readonly signal?: AbortSignal;
  /** Hint: false lets an engine answer in one piece (synchronous calls). Default true. */
  readonly stream?: boolean;
  /**
   * The W3C trace context of this model call's `chat` span (`traceparent`, and `tracestate` when there is one), when
   * traces are on: an engine that calls a provider over HTTP sends them as request headers. Absent when off.
   */
  readonly traceHeaders?: Readonly<Record<string, string>>;
}

export interface TokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export type EngineEvent =
  | { readonly type: 'text'; readonly delta: string }
  /** A tool call the model asks for (the engine does not execute it), after the text of the answer. */
  | ({ readonly type: 'tool_call' } & ToolCallRequest)
  /** Always the last event of a successful stream. */
  | { readonly type: 'usage'; readonly inputTokens: number; readonly outputTokens: number };

export interface Engine {
  /**
   * What this engine is configured with that must never reach a client: the real model names
   * behind the aliases, the provider's host, its key. The app adds them to its redactor.
   */
  readonly confidentialTerms?: readonly string[];
  /**
   * A real model that chooses: a run addressed to the orchestrator offers it the departments as handoff tools
   * (domain/agent-loop/handoff.ts) instead of routing by keywords first. The local engine does not set it: the
   * keyword router (vocabulary/router.ts) chooses for it.
   */
  readonly delegates?: boolean;
  /**
   * What of a request this engine reads as its input, and reports as `inputTokens`: the whole request (absent or
   * `request`: the instructions, the tool definitions and the conversation, as a real model reads them), or only the
   * conversation (the local engine). The reservation counts a call's input the same way (model-input.ts).
   */
  readonly reads?: 'request' | 'conversation';
  /**
   * Streams one model call's answer: text, then the tool calls it asks for. Ends with one `usage`
   * event (tool calls count as output), or throws `EngineError`. Breaking out of the
   * loop stops the work (the caller then bills what it received, see `countTextTokens`).
   */
  stream(request: EngineRequest): AsyncIterable<EngineEvent>;
  /** Drops what the engine holds open (kept-alive connections to its server) when the server stops. */
  close?(): Promise<void>;
}
