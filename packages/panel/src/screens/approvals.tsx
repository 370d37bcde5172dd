/**
 * @module Approvals: the requests agents make before a sensitive action, with action, summary, agent, run and
 * expiry. Owners and admins approve or reject (each confirmed); the decision emits `approval.decided` with
 * the deciding user.
 */
import { useState } from 'preact/hooks';
import { api, ok } from '../api.ts';
import { canDecide, type Decision, DecisionButtons, decideApproval } from '../approval-decision.tsx';
import { navigate } from '../router.ts';
import { useSession } from '../session.ts';
import { Badge, ErrorNote, Field, useLoad, when } from '../ui.tsx';

type Status = 'pending' | 'approved' | 'rejected' | 'expired' | 'all';
const STATUSES: Status[] = ['pending', 'approved', 'rejected', 'expired', 'all'];

export function ApprovalsScreen() {
  const { session } = useSession();
  const admin = canDecide(session);
  const [status, setStatus] = useState<Status>('pending');
  const list = useLoad(() => ok(api.GET('/approvals', { params: { query: { status, limit: 50 } } })), [status]);
  const [error, setError] = useState<unknown>(undefined);
  const [note, setNote] = useState('');

  async function decide(id: string, action: string, decision: Decision) {
    setError(undefined);
    setNote('');
    try {
      await decideApproval(id, decision);
      setNote(`${action} ${decision}.`);
      list.reload();
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section aria-labelledby="approvals-title">
      <h1 id="approvals-title">Approvals</h1>
      <Field label="Show">
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value as Status)}>
          {STATUSES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </Field>
      <ErrorNote error={error ?? list.error} />
      <p role="status" class="note">
        {note}
      </p>
      <div class="table-wrap">
        <table>
          <caption class="sr-only">Approval requests ({status})</caption>
          <thead>
            <tr>
              <th scope="col">Action</th>
              <th scope="col">Summary</th>
              <th scope="col">Agent</th>
              <th scope="col">Run</th>
              <th scope="col">Expires</th>
              <th scope="col">Status</th>
              {admin ? <th scope="col">Decision</th> : null}
            </tr>
          </thead>
          <tbody>
            {list.data?.data.map((a) => (
              <tr key={a.id}>
                <td>
                  <code>{a.action}</code>
                </td>
                <td>{a.summary}</td>
                <td>{a.agentSlug}</td>
                <td>
                  <a
                    href={`/panel/runs/${a.runId}`}
                    onClick={(e) => {
                      e.preventDefault();
                      navigate(`/runs/${a.runId}`);
                    }}
                  >
                    <code>{a.runId}</code>
                  </a>
                </td>
                <td>{when(a.expiresAt)}</td>
                <td>
                  <Badge tone={a.status === 'approved' ? 'green' : a.status === 'pending' ? 'amber' : 'grey'}>{a.status}</Badge>
                  {a.decidedAt ? (
                    <span class="muted">
                      {' '}
                      by {a.decidedBy === session.userId ? 'you' : <code>{a.decidedBy}</code>} {when(a.decidedAt)}
                    </span>
                  ) : null}
                </td>
                {admin ? (
                  <td class="actions">
                    {a.status === 'pending' ? <DecisionButtons action={a.action} onDecide={(decision) => decide(a.id, a.action, decision)} /> : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.data && list.data.data.length === 0 ? <p>No {status === 'all' ? '' : status} approvals.</p> : null}
    </section>
  );
}
