/**
 * @module The Engine interface behind the aliases. A run asks an engine for events; which engine
 * (and which real model) serves an alias is server configuration only. Nothing an engine yields or
 * throws names a provider or a model.
 */
import type { Alias } from '../vocabulary/alias.ts';
import type { components } from '../../../../generated/types.ts';

/** The kinds of draft the contract names (`draft.created`). */
export type DraftKind = components['schemas']['DraftCreatedData']['kind'];

export type Effort = NonNullable<components['schemas']['InferenceRequest']['effort']>;
export type PowerMode = NonNullable<components['schemas']['InferenceRequest']['powerMode']>;

/** A message of the conversation, as the contract's `Message`. */
export type EngineMessage = Readonly<components['schemas']['Message']>;

export interface EngineRequest {
  readonly alias: Alias;
  /** The agent that answers (a department, or `orchestrator`). */
  readonly agentSlug: string;
  /** The conversation so far, earlier turns first. */
  readonly messages: readonly EngineMessage[];
  /** Cap on output tokens (1–32,000). */
  readonly maxTokens?: number;
  readonly effort?: Effort;
  readonly powerMode?: PowerMode;
  /** Aborting ends the stream with `EngineError` reason `aborted`. */
  readonly signal?: AbortSignal;
  /** Hint: false lets an engine answer in one piece (synchronous calls). Default true. */
  readonly stream?: boolean;
}

export interface TokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export type EngineEvent =
  | { readonly type: 'text'; readonly delta: string }
  /** A tool the agent called, `name` of the form `<area>.<verb>`; `result` is null when not reported. */
  | {
      readonly type: 'tool_call';
      readonly name: string;
      readonly arguments: Readonly<Record<string, unknown>>;
      readonly result: string | null;
    }
  | { readonly type: 'draft'; readonly kind: DraftKind; readonly subject: string; readonly body: string }
  /** A sensitive action the agent wants a person to approve; `action` has the form `<area>.<verb>`. */
  | { readonly type: 'approval_request'; readonly action: string; readonly summary: string }
  /** Always the last event of a successful stream. */
  | { readonly type: 'usage'; readonly inputTokens: number; readonly outputTokens: number };

export interface Engine {
  /**
   * What this engine is configured with that must never reach a client: the real model names
   * behind the aliases, the provider's host, its key. The app adds them to its redactor.
   */
  readonly confidentialTerms?: readonly string[];
  /**
   * Streams the answer. Ends with one `usage` event, or throws `EngineError`. Breaking out of the
   * loop stops the work (the caller then bills what it received, see `countTextTokens`).
   */
  stream(request: EngineRequest): AsyncIterable<EngineEvent>;
}
