/**
 * @module Drafts: what the workspace's agents wrote for people to review and send (emails, proposals, replies),
 * newest first, by agent and by run, a page at a time; one opens to its subject and body. The service never sends a
 * draft. Every member reads them.
 */
import { useState } from 'preact/hooks';
import { api, ok, type operations } from '../api.ts';
import { navigate } from '../router.ts';
import { AGENT_SLUGS } from '../vocabulary.ts';
import { Badge, ErrorNote, Field, Time, useLoad } from '../ui.tsx';

const PAGE = 25;
type DraftsQuery = NonNullable<operations['listDrafts']['parameters']['query']>;

export function DraftsScreen() {
  const [agent, setAgent] = useState('');
  const [runId, setRunId] = useState('');
  const [offset, setOffset] = useState(0);
  const query: DraftsQuery = { limit: PAGE, offset, ...(agent ? { agent_slug: agent } : {}), ...(runId.trim() ? { run_id: runId.trim() } : {}) };
  const list = useLoad(() => ok(api.GET('/drafts', { params: { query } })), [agent, runId, offset]);
  const total = list.data?.total ?? 0;

  return (
    <section aria-labelledby="drafts-title">
      <h1 id="drafts-title">Drafts</h1>
      <p class="muted">What agents wrote for you to review and send. The service never sends a draft itself.</p>
      <div class="row wrap">
        <Field label="Agent">
          <select
            value={agent}
            onChange={(e) => {
              setAgent(e.currentTarget.value);
              setOffset(0);
            }}
          >
            <option value="">every agent</option>
            {AGENT_SLUGS.map((slug) => (
              <option key={slug}>{slug}</option>
            ))}
          </select>
        </Field>
        <Field label="Run">
          <input
            value={runId}
            placeholder="run_…"
            onChange={(e) => {
              setRunId(e.currentTarget.value);
              setOffset(0);
            }}
          />
        </Field>
      </div>
      <ErrorNote error={list.error} />
      <div class="table-wrap">
        <table>
          <caption class="sr-only">Drafts, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Subject</th>
              <th scope="col">Kind</th>
              <th scope="col">Agent</th>
              <th scope="col">Run</th>
              <th scope="col">Written</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.data.map((d) => (
              <tr key={d.id}>
                <td>
                  <a
                    href={`/panel/drafts/${d.id}`}
                    onClick={(e) => {
                      e.preventDefault();
                      navigate(`/drafts/${d.id}`);
                    }}
                  >
                    {d.subject || '(no subject)'}
                  </a>
                </td>
                <td>
                  <Badge tone="grey">{d.kind}</Badge>
                </td>
                <td>{d.agentSlug}</td>
                <td>
                  <RunLink runId={d.runId} />
                </td>
                <td>
                  <Time iso={d.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.data && list.data.data.length === 0 ? <p>No drafts{agent || runId ? ' match' : ' yet'}.</p> : null}
      <nav class="pager" aria-label="Pages of drafts">
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

export function DraftScreen({ draftId }: { draftId: string }) {
  const draft = useLoad(() => ok(api.GET('/drafts/{draft_id}', { params: { path: { draft_id: draftId } } })), [draftId]);
  const d = draft.data;
  return (
    <section aria-labelledby="draft-title">
      <p>
        <a
          href="/panel/drafts"
          onClick={(e) => {
            e.preventDefault();
            navigate('/drafts');
          }}
        >
          ← Drafts
        </a>
      </p>
      <h1 id="draft-title">{d ? d.subject || '(no subject)' : 'Draft'}</h1>
      <ErrorNote error={draft.error} />
      {d ? (
        <>
          <dl class="facts">
            <dt>Kind</dt>
            <dd>{d.kind}</dd>
            <dt>Agent</dt>
            <dd>{d.agentSlug}</dd>
            <dt>Run</dt>
            <dd>
              <RunLink runId={d.runId} />
            </dd>
            <dt>Written</dt>
            <dd>
              <Time iso={d.createdAt} />
            </dd>
          </dl>
          <h2>Text</h2>
          <pre class="content">{d.body}</pre>
        </>
      ) : null}
    </section>
  );
}

function RunLink({ runId }: { runId: string }) {
  return (
    <a
      href={`/panel/runs/${runId}`}
      onClick={(e) => {
        e.preventDefault();
        navigate(`/runs/${runId}`);
      }}
    >
      <code>{runId}</code>
    </a>
  );
}
