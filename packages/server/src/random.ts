/**
 * @module Random identifiers and secrets: base62 text drawn from the CSPRNG without modulo bias, out of a
 * pooled buffer (one `randomFillSync` per 4 KiB instead of one `randomBytes` per identifier).
 */
import { randomFillSync } from 'node:crypto';
import { identifierDenylist } from './redact/rules.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// 248 = 4 * 62: bytes at or above it are dropped so every character is equally likely.
const UNBIASED_LIMIT = 248;

/** The longest random part of an identifier, token or secret of the service (48: the data-dir key). */
const MAX_IDENTIFIER_LENGTH = 64;

const DENYLIST = identifierDenylist();

/**
 * `length` base62 characters from the CSPRNG (rejection sampling, no bias). Identifiers and secrets
 * made from it travel through the redactor (every response body does), so a draw the redactor would
 * alter (one that happens to spell a provider name such as "gpt") is drawn again; otherwise about one
 * id in a few hundred would come back with "[redacted]" inside it. What the redactor can find in a
 * base62 draw is a short denylist (redact/rules.ts, `identifierDenylist`), checked instead of the whole
 * redactor; random.test.ts holds the two equal.
 *
 * Draws of 39 characters and more are secrets (session and CSRF tokens, keys): with the prefix's `_`
 * they are 40 characters mixing cases and digits, which the redactor takes for a generated secret
 * whatever they spell, so a route that shows one keeps it (`keepUnredacted`); the names are still
 * kept out of them.
 */
export function randomBase62(length: number): string {
  // Only identifier-sized draws can be redrawn: a long enough random text always spells some name
  // (the unbias test draws 620,000 characters), and nothing that long is ever shown to a client.
  if (length > MAX_IDENTIFIER_LENGTH) return draw(length);
  for (;;) {
    const out = draw(length);
    if (!deniedIdentifier(out)) return out;
  }
}

/**
 * Whether the redactor's fixed rules would alter `_` + `random` (the `_` stands for the prefix every
 * identifier has), other than as a 40-character generated secret: see {@link randomBase62}.
 */
export function deniedIdentifier(random: string): boolean {
  const text = `_${random}`;
  return DENYLIST.caseless.test(text) || DENYLIST.exact.test(text);
}

const POOL_SIZE = 4096;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let used = POOL_SIZE;

function draw(length: number): string {
  let out = '';
  while (out.length < length) {
    if (used === POOL_SIZE) {
      randomFillSync(pool);
      used = 0;
    }
    const byte = pool[used]!;
    // Each byte is used once, then overwritten by the next fill.
    used += 1;
    if (byte < UNBIASED_LIMIT) out += BASE62[byte % 62];
  }
  return out;
}

/** A public identifier such as `wksp_…`, `key_…`, `usr_…`: the spec's prefix plus 20 base62 characters. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(20)}`;
}

export const BASE62_ALPHABET = BASE62;
