/**
 * @module The error kind of a failed delivery attempt, as the delivery log and the destination show
 * it: a word an admin can act on (fix the certificate, open the firewall, answer faster) instead of
 * a raw socket error. Derived from the classified outcome (delivery.ts) and its detail, the Node
 * error code; the code itself is never shown.
 */
import type { Schema } from '../../contract.ts';
import type { DeliveryOutcome } from './delivery.ts';

/** The contract's words (`DeliveryErrorKind`, generated from openapi/). */
export type DeliveryErrorKind = Schema<'DeliveryErrorKind'>;

/** Node's TLS and certificate error codes (`CERT_HAS_EXPIRED`, `ERR_TLS_CERT_ALTNAME_INVALID`, `DEPTH_ZERO_SELF_SIGNED_CERT`, …). */
const TLS_CODE = /CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|HOSTNAME|HANDSHAKE|EPROTO/i;

/** The kind of a failed attempt; null for a delivered one. */
export function deliveryErrorKind(outcome: DeliveryOutcome): DeliveryErrorKind | null {
  if (outcome.result === 'delivered') return null;
  switch (outcome.reason) {
    case 'http_status':
      return 'http_status';
    case 'timeout':
      return 'timeout';
    case 'dns_failed':
      return 'dns';
    case 'refused_destination':
      return 'ssrf_refused';
    case 'network_error':
      return networkKind(outcome.detail);
  }
}

function networkKind(code: string | undefined): DeliveryErrorKind {
  if (code === 'internal') return 'internal';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection_reset';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (code && TLS_CODE.test(code)) return 'tls';
  return 'network';
}
