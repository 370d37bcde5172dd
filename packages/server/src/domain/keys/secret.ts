/**
 * @module The API key secret: `service_sk_live_` + 24 base62 characters from the CSPRNG. Only its
 * hash is stored; lists show the visible prefix (the fixed part plus the first 6 characters).
 */
import { sha256Hex } from '../../crypto.ts';
import { randomBase62 } from '../../random.ts';

const SECRET_PREFIX = 'service_sk_live_';
const SECRET_PATTERN = /^service_sk_live_[0-9A-Za-z]{24}$/;
const VISIBLE_CHARS = 6;

export function generateSecret(): string {
  return SECRET_PREFIX + randomBase62(24);
}

/** True when the value has the exact shape of a key secret (anything else cannot be a key). */
export function isSecretShaped(value: string): boolean {
  return SECRET_PATTERN.test(value);
}

export function visiblePrefix(secret: string): string {
  return secret.slice(0, SECRET_PREFIX.length + VISIBLE_CHARS);
}

export function hashSecret(secret: string): string {
  return sha256Hex(secret);
}
