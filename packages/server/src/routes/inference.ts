/**
 * @module Invocation: createInference (POST /v1/inference), sendAgentMessage (POST
 * /v1/agents/{slug}/messages) and sendOrchestratorMessage (POST /v1/orchestrator/messages).
 * JSON by default; with `stream: true`, Server-Sent Events: `data: {"delta"}` fragments (already
 * through the stream redactor), then `event: end`, or `event: error` when the run fails mid-stream;
 * each with `id:`, its sequence in the run's event log, and the run's id in `X-Run-Id`, so a client
 * whose stream drops resumes it with GET /v1/runs/{run_id}/events (routes/run-events.ts).
 * The JSON errors of a refused invocation (agent, scope, plan, quota, kill switch) come before
 * any stream begins. An API key invokes (source `api`), or a member's session from the panel (source
 * `panel`, with the CSRF header the auth middleware requires on every session write). With `background: true`,
 * `202` with the run's id and a `Location` once it started; it executes detached from the request. Every answer
 * but an error tells the time the service added in `X-Service-Overhead-Ms` (middleware/observe).
 */
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { AppEnv } from '../app-env.ts';
import { ORCHESTRATOR_SLUG } from '../vocabulary/catalog.ts';
import { streamErrorOf, type StreamErrorBody } from '../domain/run-events/index.ts';
import { requestHash, runFailureError, type Run, type RunOutcome } from '../domain/runs/index.ts';
import type { Schema } from '../contract.ts';
import { RESTARTING_MESSAGE } from '../domain/health/open-streams.ts';
import type { TokenUsage } from '../engine/index.ts';
import { fail, retryHints } from '../errors.ts';
import { serviceOverhead } from '../middleware/observe/index.ts';
import { keepUnredacted } from '../middleware/redact/index.ts';
import type { Services } from '../services.ts';
import { authOf, type Answer, type Handler, type Handlers, type Input } from './handler.ts';

type StreamFragment = Schema<'StreamFragment'>;
type StreamEnd = Schema<'StreamEnd'>;

/** The three invocation operations share one answer: JSON, or the same answer as a stream. */
type Invocation = 'createInference' | 'sendAgentMessage' | 'sendOrchestratorMessage';
type InvocationInput = Input<'sendAgentMessage'> | Input<'createInference'> | Input<'sendOrchestratorMessage'>;

const createInference: Handler<'createInference'> = (c, input, services) =>
  invoke(c, input, services, input.body.agentSlug ?? ORCHESTRATOR_SLUG, 'createInference');

// An unknown slug is refused by the run service as on POST /v1/inference: 403 agent_unknown.
const sendAgentMessage: Handler<'sendAgentMessage'> = (c, input, services) =>
  invoke(c, input, services, input.params.slug, `sendAgentMessage:${input.params.slug}`);

const sendOrchestratorMessage: Handler<'sendOrchestratorMessage'> = (c, input, services) =>
  invoke(c, input, services, ORCHESTRATOR_SLUG, 'sendOrchestratorMessage');

