/**
 * @module Settings, Webhooks, on two tabs: outbound destinations (paused ones flagged, create, rotate the secret,
 * pause, resume, ping, replay failed deliveries, and each destination's delivery log; with none yet, what they are
 * for and how a receiver verifies them) and inbound webhooks (create with the secret once and the signing
 * instructions, pause, resume, revoke).
 */
import { useRef, useState } from 'preact/hooks';
import { api, csrfHeader, ok, type Schemas } from '../api.ts';
import { Badge, BehindButton, CancelButton, ConfirmButton, ErrorNote, Field, SecretOnce, useLoad, when } from '../ui.tsx';
import { AGENT_SLUGS, ALIASES, OUTBOUND_EVENT_TYPES } from '../vocabulary.ts';
import { DeliveryLog, failureText } from './delivery-log.tsx';

const TABS = [
  { id: 'outbound', label: 'Outbound' },
  { id: 'inbound', label: 'Inbound' },
] as const;

/** The two kinds on two tabs (the WAI-ARIA tabs pattern: arrow keys move between them). */
export function WebhooksScreen() {
  const [tab, setTab] = useState<(typeof TABS)[number]['id']>('outbound');
  const refs = useRef<(HTMLButtonElement | null)[]>([]);
  const move = (event: KeyboardEvent, index: number) => {
    const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
    if (step === 0) return;
    const next = (index + step + TABS.length) % TABS.length;
    setTab(TABS[next]!.id);
    refs.current[next]?.focus();
  };
  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <div role="tablist" aria-label="Kinds of webhooks" class="tabs">
        {TABS.map((t, i) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            id={`tab-${t.id}`}
            aria-selected={tab === t.id}
            aria-controls={`panel-${t.id}`}
            tabIndex={tab === t.id ? 0 : -1}
            ref={(el) => {
              refs.current[i] = el;
            }}
            onClick={() => setTab(t.id)}
            onKeyDown={(e) => move(e, i)}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {tab === 'outbound' ? <Outbound /> : <Inbound />}
      </div>
    </section>
  );
}

/** No destination yet: what outbound webhooks are for, and how a receiver checks them. */
function FirstDestination() {
  return (
    <div class="card empty">
      <h3>Get told when something happens</h3>
      <p>
        A destination is an HTTPS endpoint of yours. When a run completes or fails, an agent asks for an approval or writes a draft, the service POSTs a signed
        JSON event to it, and retries for about 7 hours if it does not answer 2xx. Press <strong>New destination</strong> and choose the events it wants; its
        signing secret is shown once.
      </p>
      <p>
        Every delivery is signed twice: <code>X-SERVICE-Signature</code> (HMAC-SHA256 of the raw body with the secret, <code>X-SERVICE-Timestamp</code> beside
        it) and the Standard Webhooks headers <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>, which the{' '}
        <code>standardwebhooks</code> library checks for you:
      </p>
      <pre>
        <code>{`import { Webhook } from 'standardwebhooks';
new Webhook(secret).verify(rawBody, headers); // throws when the signature or the timestamp is wrong`}</code>
      </pre>
    </div>
  );
}

function Outbound() {
  const list = useLoad(() => ok(api.GET('/webhook-destinations', {})), []);
  const [secret, setSecret] = useState<{ url: string; secret: string } | undefined>(undefined);
  const [note, setNote] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [logOf, setLogOf] = useState<string | undefined>(undefined);

  /** Runs a change and reads the list again; false (the error shown) when it was refused. */
  async function act(run: () => Promise<unknown>, done?: string): Promise<boolean> {
    setError(undefined);
    setNote('');
    try {
      const result = await run();
      if (result && typeof result === 'object' && 'secret' in result) {
        const created = result as Schemas['WebhookDestinationCreated'];
        setSecret({ url: created.url, secret: created.secret });
      }
      if (done) setNote(done);
      list.reload();
      return true;
    } catch (err) {
      setError(err);
      return false;
    }
  }

  async function create(event: Event, close: () => void) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const events = form.getAll('event').map(String) as Schemas['WebhookDestination']['events'];
    if (await act(() => ok(api.POST('/webhook-destinations', { params: { header: csrfHeader() }, body: { url: String(form.get('url')), events } })))) close();
  }

  const header = (id: string) => ({ params: { path: { id }, header: csrfHeader() } });
  return (
    <section aria-labelledby="outbound-title">
      <h2 id="outbound-title">Outbound destinations</h2>
      <ErrorNote error={error ?? list.error} />
      <p aria-live="polite" class="note">
        {note}
      </p>
      {secret ? (
        <SecretOnce label={`Signing secret of ${secret.url}`} secret={secret.secret}>
          <p class="muted">
            Each delivery carries <code>X-SERVICE-Signature</code>: the lowercase hex HMAC-SHA256 of the raw body with this secret.
          </p>
          <button type="button" onClick={() => setSecret(undefined)}>
            I have copied it
          </button>
        </SecretOnce>
      ) : null}
      <BehindButton label="New destination" primary={list.data?.data.length === 0}>
        {(close) => (
          <form class="card" onSubmit={(event) => create(event, close)} aria-labelledby="create-destination-title">
            <h3 id="create-destination-title">Add a destination</h3>
            <Field label="HTTPS URL">
              {/* biome-ignore lint/a11y/noAutofocus: the form opens because its button was pressed; its first field takes the focus. */}
              <input name="url" type="url" pattern="https://.*" required placeholder="https://hooks.example.com/service" autoFocus />
            </Field>
            <fieldset>
              <legend>Events</legend>
              {OUTBOUND_EVENT_TYPES.map((e) => (
                <label class="check" key={e}>
                  <input type="checkbox" name="event" value={e} defaultChecked={e.startsWith('run.')} /> <code>{e}</code>
                </label>
              ))}
            </fieldset>
            <div class="row">
              <button type="submit" class="primary">
                Add destination
              </button>
              <CancelButton onClick={close} />
            </div>
          </form>
        )}
      </BehindButton>
      <ul class="cards">
        {list.data?.data.map((d) => (
          <li key={d.id} class={`card ${d.status === 'paused' ? 'flagged' : ''}`} aria-label={`Destination ${d.url}`}>
            <div class="row spread">
              <code class="url">{d.url}</code>
              {d.status === 'paused' ? <Badge tone="red">paused</Badge> : <Badge tone="green">active</Badge>}
            </div>
            {d.status === 'paused' ? (
              <p class="flag">
                Paused {when(d.pausedAt)}
                {pauseReason(d) ? <>: {pauseReason(d)}</> : null}. {pauseEffect(d)}
              </p>
            ) : null}
            <p class="muted">
              Events: {d.events.join(', ')} · consecutive failures: {d.consecutiveFailures}
              {lastFailure(d) ? <> · last failure: {lastFailure(d)}</> : null} · secret rotated {when(d.secretRotatedAt)}
              {d.previousSecretExpiresAt ? <> · previous secret still signs until {when(d.previousSecretExpiresAt)}</> : null}
            </p>
            <div class="actions">
              <button type="button" onClick={() => act(() => ok(api.POST('/webhook-destinations/{id}/ping', header(d.id))), `Ping queued for ${d.url}.`)}>
                Ping {d.url}
              </button>
              <button
                type="button"
                onClick={() => act(() => ok(api.POST('/webhook-destinations/{id}/replay', header(d.id))), `Failed deliveries queued again for ${d.url}.`)}
              >
                Replay failed deliveries
              </button>
              {d.status === 'paused' ? (
                <button type="button" onClick={() => act(() => ok(api.POST('/webhook-destinations/{id}/resume', header(d.id))), `${d.url} resumed.`)}>
                  Resume
                </button>
              ) : (
                <ConfirmButton
                  label="Pause"
                  confirmLabel="Pause now"
                  question={`Pause deliveries to ${d.url}?`}
                  onConfirm={() => act(() => ok(api.POST('/webhook-destinations/{id}/pause', header(d.id))), `${d.url} paused.`)}
                />
              )}
              <ConfirmButton
                label="Rotate secret"
                confirmLabel="Rotate now"
                question={`Rotate the signing secret of ${d.url}?`}
                onConfirm={() => act(() => ok(api.POST('/webhook-destinations/{id}/rotate-secret', header(d.id))))}
              />
              <button type="button" aria-expanded={logOf === d.id} onClick={() => setLogOf(logOf === d.id ? undefined : d.id)}>
                Delivery log
              </button>
            </div>
            {logOf === d.id ? <DeliveryLog destinationId={d.id} url={d.url} /> : null}
          </li>
        ))}
      </ul>
      {list.data && list.data.data.length === 0 ? <FirstDestination /> : null}
    </section>
  );
}

