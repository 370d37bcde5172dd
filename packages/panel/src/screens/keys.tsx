/**
 * @module Settings, API keys: the list (visible prefix only), create with scopes and expiry behind "New key" (the
 * scopes and the agents a key may invoke as checkboxes, the agents searchable; the secret shown once), rotate and
 * revoke, each confirmed. A workspace without keys is shown how to make and use its first one.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, csrfHeader, ok, type Schemas } from '../api.ts';
import { Badge, BehindButton, CancelButton, ConfirmButton, ErrorNote, Field, SecretOnce, useLoad, when } from '../ui.tsx';
import { AGENT_SLUGS } from '../vocabulary.ts';

/** A new key's lifetime unless the admin changes it: the contract's default for `expiresInDays`. */
const DEFAULT_KEY_DAYS = 365;

const BASE_SCOPES: { scope: Schemas['Scope']; words: string }[] = [
  { scope: 'orchestrator:invoke', words: 'invoke any agent' },
  { scope: 'tenant:read', words: 'read runs and workspace metadata' },
  { scope: 'departments:read', words: 'read the agent catalog' },
  { scope: 'usage:read', words: 'read the period’s consumption' },
  { scope: 'webhooks:ingest', words: 'ingest inbound events' },
  { scope: 'mcp:tenant', words: 'open the MCP bridge' },
];

export function KeysScreen() {
  const keys = useLoad(() => ok(api.GET('/api-keys', {})), []);
  const [created, setCreated] = useState<Schemas['ApiKeyCreated'] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

  async function act(run: () => Promise<Schemas['ApiKeyCreated'] | unknown>) {
    setError(undefined);
    try {
      const result = await run();
      if (result && typeof result === 'object' && 'secret' in result) setCreated(result as Schemas['ApiKeyCreated']);
      keys.reload();
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      <ErrorNote error={error ?? keys.error} />
      {created ? (
        <SecretOnce label={`Secret of ${created.name}`} secret={created.secret}>
          <button type="button" onClick={() => setCreated(undefined)}>
            I have copied it
          </button>
        </SecretOnce>
      ) : null}
      <BehindButton label="New key" primary={keys.data?.data.length === 0}>
        {(close) => <CreateKey close={close} onCreate={(body) => act(() => ok(api.POST('/api-keys', { params: { header: csrfHeader() }, body })))} />}
      </BehindButton>
      <h2>Keys</h2>
      <div class="table-wrap">
        <table>
          <caption class="sr-only">API keys of the workspace</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {keys.data?.data.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td>
                <td>
                  <code>{key.prefix}</code>
                </td>
                <td>{key.scopes.join(', ')}</td>
                <td>{when(key.createdAt)}</td>
                <td>{when(key.expiresAt)}</td>
                <td>{when(key.lastUsedAt)}</td>
                <td>
                  <Badge tone={key.status === 'active' ? 'green' : 'grey'}>{key.status}</Badge>
                </td>
                <td class="actions">
                  {key.status === 'active' ? (
                    <ActionMenu label={`Actions for ${key.name}`}>
                      <ConfirmButton
                        label={`Rotate ${key.name}`}
                        confirmLabel="Rotate now"
                        question={`Rotate ${key.name}? The old secret stops working at once.`}
                        onConfirm={() => act(() => ok(api.POST('/api-keys/{id}/rotate', { params: { path: { id: key.id }, header: csrfHeader() } })))}
                      />
                      <ConfirmButton
                        danger
                        label={`Revoke ${key.name}`}
                        confirmLabel="Revoke now"
                        question={`Revoke ${key.name}? Calls with it fail at once.`}
                        onConfirm={() => act(() => ok(api.DELETE('/api-keys/{id}', { params: { path: { id: key.id }, header: csrfHeader() } })))}
                      />
                    </ActionMenu>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {keys.data && keys.data.data.length === 0 ? <FirstKey /> : null}
    </section>
  );
}

/** One menu of actions per row: a button that shows them or hides them again (a disclosure). */
function ActionMenu({ label, children }: { label: string; children: ComponentChildren }) {
  const [open, setOpen] = useState(false);
  return (
    <div class="menu">
      <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
        {label}
      </button>
      {open ? <div class="menu-items">{children}</div> : null}
    </div>
  );
}

/** No key yet: what a key is for, and the call to make with it once created. */
function FirstKey() {
  return (
    <div class="card empty">
      <h3>Create your first key</h3>
      <p>
        A key lets a program call this workspace's agents. Press <strong>New key</strong> above, give it the scope <code>orchestrator:invoke</code>, copy its
        secret (shown once), then:
      </p>
      <pre>
        <code>{`export SERVICE_API_KEY=service_sk_live_…
curl ${location.origin}/v1/orchestrator/messages \\
  -H "Authorization: Bearer $SERVICE_API_KEY" -H 'Content-Type: application/json' \\
  -d '{"alias":"Sonata","messages":[{"role":"user","content":"Hello"}]}'`}</code>
      </pre>
      <p class="muted">
        Or with the TypeScript SDK:{' '}
        <code>
          new Client({'{'} apiKey: process.env.SERVICE_API_KEY, baseURL: '{location.origin}' {'}'})
        </code>
        .
      </p>
    </div>
  );
}

function CreateKey({ close, onCreate }: { close(): void; onCreate(body: Schemas['CreateApiKeyRequest']): Promise<void> }) {
  const [search, setSearch] = useState('');
  const [busy, setBusy] = useState(false);
  async function submit(event: Event) {
    event.preventDefault();
    const formEl = event.currentTarget as HTMLFormElement;
    const form = new FormData(formEl);
    const scopes = [...form.getAll('scope'), ...form.getAll('agentScope')].map(String) as Schemas['Scope'][];
    setBusy(true);
    await onCreate({ name: String(form.get('name')), scopes, expiresInDays: Number(form.get('expiresInDays')) });
    setBusy(false);
    formEl.reset();
    close();
  }
  const agents = AGENT_SLUGS.filter((slug) => slug.includes(search.trim().toLowerCase()));
  return (
    <form class="card" onSubmit={submit} aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      <Field label="Name">
        <input name="name" required maxLength={100} />
      </Field>
      <fieldset>
        <legend>Scopes</legend>
        {BASE_SCOPES.map((s) => (
          <label class="check" key={s.scope}>
            <input type="checkbox" name="scope" value={s.scope} /> <code>{s.scope}</code> <span class="muted">{s.words}</span>
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>Invoke only these agents (per-agent scopes)</legend>
        <Field label="Search agents">
          <input type="search" value={search} onInput={(e) => setSearch((e.currentTarget as HTMLInputElement).value)} />
        </Field>
        {/* Hidden, not removed: a checked agent stays checked while the search changes. */}
        {AGENT_SLUGS.map((slug) => (
          <label class="check" key={slug} style={agents.includes(slug) ? undefined : { display: 'none' }}>
            <input type="checkbox" name="agentScope" value={`orchestrator:invoke:agent:${slug}`} /> {slug}
          </label>
        ))}
        {agents.length === 0 ? <p class="muted">No agent matches.</p> : null}
      </fieldset>
      <Field label="Expires in (days)" hint="From 1 to 730 days; 365 unless you change it.">
        <input name="expiresInDays" type="number" min={1} max={730} defaultValue={DEFAULT_KEY_DAYS} required />
      </Field>
      <div class="row">
        <button type="submit" class="primary" disabled={busy}>
          Create key
        </button>
        <CancelButton onClick={close} />
      </div>
    </form>
  );
}
