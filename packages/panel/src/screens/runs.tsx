/**
 * @module Runs: a paginated list filtered as the filters change (status, agent, alias, source, date), each row with
 * the agent that answered, how long it took, its STU and when it started (the viewer's time zone, relative, UTC on
 * hover); a run that waits for an approval is marked so, with a link to its page where it is decided; with no run
 * yet, how to make one. A run's page is in ./run-detail.tsx.
 */
import { useState } from 'preact/hooks';
import { api, ok, type operations, type Schemas } from '../api.ts';
import { navigate } from '../router.ts';
import { Badge, duration, ErrorNote, Field, Time, useLoad, utcDayBounds } from '../ui.tsx';
import { shownStatus } from '../run-status.ts';
import { AGENT_SLUGS, ALIASES, RUN_SOURCES as SOURCES, RUN_STATUSES as STATUSES } from '../vocabulary.ts';

const PAGE = 20;

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

  /** Every change of a filter applies at once (no button to press). */
  function apply(event: Event) {
    event.preventDefault();
    const form = new FormData((event.currentTarget as HTMLElement).closest('form')!);
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
      <form class="filters" onSubmit={apply} onChange={apply} aria-label="Filter runs">
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
      </form>
      <ErrorNote error={runs.error} />
      <div class="table-wrap">
        <table>
          <caption class="sr-only">Runs, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Request</th>
              <th scope="col">Status</th>
              <th scope="col">Agent</th>
              <th scope="col">Alias</th>
              <th scope="col">Source</th>
              <th scope="col">Started</th>
              <th scope="col">Duration</th>
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
                <td>{run.requestPreview ? <span class="request-preview">{run.requestPreview}</span> : <span class="muted">—</span>}</td>
                <td>
                  <RunStatus run={run} />
                </td>
                <td>
                  {/* A run addressed to the orchestrator shows the department it was routed to, which answered. */}
                  {run.agentSlug}
                  {run.routedTo ? <span class="muted"> → {run.routedTo}</span> : null}
                </td>
                <td>{run.alias}</td>
                <td>{run.source}</td>
                <td>
                  <Time iso={run.createdAt} />
                </td>
                <td>{run.completedAt ? duration(run.createdAt, run.completedAt) : <span class="muted">{run.waitingFor ? 'waiting' : 'running'}</span>}</td>
                <td>{run.usage.stu}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {runs.data && runs.data.data.length === 0 ? filters === NO_FILTERS ? <NoRunsYet /> : <p>No runs match.</p> : null}
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
  const { start, end } = utcDayBounds(filters.from, filters.to);
  if (start) query.createdAfter = start;
  if (end) query.createdBefore = end;
  return query;
}

export function StatusBadge({ status }: { status: Schemas['RunStatus'] }) {
  const { label, tone } = shownStatus({ status });
  return <Badge tone={tone}>{label}</Badge>;
}

/** A row's status: a run that waits for an approval says so, with a link to its page, where it is decided. */
function RunStatus({ run }: { run: Schemas['Run'] }) {
  const { label, tone, waitingOn } = shownStatus(run);
  if (waitingOn === undefined) return <Badge tone={tone}>{label}</Badge>;
  return (
    <>
      <Badge tone={tone}>{label}</Badge>{' '}
      <a
        href={`/panel/runs/${run.id}`}
        onClick={(e) => {
          e.preventDefault();
          navigate(`/runs/${run.id}`);
        }}
      >
        Review {waitingOn}
      </a>
    </>
  );
}

/** The empty list of a new workspace: how a run is made, from the panel or with a key. */
function NoRunsYet() {
  const origin = location.origin;
  return (
    <div class="card empty">
      <h2>No runs yet</h2>
      <p>
        Every invocation of an agent is a run.{' '}
        <a
          href="/panel/try"
          onClick={(e) => {
            e.preventDefault();
            navigate('/try');
          }}
        >
          Try an agent
        </a>{' '}
        here, or call the API with a key (API keys):
      </p>
      <pre>
        <code>{`curl ${origin}/v1/agents/finance/messages \\
  -H "Authorization: Bearer $SERVICE_API_KEY" -H 'Content-Type: application/json' \\
  -d '{"alias":"Sonata","messages":[{"role":"user","content":"Which invoices are overdue?"}]}'`}</code>
      </pre>
    </div>
  );
}