function pauseReason(d: Schemas['WebhookDestination']): string | undefined {
  if (d.pausedReason === 'failures') return 'by the service after repeated failed deliveries';
  if (d.pausedReason === 'admin') return 'by an admin';
  if (d.pausedReason === 'gone') return 'by the service: the receiver answered 410 Gone (it no longer wants deliveries)';
  return undefined;
}

/** What a pause holds back: a failures pause keeps new events for the receiver; an admin's or a 410's does not queue them. */
function pauseEffect(d: Schemas['WebhookDestination']): string {
  return d.pausedReason === 'failures'
    ? 'Deliveries, new events included, wait until it is resumed.'
    : 'Deliveries already queued wait until it is resumed; events that happen meanwhile are not sent to it.';
}

function lastFailure(d: Schemas['WebhookDestination']): string | undefined {
  return d.lastFailure ? failureText(d.lastFailure) : undefined;
}

function Inbound() {
  const list = useLoad(() => ok(api.GET('/inbound-webhooks', {})), []);
  const [created, setCreated] = useState<Schemas['InboundWebhookCreated'] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

  /** Runs a change and reads the list again; false (the error shown) when it was refused. */
  async function act(run: () => Promise<unknown>): Promise<boolean> {
    setError(undefined);
    try {
      const result = await run();
      if (result && typeof result === 'object' && 'secret' in result) setCreated(result as Schemas['InboundWebhookCreated']);
      list.reload();
      return true;
    } catch (err) {
      setError(err);
      return false;
    }
  }

  async function create(event: Event, close: () => void) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const template = String(form.get('template') ?? '').trim();
    const created = await act(() =>
      ok(
        api.POST('/inbound-webhooks', {
          params: { header: csrfHeader() },
          body: {
            slug: String(form.get('slug')),
            agentSlug: String(form.get('agentSlug')),
            alias: String(form.get('alias')) as Schemas['ModelAlias'],
            signatureHeader: String(form.get('signatureHeader')),
            algorithm: String(form.get('algorithm')) as 'sha256' | 'sha512',
            timestampRequired: form.get('timestampRequired') === 'on',
            requestsPerMinute: Number(form.get('requestsPerMinute')),
            // No template: the agent is given the body as compact JSON.
            ...(template ? { template } : {}),
          },
        }),
      ),
    );
    if (created) close();
  }

  const slugParams = (slug: string) => ({ params: { path: { slug }, header: csrfHeader() } });
  return (
    <section aria-labelledby="inbound-title">
      <h2 id="inbound-title">Inbound webhooks</h2>
      <ErrorNote error={error ?? list.error} />
      {created ? (
        <SecretOnce label={`Secret of inbound webhook ${created.slug}`} secret={created.secret}>
          <Signing webhook={created} />
          <button type="button" onClick={() => setCreated(undefined)}>
            I have copied it
          </button>
        </SecretOnce>
      ) : null}
      <BehindButton label="New inbound webhook" primary={list.data?.data.length === 0}>
        {(close) => (
          <form class="card" onSubmit={(event) => create(event, close)} aria-labelledby="create-inbound-title">
            <h3 id="create-inbound-title">Add an inbound webhook</h3>
            <Field label="Slug" hint="Lowercase letters, digits and dashes; part of the URL.">
              {/* biome-ignore lint/a11y/noAutofocus: the form opens because its button was pressed; its first field takes the focus. */}
              <input name="slug" required pattern="[a-z0-9][a-z0-9\-]*" maxLength={64} autoFocus />
            </Field>
            <Field label="Agent">
              <select name="agentSlug">
                {AGENT_SLUGS.map((s) => (
                  <option key={s}>{s}</option>
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
            <Field label="Signature header" hint="The header the sender puts the signature in.">
              <input name="signatureHeader" required pattern="[A-Za-z0-9\-]+" maxLength={100} defaultValue="X-SERVICE-Signature" />
            </Field>
            <Field label="Signature algorithm">
              <select name="algorithm">
                <option value="sha256">HMAC-SHA256</option>
                <option value="sha512">HMAC-SHA512</option>
              </select>
            </Field>
            <label class="check">
              <input type="checkbox" name="timestampRequired" /> Require <code>X-SERVICE-Timestamp</code>{' '}
              <span class="muted">(refuse an event without a time within 5 minutes: a replayed one is refused)</span>
            </label>
            <Field label="Requests per minute per IP address" hint="From 1 to 10,000; past it the sender is answered 429.">
              <input name="requestsPerMinute" type="number" min={1} max={10000} defaultValue={60} required />
            </Field>
            <Field label="Template (optional)" hint="Liquid, rendering the JSON body into the agent's input; empty: the body as compact JSON.">
              <textarea name="template" rows={3} maxLength={20000} class="mono" placeholder="New lead: {{ contact.name }} ({{ contact.company }})" />
            </Field>
            <div class="row">
              <button type="submit" class="primary">
                Add inbound webhook
              </button>
              <CancelButton onClick={close} />
            </div>
          </form>
        )}
      </BehindButton>
      <div class="table-wrap">
        <table>
          <caption class="sr-only">Inbound webhooks</caption>
          <thead>
            <tr>
              <th scope="col">Slug</th>
              <th scope="col">Agent</th>
              <th scope="col">Alias</th>
              <th scope="col">Status</th>
              <th scope="col">Last event</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.data.map((w) => (
              <tr key={w.slug}>
                <td>
                  <code>{w.slug}</code>
                </td>
                <td>{w.agentSlug}</td>
                <td>{w.alias}</td>
                <td>
                  <Badge tone={w.status === 'active' ? 'green' : w.status === 'paused' ? 'amber' : 'grey'}>{w.status}</Badge>
                </td>
                <td>{when(w.lastEventAt)}</td>
                <td class="actions">
                  {w.status === 'active' ? (
                    <button type="button" onClick={() => act(() => ok(api.POST('/inbound-webhooks/{slug}/pause', slugParams(w.slug))))}>
                      Pause {w.slug}
                    </button>
                  ) : null}
                  {w.status === 'paused' ? (
                    <button type="button" onClick={() => act(() => ok(api.POST('/inbound-webhooks/{slug}/resume', slugParams(w.slug))))}>
                      Resume {w.slug}
                    </button>
                  ) : null}
                  {w.status !== 'revoked' ? (
                    <ConfirmButton
                      danger
                      label={`Revoke ${w.slug}`}
                      confirmLabel="Revoke now"
                      question={`Revoke ${w.slug}? Its events are refused from now on.`}
                      onConfirm={() => act(() => ok(api.DELETE('/inbound-webhooks/{slug}', slugParams(w.slug))))}
                    />
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function Signing({ webhook }: { webhook: Schemas['InboundWebhook'] }) {
  const url = `${window.location.origin}/v1/webhooks/inbound/${webhook.slug}`;
  return (
    <div>
      <h4>Signing instructions</h4>
      <ol>
        <li>
          Send a JSON <code>POST</code> to <code>{url}</code>.
        </li>
        <li>
          Sign the raw body: lowercase hex HMAC-{webhook.algorithm.toUpperCase()} with this secret, in the <code>{webhook.signatureHeader}</code> header.
        </li>
        <li>
          Send the time in <code>X-SERVICE-Timestamp</code> (unix seconds; within 5 minutes{webhook.timestampRequired ? '; required by this webhook' : ''}) and
          a unique id in <code>X-SERVICE-Event-Id</code> (a repeat is answered as a duplicate).
        </li>
      </ol>
    </div>
  );
}
