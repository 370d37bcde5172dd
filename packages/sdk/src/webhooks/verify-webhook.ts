/**
 * @module Receiver-side verification of the service's signed deliveries, in the spec's order:
 * (a) the timestamp inside ±300 s (60 s into the future), before any hashing; (b) the
 * HMAC-SHA256 recomputed over the exact raw bytes; (c) a constant-time comparison; then the
 * signed envelope's `created_at` inside its window and (d) an optional event-id dedupe hook.
 *
 * The Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) are
 * required: their signature covers the id and the timestamp, so a captured delivery cannot be
 * sent again later under a fresh timestamp. `X-SERVICE-Signature` covers the body only; a delivery
 * carrying only it (`X-SERVICE-Timestamp`, `X-SERVICE-Signature`) verifies only when the caller
 * opts in (`allowServiceSignatureOnly`), and then its signed `created_at` must lie within 300 s,
 * the one signed time such a delivery has. Uses Web Crypto only, so it runs on Node 20+, Deno,
 * Bun and edge runtimes alike.
 */
import type { WebhookEvent } from './events.ts';

/** How far in the past `X-SERVICE-Timestamp` (or `webhook-timestamp`) may lie, in seconds. */
export const WEBHOOK_TOLERANCE_PAST_SECONDS = 300;
/** How far in the future `X-SERVICE-Timestamp` (or `webhook-timestamp`) may lie, in seconds (clock skew). */
export const WEBHOOK_TOLERANCE_FUTURE_SECONDS = 60;

/** Request headers: a fetch `Headers`, or a plain record such as node's `req.headers`. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * The dedupe hook: answer `true` when this event id was already handled. Make it atomic
 * ("insert if absent", e.g. a unique key or Redis `SET NX`) so concurrent duplicates are caught.
 */
export type SeenEventHook = (eventId: string) => boolean | Promise<boolean>;

export interface VerifyWebhookOptions {
  /**
   * The body exactly as received: the raw bytes (`Uint8Array`, `Buffer`, `ArrayBuffer`), or the
   * raw text. Never `JSON.stringify(parsedBody)`: re-serialized JSON does not verify.
   */
  rawBody: Uint8Array | ArrayBuffer | string;
  headers: WebhookHeaders;
  /**
   * The destination's signing secret, exactly as shown (`whsec_…`). Pass several (new first) while
   * rotating: a delivery signed with any of them verifies. An empty secret (or list) rejects everything.
   * (The service also sends the previous secret's `webhook-signature` for 24 hours after a rotation, so
   * a receiver still holding only the old secret keeps verifying through the Standard Webhooks headers.)
   */
  secret: string | readonly string[];
  /** The current time (a `Date` or epoch milliseconds); defaults to `Date.now()`. */
  now?: Date | number;
  /** Optional duplicate detection, called only after the signature verified. */
  dedupe?: SeenEventHook | { seen: SeenEventHook };
  /**
   * Also accept a delivery that carries only the service's own headers (`X-SERVICE-Timestamp`,
   * `X-SERVICE-Signature`, no `webhook-*`). Weaker, and off by default: `X-SERVICE-Signature`
   * covers the body only, not the timestamp, so anyone who captured a delivery can send it again
   * with a fresh `X-SERVICE-Timestamp`. Such a delivery is therefore held to its signed `created_at`
   * (at most {@link WEBHOOK_TOLERANCE_PAST_SECONDS} old unless `maxEventAgeSeconds` says otherwise),
   * which also refuses the service's own retries and replays of older events; a replay within that
   * window is caught only by `dedupe`. Turn it on only when something between the service and you
   * strips the `webhook-*` headers.
   */
  allowServiceSignatureOnly?: boolean;
  /**
   * How old (in seconds) the signed envelope's `created_at` may be. Default: no limit for a delivery
   * verified through `webhook-signature` (its timestamp is signed, so a retry hours after the event is
   * fresh), {@link WEBHOOK_TOLERANCE_PAST_SECONDS} for one verified through `X-SERVICE-Signature` alone.
   * Raising it lets late retries through the `X-SERVICE-Signature`-only path and widens its replay window by as much.
   * A `created_at` more than {@link WEBHOOK_TOLERANCE_FUTURE_SECONDS} ahead is always refused.
   */
  maxEventAgeSeconds?: number;
}

/** Why a delivery was rejected. */
export type WebhookVerificationFailure =
  | 'missing_secret'
  /** No `webhook-signature`: a delivery with only `X-SERVICE-*`, refused unless `allowServiceSignatureOnly`. */
  | 'missing_standard_signature'
  | 'missing_timestamp'
  | 'malformed_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_in_future'
  | 'missing_signature'
  | 'malformed_signature'
  | 'signature_mismatch'
  | 'invalid_payload'
  | 'event_id_mismatch'
  | 'event_type_mismatch'
  /** The signed envelope's `created_at` is older than the window (a replay, or a retry verified by `X-SERVICE-Signature` alone). */
  | 'created_at_too_old'
  /** The signed envelope's `created_at` is more than 60 s ahead. */
  | 'created_at_in_future';

