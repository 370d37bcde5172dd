/**
 * @module Verification of a signed inbound event: the HMAC of the exact raw body bytes under the
 * webhook's secret, and the anti-replay timestamp. Every failure is one outcome,
 * `signature_invalid`; the precise reason is returned for the audit log only and never sent.
 */
import { ServiceError } from '../../errors.ts';
import { readHeader, type HeaderBag } from './headers.ts';
import { HEX_DIGEST_LENGTH, hexDigestsEqual, hmacHex, type HmacAlgorithm } from './hmac.ts';
import { checkReplayWindow, type TimestampProblem } from './replay-window.ts';

/** The signature header used when a webhook does not configure its own. */
export const DEFAULT_SIGNATURE_HEADER = 'X-SERVICE-Signature';
/** The header that carries the anti-replay timestamp (unix seconds or ISO 8601). */
const TIMESTAMP_HEADER = 'X-SERVICE-Timestamp';

/** Why a signature was refused. For the audit log only: the client always sees `signature_invalid`. */
type SignatureFailureReason =
  | 'missing_secret'
  | 'missing_signature'
  | 'unsupported_scheme'
  | 'malformed_signature'
  | 'missing_timestamp'
  | TimestampProblem
  | 'signature_mismatch';

/** What the route knows about one inbound request and its webhook's configuration. */
export interface InboundSignatureInput {
  /** The body exactly as received; never a re-serialization of parsed JSON. */
  rawBody: Uint8Array;
  headers: HeaderBag;
  /** The webhook's signing secret. Absent or empty rejects everything (fail-closed). */
  secret: string | null | undefined;
  /** The webhook's algorithm; sha256 unless configured. */
  algorithm?: HmacAlgorithm;
  /** The webhook's signature header name; `X-SERVICE-Signature` unless configured. */
  signatureHeader?: string;
  /** Whether the webhook requires `X-SERVICE-Timestamp`. A timestamp that is sent is always checked. */
  timestampRequired?: boolean;
  /** The clock, in epoch milliseconds (injected so tests and the app share one). */
  now: () => number;
}

/** The outcome of verification: accepted (with the checked timestamp, if any) or one refusal. */
type InboundSignatureVerdict = { ok: true; timestampMs: number | null } | { ok: false; error: 'signature_invalid'; reason: SignatureFailureReason };

/** The 401 a route throws for any refused signature; `reason` stays on the server (audit only). */
export class SignatureInvalidError extends ServiceError<'signature_invalid'> {
  constructor(readonly reason: SignatureFailureReason) {
    super('signature_invalid', 401, undefined, {});
  }
}

/**
 * Verify one inbound request. Checks, in order: a secret exists; the signature header is present
 * and is lowercase hex of the algorithm's length (64 or 128), optionally prefixed by the scheme
 * `sha256=` / `sha512=` naming the webhook's own algorithm (any other prefix is an unsupported
 * scheme); the timestamp, when required or present, lies in the replay window; the HMAC of the raw
 * bytes matches in constant time. The timestamp goes before the HMAC so replays cost no hashing.
 */
export function verifyInboundSignature(input: InboundSignatureInput): InboundSignatureVerdict {
  const algorithm = input.algorithm ?? 'sha256';
  const refuse = (reason: SignatureFailureReason): InboundSignatureVerdict => ({ ok: false, error: 'signature_invalid', reason });

  if (typeof input.secret !== 'string' || input.secret.length === 0) return refuse('missing_secret');

  const header = readHeader(input.headers, input.signatureHeader ?? DEFAULT_SIGNATURE_HEADER);
  if (header === undefined || header.trim() === '') return refuse('missing_signature');
  const signature = stripScheme(header.trim(), algorithm);
  if (signature === undefined) return refuse('unsupported_scheme');
  if (!isLowercaseHex(signature, HEX_DIGEST_LENGTH[algorithm])) return refuse('malformed_signature');

  let timestampMs: number | null = null;
  const timestamp = readHeader(input.headers, TIMESTAMP_HEADER);
  if (timestamp === undefined || timestamp.trim() === '') {
    if (input.timestampRequired) return refuse('missing_timestamp');
  } else {
    const replay = checkReplayWindow(timestamp, input.now());
    if (!replay.ok) return refuse(replay.problem);
    timestampMs = replay.atMs;
  }

  const expected = hmacHex(algorithm, input.secret, input.rawBody);
  if (!hexDigestsEqual(expected, signature)) return refuse('signature_mismatch');
  return { ok: true, timestampMs };
}

/** Like {@link verifyInboundSignature}, but throws {@link SignatureInvalidError} on refusal. */
export function assertInboundSignature(input: InboundSignatureInput): { timestampMs: number | null } {
  const verdict = verifyInboundSignature(input);
  if (!verdict.ok) throw new SignatureInvalidError(verdict.reason);
  return { timestampMs: verdict.timestampMs };
}

/**
 * A sender-side helper (CLI, tests, documentation): the signature header value for a body.
 * Exactly what an external sender computes: lowercase hex HMAC of the raw bytes.
 */
export function signInboundBody(body: Uint8Array | string, secret: string, algorithm: HmacAlgorithm = 'sha256'): string {
  return hmacHex(algorithm, secret, body);
}

// A short `<name>=` prefix is a scheme. It is accepted only when it names the webhook's own
// algorithm (GitHub-style `sha256=<hex>`); undefined means a scheme we do not support. A long
// prefix (base64 padding, garbage) is left whole for the format check to refuse.
function stripScheme(value: string, algorithm: HmacAlgorithm): string | undefined {
  const scheme = /^([A-Za-z][A-Za-z0-9_-]{0,15})=(.*)$/s.exec(value);
  if (!scheme) return value;
  return scheme[1] === algorithm ? scheme[2] : undefined;
}

function isLowercaseHex(value: string, length: number): boolean {
  return value.length === length && /^[0-9a-f]+$/.test(value);
}
