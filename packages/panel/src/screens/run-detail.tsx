/**
 * @module A run's page: its redacted content, steps, tool calls, usage and failure reason, and cancel (any member,
 * confirmed: `cancelRun` with the session and its CSRF token). An `in_progress` run is followed live through its
 * event log (`getRunEvents`, see ../run-events.ts) rather than read again and again: the answer grows fragment by
 * fragment, the routed agent, tool calls, approvals requested and drafts appear as they happen, and after the
 * terminal event the run is read once more for its final state. A run that waits for an approval (`waitingFor`)
 * stays followed while it waits, says so, and offers an owner or admin Approve / Reject right there (the Approvals
 * screen's decision, ../approval-decision.tsx); the decision, the run resuming and the rest of its answer then
 * arrive as events.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, csrfHeader, ok, type Schemas } from '../api.ts';
import { canDecide, DecisionButtons, decideApproval } from '../approval-decision.tsx';
import { applyConnection, applyRunEvent, type LiveApproval, type LiveRun, routedToShown, startLive, statusAfter, stopped, type Waiting } from '../live-run.ts';
import { navigate } from '../router.ts';
import { followRunEvents } from '../run-events.ts';
import { useSession } from '../session.ts';
import { Badge, ConfirmButton, ErrorNote, when } from '../ui.tsx';
import { StatusBadge } from './runs.tsx';

export function RunDetailScreen({ runId }: { runId: string }) {
  const [detail, setDetail] = useState<Schemas['RunDetail'] | undefined>(undefined);
  const [live, setLive] = useState<LiveRun | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  /** Bumped by "Follow the run again" after the live view stopped on an error. */
  const [attempt, setAttempt] = useState(0);

  // Read once; if the run is still in progress, follow its events to the terminal one, then read once more.
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    const read = () => ok(api.GET('/runs/{run_id}', { params: { path: { run_id: runId } }, signal }));
    setLive(undefined);
    void (async () => {
      try {
        const first = await read();
        if (signal.aborted) return;
        setDetail(first);
        setError(undefined);
        if (first.run.status !== 'in_progress') return;
        // A waiting run is followed too: its log replays up to `approval.requested`, then stays open (kept alive by
        // the server, resumed after a drop) until the decision's events and the rest of the run arrive.
        setLive(startLive(first.run.waitingFor));
        const end = await followRunEvents(runId, {
          signal,
          onEvent: (event) => setLive((current) => current && applyRunEvent(current, event)),
          onConnection: (connection) => setLive((current) => current && applyConnection(current, connection)),
        });
        if (!end || signal.aborted) return;
        const last = await read();
        if (!signal.aborted) setDetail(last);
      } catch (err) {
        if (signal.aborted) return;
        setError(err);
        setLive((current) => current && stopped(current));
      }
    })();
    return () => controller.abort();
  }, [runId, attempt]);

  const shown = detail?.run.id === runId ? detail : undefined;
  const run = shown?.run;
  // Live until the run is read in a final state (the terminal event's read, or a cancel's answer).
  const following = live !== undefined && run?.status === 'in_progress';
  const status = run && following && live.end ? statusAfter(live.end) : run?.status;
  const routedTo = routedToShown(run, following ? live : undefined);
  const usage = following && live.usage ? live.usage : run?.usage;
  const flowing = following && !live.end && live.connection !== 'stopped';
  const waiting = following && !live.end ? live.waiting : undefined;
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
      {/* Always in the page, so that each change is announced; it changes with the run's state, not per fragment. */}
      <p role="status" class="live-status">
        {live?.said ?? ''}
      </p>
      <ErrorNote error={error} />
      {error && run?.status === 'in_progress' ? (
        <p>
          <button type="button" onClick={() => setAttempt((n) => n + 1)}>
            Follow the run again
          </button>
        </p>
      ) : null}
      {run && status && usage ? (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={status} /> {flowing ? <span class="muted">(live)</span> : null}
            </dd>
            <dt>Agent</dt>
            <dd>{run.agentSlug}</dd>
            {routedTo ? (
              <>
                <dt>Routed to</dt>
                <dd>{routedTo}</dd>
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
              {usage.stu} STU · {usage.inputTokens} input tokens · {usage.outputTokens} output tokens
            </dd>
            {run.failureReason ? (
              <>
                <dt>Failure reason</dt>
                <dd class="flag">{run.failureReason}</dd>
              </>
            ) : null}
          </dl>
          {status === 'in_progress' ? (
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
          {waiting ? (
            <WaitingApproval
              waiting={waiting}
              onDecided={() => {
                // The live view shows the decision as it arrives; one that stopped is started again to see it.
                if (live?.connection === 'stopped') setAttempt((n) => n + 1);
              }}
            />
          ) : null}
          <h2>Content (redacted)</h2>
          {/* Text only: whatever the answer holds is shown as characters, never as markup. */}
          <pre class="content" aria-busy={flowing}>
            {following ? live.answer || '…' : (run.content ?? (live?.answer || '—'))}
          </pre>
          <h2>Steps</h2>
          <ol class="steps">
            {shown.steps.map((s) => (
              <li key={s.id}>
                <Badge tone="grey">{s.kind}</Badge> <strong>{s.agentSlug}</strong> {s.summary} <span class="muted">{when(s.createdAt)}</span>
              </li>
            ))}
          </ol>
          <h2>Tool calls</h2>
          {following ? <LiveToolCalls live={live} /> : <ToolCalls toolCalls={shown.toolCalls} />}
          {live ? <Requested live={live} /> : null}
        </>
      ) : null}
    </section>
  );
}

function ToolCalls({ toolCalls }: { toolCalls: Schemas['ToolCall'][] }) {
  if (toolCalls.length === 0) return <p>None.</p>;
  return (
    <ul class="steps">
      {toolCalls.map((t) => (
        <li key={t.id}>
          <code>{t.name}</code> <Badge tone={t.status === 'completed' ? 'green' : t.status === 'failed' ? 'red' : 'amber'}>{t.status}</Badge>
          <pre>{JSON.stringify(t.arguments, null, 2)}</pre>
          {t.result ? <p>{t.result}</p> : null}
        </li>
      ))}
    </ul>
  );
}

/** The tool calls announced so far (their arguments and results come with the final read). */
function LiveToolCalls({ live }: { live: LiveRun }) {
  if (live.toolCalls.length === 0) return <p>None yet.</p>;
  return (
    <ul class="steps">
      {live.toolCalls.map((t) => (
        <li key={t.sequence}>
          <code>{t.name}</code> <Badge tone="blue">called</Badge> {t.summary}
        </li>
      ))}
    </ul>
  );
}

/** Approvals requested and drafts written, seen in the live events (both are saved when the run completes). */
function Requested({ live }: { live: LiveRun }) {
  return (
    <>
      {live.approvals.length > 0 ? (
        <>
          <h2 id="approvals-requested">Approvals requested</h2>
          <ul class="steps" aria-labelledby="approvals-requested">
            {live.approvals.map((a) => (
              <li key={a.sequence}>
                <code>{a.action}</code> {a.summary} <ApprovalState approval={a} waiting={live.waiting} />
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {live.drafts.length > 0 ? (
        <>
          <h2>Drafts</h2>
          <ul class="steps">
            {live.drafts.map((d) => (
              <li key={d.sequence}>
                <Badge tone="grey">{d.kind}</Badge> {d.subject}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}

/** The approval the run waits for: what it is, until when, and for an owner or admin, the decision right here. */
function WaitingApproval({ waiting, onDecided }: { waiting: Waiting; onDecided(): void }) {
  const { session } = useSession();
  const [error, setError] = useState<unknown>(undefined);
  return (
    <section class="waiting" aria-labelledby="waiting-title">
      <h2 id="waiting-title">Waiting for an approval</h2>
      <p>
        <code>{waiting.action}</code> {waiting.summary}
        {waiting.expiresAt ? <span class="muted"> Expires {when(waiting.expiresAt)}; unanswered, it counts as rejected.</span> : null}
      </p>
      <ErrorNote error={error} />
      {canDecide(session) ? (
        <p class="actions">
          <DecisionButtons
            action={waiting.action}
            onDecide={async (decision) => {
              setError(undefined);
              try {
                await decideApproval(waiting.approvalId, decision);
                onDecided();
              } catch (err) {
                setError(err);
              }
            }}
          />
        </p>
      ) : (
        <p class="muted">An owner or admin of the workspace decides it, here or under Approvals.</p>
      )}
    </section>
  );
}

/** How an approval requested stands: decided (and how), waited for, or, without an id, created when the run ends. */
function ApprovalState({ approval, waiting }: { approval: LiveApproval; waiting: Waiting | undefined }) {
  if (approval.decision) return <Badge tone={approval.decision === 'approved' ? 'green' : 'grey'}>{approval.decision}</Badge>;
  if (approval.approvalId !== undefined && approval.approvalId === waiting?.approvalId) return <Badge tone="amber">waiting</Badge>;
  return null;
}
