/**
 * @module Try an agent: pick an agent and an alias, send a message, watch the streamed answer (the same
 * invocation route the API offers, called with the session and its CSRF token). The run appears under Runs.
 */
import { useRef, useState } from 'preact/hooks';
import { ApiError, csrfHeader, type Schemas, toApiError, watchAnswer } from '../api.ts';
import { navigate } from '../router.ts';
import { readSse } from '../sse.ts';
import { ErrorNote, Field } from '../ui.tsx';
import { useAgents } from './agents.tsx';

const ALIASES: Schemas['ModelAlias'][] = ['Prelude', 'Sonata', 'Symphony', 'Concerto'];

export function TryScreen() {
  const agents = useAgents();
  const [answer, setAnswer] = useState('');
  const [runId, setRunId] = useState<string | undefined>(undefined);
  const [state, setState] = useState<'idle' | 'streaming' | 'done'>('idle');
  const [error, setError] = useState<unknown>(undefined);
  const abort = useRef<AbortController | undefined>(undefined);

  async function send(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const slug = String(form.get('agent'));
    const body: Schemas['AgentMessageRequest'] = {
      alias: String(form.get('alias')) as Schemas['ModelAlias'],
      messages: [{ role: 'user', content: String(form.get('message')) }],
      stream: true,
    };
    setAnswer('');
    setRunId(undefined);
    setError(undefined);
    setState('streaming');
    abort.current = new AbortController();
    try {
      const response = await fetch(`/v1/agents/${encodeURIComponent(slug)}/messages`, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', ...csrfHeader() },
        body: JSON.stringify(body),
        signal: abort.current.signal,
      });
      watchAnswer(response);
      if (!response.ok || !response.body) throw toApiError(response, await response.json().catch(() => ({})));
      for await (const message of readSse(response.body)) {
        const data = JSON.parse(message.data) as Record<string, unknown>;
        if (typeof data.runId === 'string') setRunId(data.runId);
        if (message.event === 'error')
          throw new ApiError(200, String(data.error), String(data.message ?? 'The answer stopped.'), data.requestId as string, undefined, data);
        if (message.event === 'end') break;
        if (typeof data.delta === 'string') setAnswer((text) => text + data.delta);
      }
      setState('done');
    } catch (err) {
      if (!(err instanceof DOMException && err.name === 'AbortError')) setError(err);
      setState('done');
    }
  }

  return (
    <section aria-labelledby="try-title">
      <h1 id="try-title">Try an agent</h1>
      <ErrorNote error={agents.error} />
      <form class="card" onSubmit={send} aria-labelledby="try-title">
        <div class="row wrap">
          <Field label="Agent">
            <select name="agent">
              {(agents.data ?? [])
                .filter((a) => a.state === 'active')
                .map((a) => (
                  <option key={a.slug} value={a.slug}>
                    {a.name} ({a.slug})
                  </option>
                ))}
            </select>
          </Field>
          <Field label="Alias">
            <select name="alias" value="Sonata">
              {ALIASES.map((a) => (
                <option key={a}>{a}</option>
              ))}
            </select>
          </Field>
        </div>
        <Field label="Message">
          <textarea name="message" rows={4} required maxLength={20000} />
        </Field>
        <div class="row">
          <button type="submit" class="primary" disabled={state === 'streaming'}>
            Send
          </button>
          {state === 'streaming' ? (
            <button type="button" onClick={() => abort.current?.abort()}>
              Stop
            </button>
          ) : null}
        </div>
      </form>
      <ErrorNote error={error} />
      <h2>Answer</h2>
      <output class="answer" aria-live="polite" aria-busy={state === 'streaming'} aria-label="Streamed answer">
        {answer || (state === 'streaming' ? '…' : '')}
      </output>
      <p aria-live="polite">
        {state === 'done' && runId ? (
          <>
            Run{' '}
            <a
              href={`/panel/runs/${runId}`}
              onClick={(e) => {
                e.preventDefault();
                navigate(`/runs/${runId}`);
              }}
            >
              <code>{runId}</code>
            </a>{' '}
            is listed under Runs.
          </>
        ) : state === 'streaming' ? (
          'Streaming…'
        ) : null}
      </p>
    </section>
  );
}
