/**
 * @module Try an agent: a conversation with one agent and alias. Each message is an invocation (the same route the
 * API offers, called with the session and its CSRF token) with the conversation's `conversationId`, so the agent
 * is given the earlier turns; the turns are shown as they stream. A stream that drops is resumed from the run's
 * event log after the last fragment shown (`Last-Event-ID`, run-events.ts); Stop cancels the run. Each answer
 * links to its run.
 */
import { useRef, useState } from 'preact/hooks';
import { ApiError, api, csrfHeader, ok, type Schemas, toApiError, watchAnswer } from '../api.ts';
import { navigate } from '../router.ts';
import { followRunEvents } from '../run-events.ts';
import { readSse } from '../sse.ts';
import { ErrorNote, Field } from '../ui.tsx';
import { ALIASES } from '../vocabulary.ts';
import { useAgents } from './agents.tsx';

interface Turn {
  role: 'user' | 'assistant';
  content: string;
  runId?: string;
  /** An answer's state: streaming, done, or how it ended otherwise. */
  state?: 'streaming' | 'done' | 'failed' | 'canceled';
}

/** A conversation id of the panel's own: `try-` and 16 random characters. */
function newConversationId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `try-${btoa(String.fromCharCode(...bytes))
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 16)}`;
}

export function TryScreen() {
  const agents = useAgents();
  const [conversationId, setConversationId] = useState(newConversationId);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [agent, setAgent] = useState<string | undefined>(undefined);
  const [alias, setAlias] = useState<Schemas['ModelAlias']>('Sonata');
  const [streaming, setStreaming] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const abort = useRef<AbortController | undefined>(undefined);
  const current = useRef<string | undefined>(undefined);
  const active = (agents.data ?? []).filter((a) => a.state === 'active');
  const slug = agent ?? active[0]?.slug;

  /** Changes the answer being streamed (the last turn). */
  const answer = (change: (turn: Turn) => Turn) => setTurns((all) => [...all.slice(0, -1), change(all.at(-1)!)]);

  async function send(event: Event) {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const message = String(new FormData(form).get('message'));
    if (!slug) return;
    const body: Schemas['AgentMessageRequest'] = { alias, messages: [{ role: 'user', content: message }], stream: true, conversationId };
    setTurns((all) => [...all, { role: 'user', content: message }, { role: 'assistant', content: '', state: 'streaming' }]);
    setError(undefined);
    setStreaming(true);
    current.current = undefined;
    abort.current = new AbortController();
    const { signal } = abort.current;
    let last = 0;
    try {
      const response = await fetch(`/v1/agents/${encodeURIComponent(slug)}/messages`, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', ...csrfHeader() },
        body: JSON.stringify(body),
        signal,
      });
      watchAnswer(response);
      if (!response.ok || !response.body) throw toApiError(response, await response.json().catch(() => ({})));
      form.reset();
      const runId = response.headers.get('X-Run-Id') ?? undefined;
      current.current = runId;
      answer((turn) => ({ ...turn, runId }));
      let ended = false;
      try {
        for await (const sse of readSse(response.body)) {
          const data = JSON.parse(sse.data) as Record<string, unknown>;
          if (sse.event === 'error')
            throw new ApiError(200, String(data.error), String(data.message ?? 'The answer stopped.'), data.requestId as string, undefined, data);
          if (sse.event === 'end') {
            ended = true;
            break;
          }
          if (typeof data.delta === 'string') answer((turn) => ({ ...turn, content: turn.content + data.delta }));
          if (sse.id) last = Number(sse.id);
        }
      } catch (err) {
        // The connection broke mid-answer: resumed below from the run's event log.
        if (err instanceof ApiError || signal.aborted || !runId) throw err;
      }
      if (!ended && runId) await resume(runId, last, signal);
      answer((turn) => ({ ...turn, state: turn.state === 'streaming' ? 'done' : turn.state }));
    } catch (err) {
      if (signal.aborted) answer((turn) => ({ ...turn, state: 'canceled' }));
      else {
        setError(err);
        answer((turn) => ({ ...turn, state: 'failed' }));
      }
    } finally {
      setStreaming(false);
    }
  }

  /** The rest of an answer whose stream dropped, from the run's event log after the last fragment shown. */
  async function resume(runId: string, after: number, signal: AbortSignal): Promise<void> {
    const end = await followRunEvents(runId, {
      signal,
      after,
      onConnection: () => {},
      onEvent: (event) => {
        if (event.type === 'text.delta') answer((turn) => ({ ...turn, content: turn.content + event.delta }));
      },
    });
    if (end?.type === 'run.failed') throw new ApiError(200, end.error, end.message, undefined, undefined, { ...end });
    if (end?.type === 'run.canceled') answer((turn) => ({ ...turn, state: 'canceled' }));
  }

  /** Stops the answer: the run is canceled (what it produced is billed), then the stream is closed. */
  async function stop() {
    const runId = current.current;
    try {
      if (runId) await ok(api.POST('/runs/{run_id}/cancel', { params: { path: { run_id: runId }, header: csrfHeader() } }));
    } catch (err) {
      setError(err);
    } finally {
      abort.current?.abort();
    }
  }

  function restart() {
    setTurns([]);
    setError(undefined);
    setConversationId(newConversationId());
  }

  return (
    <section aria-labelledby="try-title">
      <h1 id="try-title">Try an agent</h1>
      <ErrorNote error={agents.error} />
      <div class="card row wrap">
        <Field label="Agent">
          <select name="agent" value={slug} disabled={turns.length > 0} onChange={(e) => setAgent((e.currentTarget as HTMLSelectElement).value)}>
            {active.map((a) => (
              <option key={a.slug} value={a.slug}>
                {a.name} ({a.slug})
              </option>
            ))}
          </select>
        </Field>
        <Field label="Alias">
          <select name="alias" value={alias} onChange={(e) => setAlias((e.currentTarget as HTMLSelectElement).value as Schemas['ModelAlias'])}>
            {ALIASES.map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
        </Field>
        <p class="muted">
          Conversation <code>{conversationId}</code>
          {turns.length > 0 ? ' — the agent is given the earlier turns. Start a new conversation to change the agent.' : null}
        </p>
        {turns.length > 0 ? (
          <button type="button" onClick={restart} disabled={streaming}>
            New conversation
          </button>
        ) : null}
      </div>
      <ol class="turns" aria-label="Conversation">
        {turns.map((turn, i) => (
          <li key={i} class={`turn ${turn.role}`}>
            <p class="muted">{turn.role === 'user' ? 'You' : `${slug ?? 'Agent'} (${turn.state === 'streaming' ? 'answering…' : turnState(turn)})`}</p>
            <output
              class="answer"
              aria-busy={turn.state === 'streaming'}
              aria-label={turn.role === 'user' ? 'You wrote' : i === turns.length - 1 ? 'Streamed answer' : 'Answer'}
            >
              {turn.content || (turn.state === 'streaming' ? '…' : '')}
            </output>
            {turn.role === 'assistant' && turn.runId && turn.state !== 'streaming' ? (
              <p>
                Run{' '}
                <a
                  href={`/panel/runs/${turn.runId}`}
                  onClick={(e) => {
                    e.preventDefault();
                    navigate(`/runs/${turn.runId}`);
                  }}
                >
                  <code>{turn.runId}</code>
                </a>{' '}
                is listed under Runs.
              </p>
            ) : null}
          </li>
        ))}
      </ol>
      <ErrorNote error={error} />
      <form class="card" onSubmit={send}>
        <Field label="Message">
          <textarea name="message" rows={4} required maxLength={20000} />
        </Field>
        <div class="row">
          <button type="submit" class="primary" disabled={streaming || !slug}>
            Send
          </button>
          {streaming ? (
            <button type="button" onClick={stop}>
              Stop
            </button>
          ) : null}
        </div>
      </form>
      <p aria-live="polite" class="muted">
        {streaming ? 'Streaming…' : turns.length > 0 ? `${turns.length / 2} turn${turns.length === 2 ? '' : 's'} in this conversation.` : ''}
      </p>
    </section>
  );
}

function turnState(turn: Turn): string {
  if (turn.state === 'failed') return 'failed';
  if (turn.state === 'canceled') return 'stopped';
  return 'answered';
}