/**
 * The verdict. On success, `event` is the parsed envelope and `duplicate` says whether the dedupe
 * hook had seen it (answer `2xx` all the same, and skip the work). On failure, answer `status`
 * (401 for anything about the signature or a timestamp, 400 for a signed body that is not an event).
 */
export type VerifyWebhookResult =
  | { ok: true; event: WebhookEvent; eventId: string; duplicate: boolean }
  | { ok: false; reason: WebhookVerificationFailure; status: 400 | 401 };

/**
 * Verify one delivery from the service.
 *
 * @example
 * ```ts
 * import { verifyWebhook } from '@service/sdk';
 *
 * // Express: keep the raw bytes (express.raw), never the parsed JSON.
 * app.post('/hooks/service', express.raw({ type: 'application/json' }), async (req, res) => {
 *   const result = await verifyWebhook({
 *     rawBody: req.body,
 *     headers: req.headers,
 *     secret: process.env.SERVICE_WEBHOOK_SECRET!,
 *     dedupe: (id) => seenStore.insertIfAbsent(id).then((inserted) => !inserted),
 *   });
 *   if (!result.ok) return res.status(result.status).end();
 *   res.status(200).end();              // answer fast, also for a duplicate
 *   if (!result.duplicate) queue.push(result.event);
 * });
 * ```
 *
 * Throws only for a programming error: a `rawBody` that is not bytes or text (for example an
 * already parsed object), or a `maxEventAgeSeconds` that is not a finite number ≥ 0. Every property
 * of the request itself is a `{ ok: false }` result.
 */
export async function verifyWebhook(options: VerifyWebhookOptions): Promise<VerifyWebhookResult> {
  const bytes = toBytes(options.rawBody);
  const { maxEventAgeSeconds } = options;
  if (maxEventAgeSeconds !== undefined && !(Number.isFinite(maxEventAgeSeconds) && maxEventAgeSeconds >= 0)) {
    throw new RangeError('verifyWebhook: maxEventAgeSeconds must be a finite number of seconds, 0 or more');
  }
  const secrets = (typeof options.secret === 'string' ? [options.secret] : [...options.secret]).filter((s) => s.length > 0);
  if (secrets.length === 0) return reject('missing_secret');
  // The Standard Webhooks set when the delivery carries it (its signature covers id and timestamp too);
  // without it, only by the caller's choice: X-SERVICE-Signature alone says nothing about when it was sent.
  const standard = header(options.headers, 'webhook-signature') !== undefined;
  if (!standard && options.allowServiceSignatureOnly !== true) return reject('missing_standard_signature');

  // (a) The timestamp window first: a replayed or stale delivery costs no hashing.
  const timestamp = header(options.headers, standard ? 'webhook-timestamp' : 'x-service-timestamp');
  if (timestamp === undefined || timestamp === '') return reject('missing_timestamp');
  if (!/^\d{1,12}$/.test(timestamp)) return reject('malformed_timestamp');
  const nowMs = options.now === undefined ? Date.now() : typeof options.now === 'number' ? options.now : options.now.getTime();
  const skew = Number(timestamp) - nowMs / 1000;
  if (skew < -WEBHOOK_TOLERANCE_PAST_SECONDS) return reject('timestamp_too_old');
  if (skew > WEBHOOK_TOLERANCE_FUTURE_SECONDS) return reject('timestamp_in_future');

  const verdict = standard ? await verifyStandard(options.headers, bytes, timestamp, secrets) : await verifyService(options.headers, bytes, secrets);
  if (verdict !== 'ok') return reject(verdict);

  const event = parseEvent(bytes);
  if (!event) return reject('invalid_payload');
  // Only the body (and, in the Standard Webhooks set, `webhook-id`) is signed: a header that disagrees
  // with the body was altered on the way.
  const headerId = header(options.headers, 'x-service-event-id');
  if (headerId !== undefined && headerId !== event.id) return reject('event_id_mismatch');
  if (standard && header(options.headers, 'webhook-id') !== event.id) return reject('event_id_mismatch');
  const headerType = header(options.headers, 'x-service-event-type');
  if (headerType !== undefined && headerType !== event.type) return reject('event_type_mismatch');
  // The signed created_at: the only signed time of a delivery verified by X-SERVICE-Signature alone,
  // so a captured body sent again under a fresh X-SERVICE-Timestamp is refused once it is old.
  const ageLimit = maxEventAgeSeconds ?? (standard ? Number.POSITIVE_INFINITY : WEBHOOK_TOLERANCE_PAST_SECONDS);
  const ageSeconds = (nowMs - createdAtMs(event.created_at)!) / 1000;
  if (ageSeconds > ageLimit) return reject('created_at_too_old');
  if (-ageSeconds > WEBHOOK_TOLERANCE_FUTURE_SECONDS) return reject('created_at_in_future');

  // (d) Dedupe on the signed id, so a replay with a fresh header id is still caught.
  const hook = typeof options.dedupe === 'function' ? options.dedupe : options.dedupe?.seen.bind(options.dedupe);
  const duplicate = hook ? (await hook(event.id)) === true : false;
  return { ok: true, event, eventId: event.id, duplicate };
}

