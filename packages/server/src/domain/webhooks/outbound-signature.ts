/**
 * @module The headers of one outbound delivery: the service's own (the HMAC-SHA256 of the exact body
 * under the destination's current secret, a fresh timestamp per attempt, the event id and type) and,
 * beside them, the Standard Webhooks ones (https://www.standardwebhooks.com/: `webhook-id`,
 * `webhook-timestamp`, `webhook-signature`), whose signature covers the id and the timestamp too.
 */
import { createHmac } from 'node:crypto';
import { hmacHex } from './hmac.ts';

/** The header names of a delivery, as the spec spells them. */
const DELIVERY_HEADERS = {
  signature: 'X-SERVICE-Signature',
  timestamp: 'X-SERVICE-Timestamp',
  eventId: 'X-SERVICE-Event-Id',
  eventType: 'X-SERVICE-Event-Type',
} as const;

/** The Standard Webhooks header names (lowercase, as its libraries read them). */
const STANDARD_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

/** The prefix of a signing secret, and the one the Standard Webhooks libraries strip before base64-decoding. */
const SECRET_PREFIX = 'whsec_';

interface DeliveryHeaderInput {
  /** The exact bytes that will be sent. */
  body: Uint8Array;
  /** The destination's current signing secret (after a rotation, the new one). */
  secret: string;
  /**
   * The secret the last rotation replaced, while its grace period lasts: it adds a second `v1`
   * signature to `webhook-signature` (never to `X-SERVICE-Signature`, which stays the new secret's).
   */
  previousSecret?: string | undefined;
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
 * The HMAC key the Standard Webhooks libraries derive from a secret string: the base64 decoding of
 * what follows `whsec_` (`new Webhook(secret)` of the `standardwebhooks` package, Svix's `Webhook`).
 * Our secrets are `whsec_` + 32 base62 characters: base62 characters are base64 characters and 32 of
 * them decode to 24 bytes, so the string the admin was shown works unchanged with those libraries.
 * A secret that is not valid base64 after the prefix throws, as the libraries do.
 */
export function standardWebhookKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (encoded.length === 0 || encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
    throw new Error('a Standard Webhooks secret must be base64 after its whsec_ prefix');
  }
  return Buffer.from(encoded, 'base64');
}

/** One Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`. */
export function signStandardWebhook(input: { id: string; timestamp: string; body: Uint8Array | string; secret: string }): string {
  const mac = createHmac('sha256', standardWebhookKey(input.secret));
  mac.update(`${input.id}.${input.timestamp}.`);
  mac.update(input.body);
  return `v1,${mac.digest('base64')}`;
}

/**
 * The headers of one delivery attempt. The timestamp is the attempt's, not the event's, so a
 * retry hours later still falls inside the receiver's ±300 s window; the body (and so the
 * service signature for an unchanged secret) stays the same across attempts. `webhook-id` is the
 * event id, so a receiver deduplicating on it sees every attempt of an event as one message.
 */
export function buildDeliveryHeaders(input: DeliveryHeaderInput): Record<string, string> {
  const timestamp = String(Math.floor(input.nowMs / 1000));
  const secrets = input.previousSecret ? [input.secret, input.previousSecret] : [input.secret];
  return {
    'Content-Type': 'application/json',
    [DELIVERY_HEADERS.signature]: signOutboundBody(input.body, input.secret),
    [DELIVERY_HEADERS.timestamp]: timestamp,
    [DELIVERY_HEADERS.eventId]: input.eventId,
    [DELIVERY_HEADERS.eventType]: input.eventType,
    [STANDARD_HEADERS.id]: input.eventId,
    [STANDARD_HEADERS.timestamp]: timestamp,
    // New secret first; the specification separates signatures with a space.
    [STANDARD_HEADERS.signature]: secrets.map((secret) => signStandardWebhook({ id: input.eventId, timestamp, body: input.body, secret })).join(' '),
  };
}
