/**
 * @module Settings, Integrations: the workspace's connected MCP servers with their status and tools (read-only ones
 * marked), connecting one (name, HTTPS URL, optional auth header whose value is never shown again; the server is
 * checked before it is recorded), checking one again, pausing, resuming and removing.
 */
import { useState } from 'preact/hooks';
import { api, csrfHeader, ok, type Schemas } from '../api.ts';
import { Badge, BehindButton, CancelButton, ConfirmButton, ErrorNote, Field, useLoad, when } from '../ui.tsx';

type Integration = Schemas['Integration'];

const TONES: Record<Integration['status'], string> = { active: 'green', paused: 'grey', failing: 'red', not_connected: 'grey' };

export function IntegrationsScreen() {
  const list = useLoad(() => ok(api.GET('/integrations', {})), []);
  const [note, setNote] = useState('');
  const [error, setError] = useState<unknown>(undefined);

  /** Runs a change and reads the list again; false (the error shown) when it was refused. */
  async function act(run: () => Promise<unknown>, done?: string): Promise<boolean> {
    setError(undefined);
    setNote('');
    try {
      await run();
      if (done) setNote(done);
      list.reload();
      return true;
    } catch (err) {
      setError(err);
      return false;
    }
  }

  async function connect(event: Event, close: () => void) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const name = String(form.get('integration'));
    const headerName = String(form.get('headerName') ?? '').trim();
    const headerValue = String(form.get('headerValue') ?? '');
    const body = {
      integration: name,
      url: String(form.get('url')),
      ...(headerName !== '' ? { authHeader: { name: headerName, value: headerValue } } : {}),
    };
    if (await act(() => ok(api.POST('/integrations', { params: { header: csrfHeader() }, body })), `${name} connected.`)) close();
  }

  const path = (id: string) => ({ params: { path: { id }, header: csrfHeader() } });
  return (
    <section aria-labelledby="integrations-title">
      <h1 id="integrations-title">Integrations</h1>
      <ErrorNote error={error ?? list.error} />
      <p aria-live="polite" class="note">
        {note}
      </p>
      {list.data?.data.length === 0 ? (
        <div class="card empty">
          <h3>Give your agents tools</h3>
          <p>
            An integration is an MCP server of yours (Streamable HTTP). Its tools are offered to the workspace's agents as <code>name.tool</code>; a tool the
            server does not mark read-only waits for an approval before an agent uses it.
          </p>
        </div>
      ) : null}
      <BehindButton label="Connect an MCP server" primary={list.data?.data.length === 0}>
        {(close) => (
          <form class="card" onSubmit={(event) => connect(event, close)} aria-labelledby="connect-integration-title">
            <h3 id="connect-integration-title">Connect an MCP server</h3>
            <Field label="Name (its tool area)" hint="Lowercase letters, digits and -, for example crm or mail.">
              {/* biome-ignore lint/a11y/noAutofocus: the form opens because its button was pressed; its first field takes the focus. */}
              <input name="integration" required maxLength={32} pattern="[a-z0-9][a-z0-9\-]*" placeholder="crm" autoFocus />
            </Field>
            <Field label="HTTPS URL">
              <input name="url" type="url" pattern="https://.*" required placeholder="https://mcp.example.com/mcp" />
            </Field>
            <Field label="Auth header name (optional)">
              <input name="headerName" maxLength={64} pattern="[A-Za-z0-9\-]+" placeholder="Authorization" />
            </Field>
            <Field label="Auth header value" hint="Sealed at rest and never shown again.">
              <input name="headerValue" type="password" autoComplete="off" maxLength={4096} />
            </Field>
            <div class="row">
              <button type="submit" class="primary">
                Check and connect
              </button>
              <CancelButton onClick={close} />
            </div>
          </form>
        )}
      </BehindButton>
      <ul class="cards">
        {list.data?.data.map((i) => (
          <li key={i.id} class={`card ${i.status === 'failing' ? 'flagged' : ''}`} aria-label={`Integration ${i.integration}`}>
            <div class="row spread">
              <strong>{i.integration}</strong>
              <Badge tone={TONES[i.status]}>{i.status.replace(/_/g, ' ')}</Badge>
            </div>
            <p class="muted">
              {i.url ? <code class="url">{i.url}</code> : 'No server'}
              {i.authHeaderName ? <> · sends {i.authHeaderName}</> : null} · connected {when(i.connectedAt)}
              {i.lastCheck ? (
                <>
                  {' '}
                  · last check {when(i.lastCheck.at)}: {i.lastCheck.ok ? 'passed' : i.lastCheck.error}
                </>
              ) : null}
            </p>
            {i.tools.length > 0 ? (
              <ul aria-label={`Tools of ${i.integration}`}>
                {i.tools.map((tool) => (
                  <li key={tool.name}>
                    <code>{tool.name}</code> {tool.readOnly ? <Badge tone="green">read-only</Badge> : <Badge tone="grey">acts</Badge>}{' '}
                    <span class="muted">{tool.description}</span>
                  </li>
                ))}
              </ul>
            ) : null}
            {i.url ? (
              <div class="actions">
                <button type="button" onClick={() => act(() => ok(api.POST('/integrations/{id}/test', path(i.id))), `${i.integration} checked.`)}>
                  Check {i.integration}
                </button>
                {i.status === 'paused' ? (
                  <button type="button" onClick={() => act(() => ok(api.POST('/integrations/{id}/resume', path(i.id))), `${i.integration} resumed.`)}>
                    Resume {i.integration}
                  </button>
                ) : (
                  <ConfirmButton
                    label={`Pause ${i.integration}`}
                    confirmLabel="Pause now"
                    question={`Stop offering ${i.integration}'s tools to agents?`}
                    onConfirm={() => act(() => ok(api.POST('/integrations/{id}/pause', path(i.id))), `${i.integration} paused.`)}
                  />
                )}
                <ConfirmButton
                  danger
                  label={`Remove ${i.integration}`}
                  confirmLabel="Remove now"
                  question={`Remove ${i.integration} and its auth header?`}
                  onConfirm={() => act(() => ok(api.DELETE('/integrations/{id}', path(i.id))), `${i.integration} removed.`)}
                />
              </div>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}
