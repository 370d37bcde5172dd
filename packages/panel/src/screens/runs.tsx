/**
 * @module Runs: a filterable, paginated list (status, agent, alias, source, date) and a run's detail (redacted
 * content, steps, tool calls, usage, failure reason), a live view that follows a run until it ends, and cancel
 * (any member, confirmed: `cancelRun` with the session and its CSRF token).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, csrfHeader, ok, type operations, type Schemas } from '../api.ts';
import { navigate } from '../router.ts';
import { Badge, ConfirmButton, ErrorNote, Field, useLoad, when } from '../ui.tsx';
import { AGENT_SLUGS } from './keys.tsx';

const PAGE = 20;
const STATUSES: Schemas['RunStatus'][] = ['in_progress', 'completed', 'failed', 'canceled'];
const ALIASES: Schemas['ModelAlias'][] = ['Prelude', 'Sonata', 'Symphony', 'Concerto'];
const SOURCES: Schemas['Run']['source'][] = ['api', 'panel', 'inbound_webhook', 'mcp'];

interface Filters {
  status: string;
  agent: string;
  alias: string;
  source: string;
  from: string;
  to: string;
}

const NO_FILTERS: Filters = { status: '', agent: '', alias: '', source: '', from: '', to: '' };

export function RunsScreen() {
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [offset, setOffset] = useState(0);
  const runs = useLoad(() => ok(api.GET('/runs', { params: { query: queryOf(filters, offset) } })), [filters, offset]);

  function apply(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setOffset(0);
    setFilters({
      status: String(form.get('status') ?? ''),
      agent: String(form.get('agent') ?? ''),
      alias: String(form.get('alias') ?? ''),
      source: String(form.get('source') ?? ''),
      from: String(form.get('from') ?? ''),
      to: String(form.get('to') ?? ''),
    });
  }

  const total = runs.data?.total ?? 0;
  return (
    <section aria-labelledby="runs-title">
      <h1 id="runs-title">Runs</h1>
      <form class="filters" onSubmit={apply} aria-label="Filter runs">
        <Field label="Status">
          <select name="status">
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </Field>
        <Field label="Agent">
          <select name="agent">
            <option value="">any</option>
            {AGENT_SLUGS.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </Field>
        <Field label="Alias">
          <select name="alias">
            <option value="">any</option>
            {ALIASES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </Field>
        <Field label="Source">
          <select name="source">
            <option value="">any</option>
            {SOURCES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </Field>
        <Field label="From (UTC date)">
          <input type="date" name="from" />
        </Field>
        <Field label="To (UTC date)">
          <input type="date" name="to" />
        </Field>
        <button type="submit" class="primary">
          Apply filters
        </button>
      </form>
      <ErrorNote error={runs.error} />
      <div class="table-wrap">
        <table>
          <caption class="sr-only">Runs, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Status</th>
              <th scope="col">Agent</th>
              <th scope="col">Alias</th>
              <th scope="col">Source</th>
              <th scope="col">Created</th>
              <th scope="col">STU</th>
            </tr>
          </thead>
          <tbody>
            {runs.data?.data.map((run) => (
              <tr key={run.id}>
                <td>
                  <a
                    href={`/panel/runs/${run.id}`}
                    onClick={(e) => {
                      e.preventDefault();
                      navigate(`/runs/${run.id}`);
                    }}
                  >
                    <code>{run.id}</code>
                  </a>
                </td>
                <td>
                  <StatusBadge status={run.status} />
                </td>
                <td>
                  {/* A run addressed to the orchestrator shows the department it was routed to, which answered. */}
                  {run.agentSlug}
                  {run.routedTo ? <span class="muted"> → {run.routedTo}</span> : null}
                </td>
                <td>{run.alias}</td>
                <td>{run.source}</td>
                <td>{when(run.createdAt)}</td>
                <td>{run.usage.stu}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {runs.data && runs.data.data.length === 0 ? <p>No runs match.</p> : null}
      <nav class="pager" aria-label="Pages of runs">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Previous page
        </button>
        <span>
          {total === 0 ? 0 : offset + 1}–{Math.min(offset + PAGE, total)} of {total}
        </span>
        <button type="button" disabled={offset + PAGE >= total} onClick={() => setOffset(offset + PAGE)}>
          Next page
        </button>
      </nav>
    </section>
  );
}

type RunsQuery = NonNullable<operations['listRuns']['parameters']['query']>;