async function invoke(
  c: Context<AppEnv>,
  { body, headers }: InvocationInput,
  { runs, clock, streams, standing }: Services,
  agentSlug: string,
  operation: string,
): Promise<Answer<Invocation>> {
  if (body.background && body.stream) throw fail('invalid_body', "'background' and 'stream' cannot both be true.");
  const caller = await invokerOf(c, standing);
  // A client that closed its connection while its request waited (for the store, the limits) is
  // gone: nothing would read the answer, so no run is started and nothing is spent.
  if (c.req.raw.signal.aborted) throw fail('service_unavailable', CLIENT_GONE_MESSAGE, {}, retryHints(1000, true));
  const idempotencyKey = headers['idempotency-key'];
  const started = await runs.start({
    workspaceId: caller.workspaceId,
    agentSlug,
    alias: body.alias,
    messages: body.messages,
    source: caller.source,
    conversationId: body.conversationId,
    maxTokens: body.maxTokens,
    effort: body.effort,
    powerMode: body.powerMode,
    scopes: caller.scopes,
    idempotency: idempotencyKey ? { credentialId: caller.credentialId, key: idempotencyKey, requestHash: requestHash(operation, body) } : undefined,
  });

  if (started.kind === 'ended') throw runFailureError(started.run, clock.now());
  c.header('X-Run-Id', started.kind === 'replay' ? started.runId : started.run.runId);
  if (body.background) return accepted(c, runs, caller.workspaceId, started);
  if (started.kind === 'replay') {
    if (body.stream) return replayStream(c, runs, caller.workspaceId, started.runId);
    const replayed = answerOutcome(await runs.replay(caller.workspaceId, started.runId), clock.now());
    serviceOverhead(c, 0);
    return replayed;
  }
  if (!body.stream) {
    // The time the model and the tools took, which X-Service-Overhead-Ms leaves out.
    let waited = 0;
    const outcome = await runs.execute(started.run, { onWait: (ms) => (waited += ms) });
    // Its answer was just redacted by this server's redactor: the body's redaction need not scan it again. (A replayed
    // answer, stored earlier, is scanned: the deployment's terms may have changed since.)
    keepUnredacted(c, outcome.content);
    const answer = answerOutcome(outcome, clock.now());
    serviceOverhead(c, waited);
    return answer;
  }

  // The stream's headers go before its first model call: the time the service took to begin it.
  serviceOverhead(c, 0);

  const pending = started.run;
  const stream = streamSSE(c, async (stream) => {
    // The client left: the run goes on a little, for the client to follow it again (Last-Event-ID).
    const gone = new AbortController();
    stream.onAbort(() => gone.abort());
    const disconnect = new AbortController();
    // A graceful shutdown ends the stream with `event: error` service_unavailable and stops the run.
    const unregister = streams.register(async () => {
      if (disconnect.signal.aborted) return;
      const body: StreamErrorBody = { error: 'service_unavailable', message: RESTARTING_MESSAGE, runId: pending.runId, requestId: c.get('requestId') };
      disconnect.abort();
      await stream.writeSSE({ event: 'error', data: JSON.stringify(body) }).catch(() => {});
    });
    let outcome: RunOutcome;
    try {
      outcome = await runs.execute(pending, {
        signal: disconnect.signal,
        left: gone.signal,
        onDelta: async (delta, sequence) => {
          if (!gone.signal.aborted) await stream.writeSSE({ id: String(sequence), data: JSON.stringify({ delta } satisfies StreamFragment) });
        },
      });
    } catch {
      // The run could not be closed (the store failed): it has been ended `failed` (or will be,
      // by the sweeper), and the stream still ends with its closing event, never silently.
      if (!disconnect.signal.aborted && !gone.signal.aborted)
        await closeStream(stream, { id: pending.runId, status: 'failed', failureReason: 'internal_error' }, c.get('requestId'));
      return;
    } finally {
      unregister();
    }
    if (disconnect.signal.aborted || gone.signal.aborted) return;
    await closeStream(stream, outcome.run, c.get('requestId'), outcome.lastSequence);
  });
  return { status: 200, stream };
}

/**
 * `background: true`: the run executes detached from the request, on the same path as an inbound run's
 * (`executeDetached`); the answer is `202` with its id and where to read it. A retried request names its first run.
 */
async function accepted(
  c: Context<AppEnv>,
  runs: Services['runs'],
  workspaceId: string,
  started: Exclude<Awaited<ReturnType<Services['runs']['start']>>, { kind: 'ended' }>,
): Promise<Answer<Invocation>> {
  const runId = started.kind === 'replay' ? started.runId : started.run.runId;
  if (started.kind === 'started') runs.executeDetached(started.run);
  const status = started.kind === 'replay' ? (await runs.getRun(workspaceId, runId)).run.status : 'in_progress';
  c.header('Location', `/runs/${runId}`);
  serviceOverhead(c, 0);
  return { status: 202, body: { runId, status } };
}

/** The answer (never read) of a request whose client left before its run started. */
const CLIENT_GONE_MESSAGE = 'The connection was closed before the run started; no run was made.';

/** Who invokes: an API key, or a member trying an agent in the panel with a session. */
interface Invoker {
  workspaceId: string;
  /** The idempotency keys' owner: the API key, or the session's user. */
  credentialId: string;
  scopes: readonly string[];
  source: 'api' | 'panel';
}

