/**
 * @module The delivery log of one outbound destination: recent deliveries, each attempt's time, HTTP status or
 * error, and the next retry.
 */
export function DeliveryLog({ destinationId, url }: { destinationId: string; url: string }) {
  return (
    <section aria-label={`Delivery log of ${url}`} data-destination={destinationId}>
      <p class="muted">The delivery log needs a server that lists deliveries.</p>
    </section>
  );
}
