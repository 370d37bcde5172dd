/**
 * @module Audit (owners and admins): the workspace's audit log, newest first, with filters that apply as they change
 * (action, actor, dates; an actor's name in the list filters by that actor) and "Load more"; each event's time (the viewer's time zone, relative, UTC on hover), what was
 * done, by whom, to what, from which address and with which request id. Every name and label is rendered as text.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ok, type operations, type Schemas } from '../api.ts';
import { ErrorNote, Field, Time, utcDayBounds } from '../ui.tsx';
import { AUDIT_ACTIONS } from '../vocabulary.ts';

const PAGE = 50;
type AuditEvent = Schemas['AuditEvent'];
type AuditQuery = NonNullable<operations['listAuditEvents']['parameters']['query']>;

interface Filters {
  action: string;
  actor: string;
  from: string;
  to: string;
}

const NO_FILTERS: Filters = { action: '', actor: '', from: '', to: '' };

interface Loaded {
  events: AuditEvent[];
  total: number;
  /** The first page's moment: later pages stop there, so events written meanwhile do not shift them. */
  until: string | undefined;
}

export function AuditScreen() {
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [loaded, setLoaded] = useState<Loaded | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);

  useEffect(() => {
    let live = true;
    setBusy(true);
    ok(api.GET('/audit-events', { params: { query: queryOf(filters, 0, undefined) } })).then(
      (page) => {
        if (!live) return;
        const newest = page.data[0]?.createdAt;
        setLoaded({ events: page.data, total: page.total, until: newest ? new Date(Date.parse(newest) + 1).toISOString() : undefined });
        setError(undefined);
        setBusy(false);
      },
      (err: unknown) => {
        if (!live) return;
        setError(err);
        setBusy(false);
      },
    );
    return () => {
      live = false;
    };
  }, [filters]);

  async function loadMore() {
    if (!loaded) return;
    setBusy(true);
    try {
      const page = await ok(api.GET('/audit-events', { params: { query: queryOf(filters, loaded.events.length, loaded.until) } }));
      const seen = new Set(loaded.events.map((event) => event.id));
      setLoaded({ ...loaded, events: [...loaded.events, ...page.data.filter((event) => !seen.has(event.id))], total: page.total });
      setError(undefined);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  /** Every change of a filter applies at once (no button to press); the actor when the field is left or Enter pressed. */
  function apply(event: Event) {
    event.preventDefault();
    const form = new FormData((event.currentTarget as HTMLElement).closest('form')!);
    setFilters({
      action: String(form.get('action') ?? ''),
      actor: String(form.get('actor') ?? '').trim(),
      from: String(form.get('from') ?? ''),
      to: String(form.get('to') ?? ''),
    });
  }

  /** An actor's name in the list filters by that actor (and fills the filter's field). */
  function onlyActor(label: string) {
    const field = form.current?.elements.namedItem('actor');
    if (field instanceof HTMLInputElement) field.value = label;
    setFilters({ ...filters, actor: label });
  }

  const events = loaded?.events ?? [];
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit</h1>
      <p class="muted">
        Every change a person or a credential made in this workspace: keys, webhooks, approvals, agents, the kill switch, members, resets and sign-ins. Never a
        secret.
      </p>
      <form class="filters" ref={form} onSubmit={apply} onChange={apply} aria-label="Filter audit events">
        <Field label="Action">
          <select name="action">
            <option value="">any</option>
            {AUDIT_ACTIONS.map((action) => (
              <option key={action}>{action}</option>
            ))}
          </select>
        </Field>
        <Field label="Actor (email or key prefix)">
          <input type="search" name="actor" autoComplete="off" />
        </Field>
        <Field label="From (UTC date)">
          <input type="date" name="from" />
        </Field>
        <Field label="To (UTC date)">
          <input type="date" name="to" />
        </Field>
      </form>
      <ErrorNote error={error} />
      <div class="table-wrap">
        <table>
          <caption class="sr-only">Audit events, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">Actor</th>
              <th scope="col">Target</th>
              <th scope="col">Details</th>
              <th scope="col">From</th>
            </tr>
          </thead>
          <tbody>
            {events.map((event) => (
              <tr key={event.id}>
                <td>
                  <Time iso={event.createdAt} />
                </td>
                <td>
                  <code class="action">{event.action}</code>
                </td>
                <td>
                  <button type="button" class="plain actor" title="Show only this actor's events" onClick={() => onlyActor(event.actor.label)}>
                    {breakableLabel(event.actor.label)}
                  </button>{' '}
                  <span class="muted">({actorKind(event.actor.type)})</span>
                </td>
                <td>
                  <span class="muted">{event.target.type.replace('_', ' ')}</span> {event.target.label ?? event.target.id}
                </td>
                <td>{detailsText(event.details)}</td>
                <td>
                  {addressText(event.address)}
                  {event.requestId ? (
                    <small class="muted request-id">
                      request id <code>{event.requestId}</code>
                    </small>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {loaded && events.length === 0 ? (
        filters === NO_FILTERS ? (
          <div class="card empty">
            <h2>No audit events yet</h2>
            <p>Creating a key, changing a webhook or a member, or signing in is recorded here, with who did it and from where.</p>
          </div>
        ) : (
          <p>No events match.</p>
        )
      ) : null}
      <nav class="pager" aria-label="More audit events">
        <span role="status">{loaded ? `${events.length} of ${loaded.total}` : busy ? 'Loading…' : ''}</span>
        <button type="button" disabled={busy || !loaded || events.length >= loaded.total} onClick={loadMore}>
          Load more
        </button>
      </nav>
    </section>
  );
}

/** The server's responses never show an address of a private network (it could be one of the deployment's own hosts). */
function addressText(address: string | null): string {
  if (address === null) return '—';
  return address === '[redacted]' ? 'private network' : address;
}

/** An email wraps before its `@`, not letter by letter (the column is narrow beside the others). */
function breakableLabel(label: string) {
  const at = label.indexOf('@');
  return at > 0 ? (
    <>
      {label.slice(0, at)}
      <wbr />
      {label.slice(at)}
    </>
  ) : (
    label
  );
}

function actorKind(type: Schemas['AuditActor']['type']): string {
  return { user: 'person', api_key: 'API key', operator: 'operator' }[type];
}

/** The details as plain words: `role: admin · reason: Quarter close`. */
function detailsText(details: Record<string, unknown>): string {
  const parts = Object.entries(details).map(([key, value]) => `${key}: ${valueText(value)}`);
  return parts.length === 0 ? '—' : parts.join(' · ');
}

/** A value of the details in words: a list as its items, so that it wraps. */
function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(valueText).join(', ');
  return JSON.stringify(value);
}

function queryOf(filters: Filters, offset: number, until: string | undefined): AuditQuery {
  const query: AuditQuery = { limit: PAGE, offset };
  if (filters.action) query.action = filters.action as Schemas['AuditAction'];
  if (filters.actor) query.actor = filters.actor;
  const { start, end } = utcDayBounds(filters.from, filters.to);
  if (start) query.since = start;
  // The whole "to" day, or up to the first page's moment when that is earlier.
  const bound = [end, until].filter((value): value is string => value !== undefined).sort()[0];
  if (bound) query.until = bound;
  return query;
}
