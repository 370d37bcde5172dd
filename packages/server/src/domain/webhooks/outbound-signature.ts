/**
 * @module The headers of one outbound delivery: the HMAC-SHA256 of the exact body under the
 * destination's current secret, a fresh timestamp per attempt, the event id and type.
 */
import { hmacHex } from './hmac.ts';

/** The header names of a delivery, as the spec spells them. */
const DELIVERY_HEADERS = {
  signature: 'X-SERVICE-Signature',
  timestamp: 'X-SERVICE-Timestamp',
  eventId: 'X-SERVICE-Event-Id',
  eventType: 'X-SERVICE-Event-Type',
} as const;

interface DeliveryHeaderInput {
  /** The exact bytes that will be sent. */
  body: Uint8Array;
  /** The destination's current signing secret (after a rotation, the new one). */
  secret: string;
  eventId: string;
  eventType: string;
  /** The attempt's time in epoch milliseconds; sent as unix seconds. */
  nowMs: number;
}

/** Lowercase hex (64 characters) HMAC-SHA256 of the raw body with the destination's secret. */
export function signOutboundBody(body: Uint8Array | string, secret: string): string {
  if (secret.length === 0) throw new Error('an outbound destination needs a signing secret');
  return hmacHex('sha256', secret, body);
}

/**
 * The headers of one delivery attempt. The timestamp is the attempt's, not the event's, so a
 * retry hours later still falls inside the receiver's ±300 s window; the body (and so the
 * signature for an unchanged secret) stays the same across attempts.
 */
export function buildDeliveryHeaders(input: DeliveryHeaderInput): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    [DELIVERY_HEADERS.signature]: signOutboundBody(input.body, input.secret),
    [DELIVERY_HEADERS.timestamp]: String(Math.floor(input.nowMs / 1000)),
    [DELIVERY_HEADERS.eventId]: input.eventId,
    [DELIVERY_HEADERS.eventType]: input.eventType,
  };
}
