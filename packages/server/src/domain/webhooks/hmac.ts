/**
 * @module The HMAC primitives shared by inbound verification and outbound signing: lowercase hex
 * digests over raw bytes, and a constant-time comparison of two hex digests.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The HMAC algorithms a webhook may use. Outbound deliveries always use sha256. */
export type HmacAlgorithm = 'sha256' | 'sha512';

/** Lowercase hex length of each algorithm's digest (the spec's signature length). */
export const HEX_DIGEST_LENGTH: Readonly<Record<HmacAlgorithm, number>> = { sha256: 64, sha512: 128 };

/** Lowercase hex HMAC of the exact bytes given; a string body is taken as its UTF-8 bytes. */
export function hmacHex(algorithm: HmacAlgorithm, secret: string | Uint8Array, body: Uint8Array | string): string {
  return createHmac(algorithm, secret).update(body).digest('hex');
}

/**
 * Whether two lowercase hex digests are equal, in time that does not depend on where they differ.
 * Callers check the format (and so the length) first; a length mismatch answers false at once
 * because the length of a digest is public.
 */
export function hexDigestsEqual(expectedHex: string, actualHex: string): boolean {
  const expected = Buffer.from(expectedHex, 'hex');
  const actual = Buffer.from(actualHex, 'hex');
  if (expected.length !== actual.length) return false;
  // Buffer.from stops at the first non-hex character: refuse instead of comparing a prefix.
  if (expected.length * 2 !== expectedHex.length || actual.length * 2 !== actualHex.length) return false;
  return timingSafeEqual(expected, actual);
}
