/**
 * @module The CSRF token of a session, derived from the session's cookie value: HMAC-SHA256 keyed by the cookie,
 * written as 43 base62 characters. The store keeps only hashes of both, yet the server can answer the token again
 * to whoever holds the cookie (`GET /auth/session`, after a reload or in a new tab), and the same token for the
 * session's whole life, so two tabs of one session never invalidate each other's token. The token tells nothing
 * of the cookie (an HMAC cannot be run backwards), so one seen in a page does not open the session.
 */
import { createHmac } from 'node:crypto';
import { BASE62_ALPHABET } from '../../random.ts';

export const CSRF_TOKEN_LENGTH = 43;
/** Bytes at or above 248 (4 × 62) are skipped, as random.ts does, so that no character is favoured. */
const UNBIASED_LIMIT = 248;

export function csrfTokenOf(sessionToken: string): string {
  let token = '';
  // Two blocks of 32 bytes nearly always suffice; a third only when more than 21 of their bytes were skipped.
  for (let block = 0; token.length < CSRF_TOKEN_LENGTH; block += 1) {
    const bytes = createHmac('sha256', sessionToken).update(`service csrf token ${block}`).digest();
    for (const byte of bytes) {
      if (byte < UNBIASED_LIMIT && token.length < CSRF_TOKEN_LENGTH) token += BASE62_ALPHABET[byte % 62];
    }
  }
  return token;
}