/** (b) and (c) over `X-SERVICE-Signature`: lowercase hex HMAC-SHA256 of the body, keyed with the secret string. */
async function verifyService(headers: WebhookHeaders, bytes: Uint8Array, secrets: string[]): Promise<WebhookVerificationFailure | 'ok'> {
  const signature = header(headers, 'x-service-signature');
  if (signature === undefined || signature === '') return 'missing_signature';
  if (!/^[0-9a-f]{64}$/.test(signature)) return 'malformed_signature';
  const received = hexToBytes(signature);
  let matched = false;
  for (const secret of secrets) {
    const expected = await hmacSha256(new TextEncoder().encode(secret), bytes);
    // No early exit: every secret is tried, so timing says nothing about which one matched.
    if (constantTimeEqual(expected, received)) matched = true;
  }
  return matched ? 'ok' : 'signature_mismatch';
}

/**
 * (b) and (c) over `webhook-signature` (https://www.standardwebhooks.com/): space-separated `v1,<base64>`
 * HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the base64 decoding of the secret
 * after `whsec_`, as the `standardwebhooks` libraries do. Any `v1` signature under any secret verifies;
 * other versions are skipped.
 */
async function verifyStandard(headers: WebhookHeaders, bytes: Uint8Array, timestamp: string, secrets: string[]): Promise<WebhookVerificationFailure | 'ok'> {
  const id = header(headers, 'webhook-id');
  const list = header(headers, 'webhook-signature') ?? '';
  if (id === undefined || id === '' || list === '') return 'missing_signature';
  const received: Uint8Array[] = [];
  for (const entry of list.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || value === undefined) continue;
    if (!/^[A-Za-z0-9+/]{43}=$/.test(value)) return 'malformed_signature';
    received.push(base64ToBytes(value));
  }
  if (received.length === 0) return 'malformed_signature';
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + bytes.length);
  signed.set(prefix);
  signed.set(bytes, prefix.length);
  let matched = false;
  for (const secret of secrets) {
    const key = standardKey(secret);
    if (!key) continue;
    const expected = await hmacSha256(key, signed);
    for (const candidate of received) if (constantTimeEqual(expected, candidate)) matched = true;
  }
  return matched ? 'ok' : 'signature_mismatch';
}

/** The key the Standard Webhooks libraries derive: base64 after `whsec_`; undefined when it is not base64. */
function standardKey(secret: string): Uint8Array | undefined {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (encoded.length === 0 || encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return undefined;
  return base64ToBytes(encoded);
}

function base64ToBytes(value: string): Uint8Array {
  const binary = atob(value);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) out[i] = binary.charCodeAt(i);
  return out;
}

function reject(reason: WebhookVerificationFailure): VerifyWebhookResult {
  return { ok: false, reason, status: reason === 'invalid_payload' ? 400 : 401 };
}

function toBytes(raw: unknown): Uint8Array {
  if (raw instanceof Uint8Array) return raw;
  if (raw instanceof ArrayBuffer) return new Uint8Array(raw);
  if (typeof raw === 'string') return new TextEncoder().encode(raw);
  throw new TypeError('verifyWebhook: rawBody must be the raw request bytes or text, not a parsed object');
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name)?.trim() ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    return (typeof value === 'string' ? value : value.join(', ')).trim();
  }
  return undefined;
}

async function hmacSha256(secret: Uint8Array, body: Uint8Array): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', secret as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, body as Uint8Array<ArrayBuffer>));
}

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i += 1) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

// Both digests are 32 bytes (the formats were checked); the loop never exits early.
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i += 1) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

// RFC 3339 date-time with an explicit offset, as the envelope's `created_at` is sent.
const DATE_TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** The instant of a `created_at` in epoch milliseconds, or undefined when it is not an RFC 3339 date-time. */
function createdAtMs(value: string): number | undefined {
  const m = DATE_TIME.exec(value);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${(m[2] ?? '').slice(0, 4)}${m[3]}`.toUpperCase());
  return Number.isNaN(ms) ? undefined : ms;
}

const EVENT_TYPES = new Set(['run.completed', 'run.failed', 'approval.created', 'approval.decided', 'draft.created', 'integration.connected', 'ping']);

function parseEvent(bytes: Uint8Array): WebhookEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const e = value as Record<string, unknown>;
  const ok =
    typeof e.id === 'string' &&
    /^evt_[0-9A-Za-z]{16,32}$/.test(e.id) &&
    typeof e.type === 'string' &&
    EVENT_TYPES.has(e.type) &&
    typeof e.created_at === 'string' &&
    createdAtMs(e.created_at) !== undefined &&
    typeof e.tenant_id === 'string' &&
    typeof e.data === 'object' &&
    e.data !== null &&
    !Array.isArray(e.data);
  return ok ? (value as WebhookEvent) : undefined;
}
