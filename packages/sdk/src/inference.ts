/**
 * @module Invocation: `POST /v1/inference`, synchronous or streamed, and the Set B message routes
 * (`client.agents.message`, `client.orchestrator.message`) that answer the same shapes.
 */
import { ConnectionError, createServiceError, ServiceError } from './core/errors.ts';
import type { OperationInput, OperationSpec } from './core/operation.ts';
import { readSse } from './core/sse.ts';
import type { RequestOptions, Transport } from './core/transport.ts';
import { OPERATIONS, type Schemas } from './generated/operations.ts';
import { resumeStream } from './stream-resume.ts';

export type InferenceRequest = Omit<Schemas['InferenceRequest'], 'stream'>;
export type InferenceResponse = Schemas['InferenceResponse'];
export type AgentMessageRequest = Omit<Schemas['AgentMessageRequest'], 'stream'>;

/** One element of a streamed answer: a redacted text fragment, then the closing event with the run id. */
export type StreamEvent = { type: 'delta'; delta: string } | { type: 'end'; runId: string; usage: Schemas['TokenUsage'] };

export class Inference {
  constructor(private readonly transport: Transport) {}

  /** Invokes an agent (the orchestrator by default) and resolves with its answer and `runId`. */
  create(body: InferenceRequest, options?: RequestOptions): Promise<InferenceResponse> {
    return this.transport.call(OPERATIONS.createInference, { body: { ...body, stream: false } }, options) as Promise<InferenceResponse>;
  }

  /**
   * Invokes with `stream: true`: iterate the fragments, then the `end` event. An `event: error` throws a
   * ServiceError (code `engine_error`, `timeout`, `kill_switch` or `internal_error`, with `runId`);
   * leaving the loop early aborts the request.
   */
  stream(body: InferenceRequest, options?: RequestOptions): AsyncIterable<StreamEvent> {
    return streamOperation(this.transport, OPERATIONS.createInference, { body }, options);
  }
}

export class Agents {
  constructor(private readonly transport: Transport) {}

  /** The workspace's active agents and their aliases (`GET /v1/agents`, needs `departments:read`). */
  list(options?: RequestOptions): Promise<Schemas['AgentList']> {
    return this.transport.call(OPERATIONS.listAgents, {}, options) as Promise<Schemas['AgentList']>;
  }

  /** Sends a message to one agent (`POST /v1/agents/{slug}/messages`); same answer as an invocation. */
  message(slug: string, body: AgentMessageRequest, options?: RequestOptions): Promise<InferenceResponse> {
    return this.transport.call(OPERATIONS.sendAgentMessage, { path: { slug }, body: { ...body, stream: false } }, options) as Promise<InferenceResponse>;
  }

  /** The streamed form of `message`. */
  messageStream(slug: string, body: AgentMessageRequest, options?: RequestOptions): AsyncIterable<StreamEvent> {
    return streamOperation(this.transport, OPERATIONS.sendAgentMessage, { path: { slug }, body }, options);
  }
}

export class Orchestrator {
  constructor(private readonly transport: Transport) {}

  /** Talks to the orchestrator directly (`POST /v1/orchestrator/messages`). */
  message(body: AgentMessageRequest, options?: RequestOptions): Promise<InferenceResponse> {
    return this.transport.call(OPERATIONS.sendOrchestratorMessage, { body: { ...body, stream: false } }, options) as Promise<InferenceResponse>;
  }

  /** The streamed form of `message`. */
  messageStream(body: AgentMessageRequest, options?: RequestOptions): AsyncIterable<StreamEvent> {
    return streamOperation(this.transport, OPERATIONS.sendOrchestratorMessage, { body }, options);
  }
}

async function* streamOperation(transport: Transport, spec: OperationSpec, input: OperationInput, options: RequestOptions = {}): AsyncGenerator<StreamEvent> {
  const abort = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, abort.signal]) : abort.signal;
  let response: Response;
  let lastEventId = 0;
  let dropped: unknown;
  try {
    ({ response } = await transport.send(spec, input, { ...options, signal, stream: true }));
    if (!response.body) throw new TypeError('the stream answer has no body');
    try {
      // A stream silent for the request timeout is taken for dropped: the rest comes from the run's event log.
      for await (const event of readSse(response.body, { idleMs: options.timeoutMs ?? transport.config.timeoutMs })) {
        const data = JSON.parse(event.data) as Record<string, unknown>;
        if (event.event === 'end') {
          yield { type: 'end', runId: String(data.runId), usage: data.usage as Schemas['TokenUsage'] };
          return;
        }
        if (event.event === 'error') throw createServiceError(response.status, data, response.headers);
        if (event.event === 'message' && typeof data.delta === 'string') {
          if (event.id !== undefined && /^\d+$/.test(event.id)) lastEventId = Number(event.id);
          yield { type: 'delta', delta: data.delta };
        }
      }
      dropped = new ConnectionError('the stream ended without its end event');
    } catch (error) {
      if (options.signal?.aborted || error instanceof ServiceError) throw error;
      dropped = error;
    }
  } finally {
    // Leaving the loop early (break, return, an exception) or a drop ends the request.
    abort.abort();
  }
  const runId = response.headers.get('x-run-id');
  if (!runId) {
    // A server without the run's event log: nothing to resume from.
    if (dropped instanceof ConnectionError) throw createServiceError(response.status, { error: 'internal_error', message: dropped.message }, response.headers);
    throw dropped;
  }
  yield* resumeStream(transport, runId, lastEventId, response.headers, options, dropped);
}