function queryOf(filters: Filters, offset: number): RunsQuery {
  const query: RunsQuery = { limit: PAGE, offset };
  if (filters.status) query.status = filters.status as Schemas['RunStatus'];
  if (filters.agent) query.agent_slug = filters.agent;
  if (filters.alias) query.alias = filters.alias as Schemas['ModelAlias'];
  if (filters.source) query.source = filters.source as Schemas['Run']['source'];
  if (filters.from) query.createdAfter = `${filters.from}T00:00:00Z`;
  // The whole "to" day: up to the start of the next one.
  if (filters.to) query.createdBefore = new Date(Date.parse(`${filters.to}T00:00:00Z`) + 86_400_000).toISOString();
  return query;
}

export function StatusBadge({ status }: { status: Schemas['RunStatus'] }) {
  const tone = { in_progress: 'blue', completed: 'green', failed: 'red', canceled: 'grey' }[status];
  return <Badge tone={tone}>{status.replace('_', ' ')}</Badge>;
}

export function RunDetailScreen({ runId }: { runId: string }) {
  const [detail, setDetail] = useState<Schemas['RunDetail'] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

  // Live view: an in-progress run is read again every second and a half until it ends.
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async () => {
      try {
        const next = await ok(api.GET('/runs/{run_id}', { params: { path: { run_id: runId } } }));
        if (!live) return;
        setDetail(next);
        setError(undefined);
        if (next.run.status === 'in_progress') timer = setTimeout(read, 1500);
      } catch (err) {
        if (live) setError(err);
      }
    };
    void read();
    return () => {
      live = false;
      if (timer) clearTimeout(timer);
    };
  }, [runId]);

  const run = detail?.run;
  return (
    <section aria-labelledby="run-title">
      <p>
        <a
          href="/panel/runs"
          onClick={(e) => {
            e.preventDefault();
            navigate('/runs');
          }}
        >
          ← All runs
        </a>
      </p>
      <h1 id="run-title">
        Run <code>{runId}</code>
      </h1>
      <ErrorNote error={error} />
      {run ? (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={run.status} /> {run.status === 'in_progress' ? <span class="muted">(live: updates by itself)</span> : null}
            </dd>
            <dt>Agent</dt>
            <dd>{run.agentSlug}</dd>
            {run.routedTo ? (
              <>
                <dt>Routed to</dt>
                <dd>{run.routedTo}</dd>
              </>
            ) : null}
            <dt>Alias</dt>
            <dd>{run.alias}</dd>
            <dt>Source</dt>
            <dd>{run.source}</dd>
            <dt>Created</dt>
            <dd>{when(run.createdAt)}</dd>
            <dt>Completed</dt>
            <dd>{when(run.completedAt)}</dd>
            <dt>Usage</dt>
            <dd>
              {run.usage.stu} STU · {run.usage.inputTokens} input tokens · {run.usage.outputTokens} output tokens
            </dd>
            {run.failureReason ? (
              <>
                <dt>Failure reason</dt>
                <dd class="flag">{run.failureReason}</dd>
              </>
            ) : null}
          </dl>
          {run.status === 'in_progress' ? (
            <p class="actions">
              <ConfirmButton
                danger
                label="Cancel this run"
                confirmLabel="Cancel now"
                question="Cancel this run? Tokens already produced stay billed."
                onConfirm={async () => {
                  try {
                    const canceled = await ok(api.POST('/runs/{run_id}/cancel', { params: { path: { run_id: run.id }, header: csrfHeader() } }));
                    setDetail((current) => (current ? { ...current, run: canceled } : current));
                    setError(undefined);
                  } catch (err) {
                    setError(err);
                  }
                }}
              />
            </p>
          ) : null}
          <h2>Content (redacted)</h2>
          <pre class="content" aria-live="polite">
            {run.content ?? '—'}
          </pre>
          <h2>Steps</h2>
          <ol class="steps">
            {detail.steps.map((s) => (
              <li key={s.id}>
                <Badge tone="grey">{s.kind}</Badge> <strong>{s.agentSlug}</strong> {s.summary} <span class="muted">{when(s.createdAt)}</span>
              </li>
            ))}
          </ol>
          <h2>Tool calls</h2>
          {detail.toolCalls.length === 0 ? <p>None.</p> : null}
          <ul class="steps">
            {detail.toolCalls.map((t) => (
              <li key={t.id}>
                <code>{t.name}</code> <Badge tone={t.status === 'completed' ? 'green' : t.status === 'failed' ? 'red' : 'amber'}>{t.status}</Badge>
                <pre>{JSON.stringify(t.arguments, null, 2)}</pre>
                {t.result ? <p>{t.result}</p> : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
