/**
 * @module The delivery log of one outbound destination: recent deliveries, each attempt's time, HTTP status or
 * error (timeout, TLS, DNS, refused by the SSRF guard…) and the next retry; each attempt opens to the exact body
 * sent, the headers by the names the contract gives them (signatures shortened by the server) and the start of the
 * receiver's answer. "Send test event" queues a test event of any type to this destination; it appears in the log.
 * Everything is rendered as text.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, csrfHeader, ok, type Schemas } from '../api.ts';
import { Badge, ErrorNote, useLoad, when } from '../ui.tsx';
import { TEST_EVENT_TYPES } from '../vocabulary.ts';

const ERROR_WORDS: Record<Schemas['DeliveryErrorKind'], string> = {
  http_status: 'the receiver answered with an error status',
  timeout: 'no answer in time',
  dns: 'the host name did not resolve',
  tls: 'TLS failed (certificate or handshake)',
  connection_refused: 'connection refused',
  connection_reset: 'connection reset',
  network: 'network failure',
  ssrf_refused: 'refused by the SSRF guard (private or internal address)',
  internal: 'a failure of the service (retried)',
};

export function DeliveryLog({ destinationId, url }: { destinationId: string; url: string }) {
  const log = useLoad(
    () => ok(api.GET('/webhook-destinations/{id}/deliveries', { params: { path: { id: destinationId }, query: { limit: 20 } } })),
    [destinationId],
  );
  // While a delivery is still pending, the log reads itself again every few seconds.
  const pending = log.data?.data.some((d) => d.status === 'pending') ?? false;
  useEffect(() => {
    if (!pending || log.loading) return;
    const timer = setTimeout(log.reload, 3000);
    return () => clearTimeout(timer);
  }, [pending, log.loading, log.reload]);
  return (
    <section aria-label={`Delivery log of ${url}`} class="log">
      <div class="row spread">
        <h4>Recent deliveries</h4>
        <button type="button" onClick={log.reload}>
          Refresh log
        </button>
      </div>
      <SendTestEvent destinationId={destinationId} url={url} onSent={log.reload} />
      <ErrorNote error={log.error} />
      {log.data && log.data.data.length === 0 ? <p>No deliveries yet.</p> : null}
      {log.data?.data.map((d) => (
        <article key={d.id} class="delivery" aria-label={`Delivery ${d.eventType} ${d.status}`}>
          <p>
            <code>{d.eventType}</code> {d.test ? <Badge tone="grey">test</Badge> : null}{' '}
            <Badge tone={d.status === 'delivered' ? 'green' : d.status === 'failed' ? 'red' : 'amber'}>{d.status}</Badge>{' '}
            <span class="muted">
              queued {when(d.createdAt)}
              {d.deliveredAt ? ` · delivered ${when(d.deliveredAt)}` : ''}
              {d.nextRetryAt ? ` · next retry ${when(d.nextRetryAt)}` : ''}
            </span>
          </p>
          {d.attempts.length > 0 ? (
            <div class="table-wrap">
              <table>
                <caption class="sr-only">Attempts of delivery {d.id}</caption>
                <thead>
                  <tr>
                    <th scope="col">Attempt</th>
                    <th scope="col">Time</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Next retry</th>
                  </tr>
                </thead>
                <tbody>
                  {d.attempts.map((a) => (
                    <tr key={a.attempt}>
                      <td>{a.attempt}</td>
                      <td>{when(a.at)}</td>
                      <td>{outcome(a)}</td>
                      <td>{a.durationMs === null ? '—' : `${a.durationMs} ms`}</td>
                      <td>{when(a.nextRetryAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
          {d.attempts.map((a) => (
            <AttemptDetail key={a.attempt} delivery={d} attempt={a} />
          ))}
          {d.attempts.length > 0 ? null : <p class="muted">Not attempted yet.</p>}
        </article>
      ))}
    </section>
  );
}

/** One attempt opened: the body sent, the headers sent, the receiver's status and the start of its answer. */
function AttemptDetail({ delivery, attempt: a }: { delivery: Schemas['Delivery']; attempt: Schemas['DeliveryAttempt'] }) {
  return (
    <details class="attempt">
      <summary>
        Request and response of attempt {a.attempt} ({outcome(a)})
      </summary>
      <h5>Request</h5>
      <p class="muted">
        <code>POST</code> · {a.requestHeaders === null ? 'not sent (the attempt ended before connecting)' : 'the exact body signed and sent'}
      </p>
      {a.requestHeaders === null ? null : (
        <>
          <div class="table-wrap">
            <table>
              <caption class="sr-only">Headers sent by attempt {a.attempt}</caption>
              <thead>
                <tr>
                  <th scope="col">Header</th>
                  <th scope="col">Value</th>
                </tr>
              </thead>
              <tbody>
                {a.requestHeaders.map((h) => (
                  <tr key={h.name}>
                    <th scope="row">
                      <code>{h.name}</code>
                    </th>
                    <td>
                      <code>{h.value}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <figure>
            <figcaption class="sr-only">Request body of attempt {a.attempt}</figcaption>
            <pre>{delivery.requestBody}</pre>
          </figure>
        </>
      )}
      <h5>Response</h5>
      {a.httpStatus === null ? (
        <p class="muted">No answer{a.errorKind ? `: ${ERROR_WORDS[a.errorKind]}` : ''}.</p>
      ) : (
        <>
          <p>
            Status <code>{a.httpStatus}</code>
            {a.responseBodyTruncated ? <span class="muted"> · body cut at 2 KiB</span> : null}
          </p>
          {a.responseBody === null ? null : a.responseBody === '' ? (
            <p class="muted">Empty body.</p>
          ) : (
            <figure>
              <figcaption class="sr-only">Response body of attempt {a.attempt}</figcaption>
              <pre>{a.responseBody}</pre>
            </figure>
          )}
        </>
      )}
    </details>
  );
}

/** Queues a test event of the chosen type (attempted once, never retried), then reads the log again. */
function SendTestEvent({ destinationId, url, onSent }: { destinationId: string; url: string; onSent: () => void }) {
  const [type, setType] = useState<Schemas['SendTestEventRequest']['type']>('ping');
  const [note, setNote] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const selectId = `test-type-${destinationId}`;
  async function send(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setNote('');
    try {
      await ok(api.POST('/webhook-destinations/{id}/test-events', { params: { path: { id: destinationId }, header: csrfHeader() }, body: { type } }));
      setNote(`Test event ${type} queued for ${url}; it is attempted once and shows in the log below.`);
      onSent();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <form class="row test-event" onSubmit={send} aria-label={`Send a test event to ${url}`}>
      <label for={selectId}>Event type</label>
      <select id={selectId} value={type} onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value as typeof type)}>
        {TEST_EVENT_TYPES.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
      <button type="submit" disabled={busy}>
        Send test event
      </button>
      <p aria-live="polite" class="note">
        {note}
      </p>
      <ErrorNote error={error} />
    </form>
  );
}

function outcome(a: Schemas['DeliveryAttempt']): string {
  const status = a.httpStatus === null ? '' : `HTTP ${a.httpStatus}`;
  if (a.result === 'delivered') return `delivered (${status || 'ok'})`;
  const why = a.errorKind && a.errorKind !== 'http_status' ? ERROR_WORDS[a.errorKind] : '';
  return [status, why, a.result === 'give_up' ? 'gave up' : 'will retry'].filter(Boolean).join(' · ');
}

export function failureText(f: Schemas['DeliveryFailure']): string {
  return f.httpStatus !== null ? `HTTP ${f.httpStatus} ${when(f.at)}` : `${ERROR_WORDS[f.errorKind]} ${when(f.at)}`;
}
