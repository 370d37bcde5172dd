/**
 * @module Random identifiers and secrets: base62 text drawn from the CSPRNG without modulo bias.
 */
import { randomBytes } from 'node:crypto';
import { redactText } from './redact/index.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// 248 = 4 * 62: bytes at or above it are dropped so every character is equally likely.
const UNBIASED_LIMIT = 248;

/**
 * `length` base62 characters from crypto.randomBytes (rejection sampling, no bias). Identifiers and
 * secrets made from it travel through the redactor (every response body does), so a draw the redactor
 * would alter — one that happens to spell a provider name such as "gpt" — is drawn again; otherwise
 * about one id in a few hundred would come back with "[redacted]" inside it.
 */
export function randomBase62(length: number): string {
  // Only identifier-sized draws can be redrawn: a long enough random text always spells some name
  // (the unbias test draws 620,000 characters), and nothing that long is ever shown to a client.
  if (length > MAX_IDENTIFIER_LENGTH) return draw(length);
  for (;;) {
    const out = draw(length);
    // The leading "_" stands for the prefix every identifier has (`run_`, `service_sk_live_`, ...).
    if (redactText(`_${out}`) === `_${out}`) return out;
  }
}

/** The longest random part of an identifier, token or secret of the service (48: the data-dir key). */
const MAX_IDENTIFIER_LENGTH = 64;

function draw(length: number): string {
  let out = '';
  while (out.length < length) {
    const bytes = randomBytes(Math.ceil((length - out.length) * 1.1) + 4);
    for (const byte of bytes) {
      if (byte >= UNBIASED_LIMIT) continue;
      out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A public identifier such as `wksp_…`, `key_…`, `usr_…`: the spec's prefix plus 20 base62 characters. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(20)}`;
}

export const BASE62_ALPHABET = BASE62;
