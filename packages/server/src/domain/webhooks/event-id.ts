/**
 * @module The idempotency key of an inbound event: the sender's event id header, in the spec's
 * order of preference, or, when the sender sends none, an id derived from the body's SHA-256 so
 * that a sender retrying the same body is still recognised as a duplicate.
 */
import { createHash } from 'node:crypto';
import { fail } from '../../errors.ts';
import { readHeader, type HeaderBag } from './headers.ts';

/** The headers that may carry the event id, most preferred first (the spec's list). */
export const EVENT_ID_HEADERS = ['X-SERVICE-Event-Id', 'X-Event-Id', 'X-Request-Id', 'X-Webhook-Id', 'X-Hook-Id'] as const;

/** The longest event id accepted (it is stored under a uniqueness constraint). */
const MAX_EVENT_ID_LENGTH = 200;

/** Prefix of a derived id; a colon never appears in our own identifiers, so the origin is visible. */
const DERIVED_EVENT_ID_PREFIX = 'sha256:';

/** The event id and where it came from (the header's name, or `body` when derived). */
export interface InboundEventId {
  eventId: string;
  source: (typeof EVENT_ID_HEADERS)[number] | 'body';
}

// Visible ASCII without spaces: the contract's pattern for the inbound event id headers.
const PRINTABLE = /^[\x21-\x7e]+$/;

/**
 * The event id of an inbound request. The first of {@link EVENT_ID_HEADERS} that is present wins;
 * a present but invalid value (empty, over 200 characters, or anything but visible ASCII) is refused with
 * 400 `invalid_request` rather than skipped, because silently falling back would change which
 * events count as duplicates. With no header at all the id is `sha256:` + the lowercase hex
 * SHA-256 of the raw body: identical bodies are then the same event. Call this only after the
 * signature was verified, so that an unauthenticated request never learns about its headers.
 */
export function resolveInboundEventId(headers: HeaderBag, rawBody: Uint8Array): InboundEventId {
  for (const name of EVENT_ID_HEADERS) {
    const value = readHeader(headers, name);
    if (value === undefined) continue;
    if (!isValidEventId(value)) {
      throw fail('invalid_request', `${name} must be 1 to ${MAX_EVENT_ID_LENGTH} visible ASCII characters (no spaces)`, { param: name });
    }
    return { eventId: value, source: name };
  }
  return { eventId: deriveEventId(rawBody), source: 'body' };
}

/** Whether a value is an acceptable event id: 1–200 visible ASCII characters (0x21–0x7E). */
export function isValidEventId(value: string): boolean {
  return value.length <= MAX_EVENT_ID_LENGTH && PRINTABLE.test(value);
}

/** The id used when the sender sends none: `sha256:` + hex SHA-256 of the exact body bytes. */
export function deriveEventId(rawBody: Uint8Array): string {
  return DERIVED_EVENT_ID_PREFIX + createHash('sha256').update(rawBody).digest('hex');
}
