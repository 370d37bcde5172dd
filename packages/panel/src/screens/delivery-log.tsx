/**
 * @module The delivery log of one outbound destination: recent deliveries, each attempt's time, HTTP status or
 * error (timeout, TLS, DNS, refused by the SSRF guard…) and the next retry.
 */
import { useEffect } from 'preact/hooks';
import { api, ok, type Schemas } from '../api.ts';
import { Badge, ErrorNote, useLoad, when } from '../ui.tsx';

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
      <ErrorNote error={log.error} />
      {log.data && log.data.data.length === 0 ? <p>No deliveries yet.</p> : null}
      {log.data?.data.map((d) => (
        <article key={d.id} class="delivery" aria-label={`Delivery ${d.eventType} ${d.status}`}>
          <p>
            <code>{d.eventType}</code> <Badge tone={d.status === 'delivered' ? 'green' : d.status === 'failed' ? 'red' : 'amber'}>{d.status}</Badge>{' '}
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
          ) : (
            <p class="muted">Not attempted yet.</p>
          )}
        </article>
      ))}
    </section>
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