/**
 * A session may invoke every agent of the plan (as a key with `orchestrator:invoke`), and spends only
 * while the workspace is in good standing, as a key of it would. The plan, paused agents, quota and
 * kill switches are the run service's checks, the same for both.
 */
async function invokerOf(c: Context<AppEnv>, standing: Services['standing']): Promise<Invoker> {
  const auth = c.get('auth');
  if (auth?.scheme === 'adminSession') {
    await standing.requireGood(auth.workspaceId);
    return { workspaceId: auth.workspaceId, credentialId: auth.userId, scopes: [SESSION_INVOKE_SCOPE], source: 'panel' };
  }
  const key = authOf(c, 'apiKey');
  return { workspaceId: key.workspaceId, credentialId: key.keyId, scopes: key.scopes, source: 'api' };
}

const SESSION_INVOKE_SCOPE = 'orchestrator:invoke';

/** The synchronous answer, first or replayed; a run that failed answers the spec's error for its reason. */
function answerOutcome({ run, answeredBy, content, usage }: RunOutcome, now: Date): Answer<Invocation> {
  if (run.status === 'failed') throw runFailureError(run, now);
  // A run canceled while it ran answers what it produced before the cancel (GET /runs shows `canceled`); a run
  // that waits for an approval (domain/runs/pause.ts) answers what it said so far and the approval it waits for.
  const waiting = run.waitingFor ? { waitingFor: run.waitingFor } : {};
  return { status: 200, body: { runId: run.id, agentSlug: answeredBy, alias: run.alias, content, usage, ...waiting } };
}

/**
 * A retried streaming request: the first request's stream again, from the run's event log (its
 * fragments with their ids, then the end or error event), live if the run is still in progress.
 */
function replayStream(c: Context<AppEnv>, runs: Services['runs'], workspaceId: string, runId: string): Answer<Invocation> {
  serviceOverhead(c, 0);
  const stream = streamSSE(c, async (stream) => {
    const stop = new AbortController();
    stream.onAbort(() => stop.abort());
    let usage: TokenUsage | undefined;
    for await (const event of runs.events(workspaceId, runId, { after: 0, signal: stop.signal })) {
      const id = String(event.sequence);
      if (event.type === 'text.delta') await stream.writeSSE({ id, data: JSON.stringify({ delta: event.delta } satisfies StreamFragment) });
      else if (event.type === 'run.usage') usage = tokensOf(event.usage);
      else if (event.type === 'run.failed')
        await stream.writeSSE({ id, event: 'error', data: JSON.stringify(streamErrorOf({ id: runId, failureReason: event.reason }, c.get('requestId'))) });
      else if (event.type === 'run.completed' || event.type === 'run.canceled')
        await stream.writeSSE({
          id,
          event: 'end',
          data: JSON.stringify({ done: true, runId, usage: usage ?? { inputTokens: 0, outputTokens: 0 } } satisfies StreamEnd),
        });
    }
  });
  return { status: 200, stream };
}

async function closeStream(
  stream: { writeSSE(message: { data: string; event?: string; id?: string }): Promise<void> },
  run: Pick<Run, 'id' | 'status' | 'failureReason'> & Partial<Pick<Run, 'usage' | 'waitingFor'>>,
  requestId: string,
  sequence?: number,
): Promise<void> {
  const id = sequence === undefined ? {} : { id: String(sequence) };
  if (run.status === 'failed' || !run.usage) {
    await stream.writeSSE({ ...id, event: 'error', data: JSON.stringify(streamErrorOf(run, requestId)) });
    return;
  }
  // A run that waits for an approval ends the stream here (its `id:` is `approval.requested`'s); the client follows its events.
  const waiting = run.waitingFor ? { waitingFor: run.waitingFor } : {};
  await stream.writeSSE({
    ...id,
    event: 'end',
    data: JSON.stringify({ done: true, runId: run.id, usage: tokensOf(run.usage), ...waiting } satisfies StreamEnd),
  });
}

function tokensOf(usage: Pick<Run['usage'], 'inputTokens' | 'outputTokens'>): TokenUsage {
  return { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
}

export const inferenceHandlers = {
  createInference,
  sendAgentMessage,
  sendOrchestratorMessage,
} satisfies Partial<Handlers>;
