/**
 * @module Agents: the plan's catalog with each agent's alias and state; owners and admins pause an agent with a
 * reason (its callers read it in `403 agent_disabled`) and resume it. Each agent's configuration (instructions,
 * tools, step limit, approvals) opens on a screen of its own (agent-configuration.tsx).
 */
import { useState } from 'preact/hooks';
import { api, csrfHeader, ok, type Schemas } from '../api.ts';
import { navigate } from '../router.ts';
import { isAdmin, useSession } from '../session.ts';
import { Badge, ErrorNote, type Loaded, useLoad, when } from '../ui.tsx';

export function useAgents(): Loaded<Schemas['WorkspaceAgent'][]> {
  return useLoad(async () => (await ok(api.GET('/agents', {}))).data, []);
}

export function AgentsScreen() {
  const { session } = useSession();
  const admin = isAdmin(session);
  const agents = useAgents();
  const [error, setError] = useState<unknown>(undefined);

  async function act(run: () => Promise<unknown>) {
    setError(undefined);
    try {
      await run();
      agents.reload();
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section aria-labelledby="agents-title">
      <h1 id="agents-title">Agents</h1>
      <ErrorNote error={error ?? agents.error} />
      <div class="table-wrap">
        <table>
          <caption class="sr-only">Agents of the workspace's plan</caption>
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">What it does</th>
              <th scope="col">Alias</th>
              <th scope="col">State</th>
              {admin ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {agents.data?.map((a) => (
              <tr key={a.slug}>
                <td>
                  <strong>{a.name}</strong> <code>{a.slug}</code>
                  <br />
                  <a
                    href={`/panel/agents/${a.slug}`}
                    onClick={(e) => {
                      e.preventDefault();
                      navigate(`/agents/${a.slug}`);
                    }}
                  >
                    {admin ? 'Configure' : 'Configuration of'} {a.name}
                  </a>
                </td>
                <td>{a.description}</td>
                <td>{a.alias}</td>
                <td>
                  <Badge tone={a.state === 'active' ? 'green' : a.state === 'paused' ? 'red' : 'grey'}>{a.state.replace(/_/g, ' ')}</Badge>
                  {a.state === 'paused' ? (
                    <span class="muted">
                      {' '}
                      {a.pausedReason ? `“${a.pausedReason}”` : ''} since {when(a.pausedAt)}
                    </span>
                  ) : null}
                </td>
                {admin ? (
                  <td class="actions">
                    {a.state === 'active' ? <PauseForm agent={a} onPause={(reason) => act(() => pause(a.slug, reason))} /> : null}
                    {a.state === 'paused' ? (
                      <button
                        type="button"
                        onClick={() => act(() => ok(api.POST('/agents/{slug}/resume', { params: { path: { slug: a.slug }, header: csrfHeader() } })))}
                      >
                        Resume {a.name}
                      </button>
                    ) : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function pause(slug: string, reason: string) {
  return ok(api.POST('/agents/{slug}/pause', { params: { path: { slug }, header: csrfHeader() }, body: { reason } }));
}

function PauseForm({ agent, onPause }: { agent: Schemas['WorkspaceAgent']; onPause(reason: string): Promise<void> }) {
  const [open, setOpen] = useState(false);
  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        Pause {agent.name}
      </button>
    );
  return (
    <form
      class="confirm"
      onSubmit={async (e) => {
        e.preventDefault();
        const reason = String(new FormData(e.currentTarget).get('reason'));
        await onPause(reason);
        setOpen(false);
      }}
    >
      <label>
        Reason for pausing {agent.name} <input name="reason" required maxLength={200} />
      </label>
      <button type="submit" class="danger">
        Pause now
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
    </form>
  );
}
