/**
 * @module Receiver-side verification of the service's signed deliveries, in the spec's order:
 * (a) the timestamp inside ±300 s (60 s into the future), before any hashing; (b) the
 * HMAC-SHA256 recomputed over the exact raw bytes; (c) a constant-time comparison; then (d) an
 * optional event-id dedupe hook. Uses Web Crypto only, so it runs on Node 20+, Deno, Bun and
 * edge runtimes alike.
 */
import type { WebhookEvent } from './events.ts';

/** How far in the past `X-SERVICE-Timestamp` may lie, in seconds. */
export const WEBHOOK_TOLERANCE_PAST_SECONDS = 300;
/** How far in the future `X-SERVICE-Timestamp` may lie, in seconds (clock skew). */
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
   * The destination's signing secret. Pass several (new first) while rotating: a delivery signed
   * with any of them verifies. An empty secret (or list) rejects everything.
   */
  secret: string | readonly string[];
  /** The current time (a `Date` or epoch milliseconds); defaults to `Date.now()`. */
  now?: Date | number;
  /** Optional duplicate detection, called only after the signature verified. */
  dedupe?: SeenEventHook | { seen: SeenEventHook };
}

/** Why a delivery was rejected. */
export type WebhookVerificationFailure =
  | 'missing_secret'
  | 'missing_timestamp'
  | 'malformed_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_in_future'
  | 'missing_signature'
  | 'malformed_signature'
  | 'signature_mismatch'
  | 'invalid_payload'
  | 'event_id_mismatch'
  | 'event_type_mismatch';

/**
 * The verdict. On success, `event` is the parsed envelope and `duplicate` says whether the dedupe
 * hook had seen it (answer `2xx` all the same, and skip the work). On failure, answer `status`
 * (401 for anything about the signature or timestamp, 400 for a signed body that is not an event).
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
 * already parsed object). Every property of the request itself is a `{ ok: false }` result.
 */
export async function verifyWebhook(options: VerifyWebhookOptions): Promise<VerifyWebhookResult> {
  const bytes = toBytes(options.rawBody);
  const secrets = (typeof options.secret === 'string' ? [options.secret] : [...options.secret]).filter((s) => s.length > 0);
  if (secrets.length === 0) return reject('missing_secret');

  // (a) The timestamp window first: a replayed or stale delivery costs no hashing.
  const timestamp = header(options.headers, 'x-service-timestamp');
  if (timestamp === undefined || timestamp === '') return reject('missing_timestamp');
  if (!/^\d{1,12}$/.test(timestamp)) return reject('malformed_timestamp');
  const nowMs = options.now === undefined ? Date.now() : typeof options.now === 'number' ? options.now : options.now.getTime();
  const skew = Number(timestamp) - nowMs / 1000;
  if (skew < -WEBHOOK_TOLERANCE_PAST_SECONDS) return reject('timestamp_too_old');
  if (skew > WEBHOOK_TOLERANCE_FUTURE_SECONDS) return reject('timestamp_in_future');

  const signature = header(options.headers, 'x-service-signature');
  if (signature === undefined || signature === '') return reject('missing_signature');
  if (!/^[0-9a-f]{64}$/.test(signature)) return reject('malformed_signature');
  const received = hexToBytes(signature);

  // (b) Recompute over the exact bytes, (c) compare in constant time, for each accepted secret.
  let matched = false;
  for (const secret of secrets) {
    const expected = await hmacSha256(secret, bytes);
    // No early exit: every secret is tried, so timing says nothing about which one matched.
    if (constantTimeEqual(expected, received)) matched = true;
  }
  if (!matched) return reject('signature_mismatch');

  const event = parseEvent(bytes);
  if (!event) return reject('invalid_payload');
  // Only the body is signed: a header that disagrees with it was altered on the way.
  const headerId = header(options.headers, 'x-service-event-id');
  if (headerId !== undefined && headerId !== event.id) return reject('event_id_mismatch');
  const headerType = header(options.headers, 'x-service-event-type');
  if (headerType !== undefined && headerType !== event.type) return reject('event_type_mismatch');

  // (d) Dedupe on the signed id, so a replay with a fresh header id is still caught.
  const hook = typeof options.dedupe === 'function' ? options.dedupe : options.dedupe?.seen.bind(options.dedupe);
  const duplicate = hook ? (await hook(event.id)) === true : false;
  return { ok: true, event, eventId: event.id, duplicate };
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

async function hmacSha256(secret: string, body: Uint8Array): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, body as Uint8Array<ArrayBuffer>));
}

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i += 1) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

// Both digests are 32 bytes (the format was checked); the loop never exits early.
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i += 1) diff |= a[i]! ^ b[i]!;
  return diff === 0;
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
    typeof e.tenant_id === 'string' &&
    typeof e.data === 'object' &&
    e.data !== null &&
    !Array.isArray(e.data);
  return ok ? (value as WebhookEvent) : undefined;
}
