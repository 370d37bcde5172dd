/**
 * @module Time-based one-time passwords (RFC 6238, over HOTP of RFC 4226) and the Base32 text
 * (RFC 4648) authenticator apps use for the shared secret.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '../../crypto.ts';

type TotpAlgorithm = 'sha1' | 'sha256' | 'sha512';

interface TotpOptions {
  digits?: number;
  periodSec?: number;
  algorithm?: TotpAlgorithm;
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** A new shared secret: 20 random bytes (160 bits, the size RFC 4226 recommends), in Base32. */
export function generateTotpSecret(): string {
  return base32Encode(randomBytes(20));
}

/** The time step a moment falls in. */
export function timeStep(at: Date, periodSec = 30): number {
  return Math.floor(at.getTime() / 1000 / periodSec);
}

/** The code for a time step (HOTP with the step as counter). */
export function totpAt(secret: Buffer, step: number, options: TotpOptions = {}): string {
  const { digits = 6, algorithm = 'sha1' } = options;
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac(algorithm, secret).update(counter).digest();
  // Dynamic truncation (RFC 4226 section 5.3).
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits;
  return binary.toString().padStart(digits, '0');
}

/** The code an authenticator shows at `at` for a Base32 secret. */
export function totpCode(base32Secret: string, at: Date, options: TotpOptions = {}): string {
  return totpAt(base32Decode(base32Secret), timeStep(at, options.periodSec), options);
}

/**
 * The time step whose code matches, looking one step either side for clock drift, or undefined.
 * Each step is compared in constant time.
 */
export function matchingStep(base32Secret: string, code: string, at: Date, options: TotpOptions = {}): number | undefined {
  const secret = base32Decode(base32Secret);
  const now = timeStep(at, options.periodSec);
  let found: number | undefined;
  for (const step of [now - 1, now, now + 1]) {
    if (constantTimeEqual(totpAt(secret, step, options), code)) found ??= step;
  }
  return found;
}

export function base32Encode(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** Decodes Base32, ignoring case, spaces and padding as authenticator apps do. */
export function base32Decode(text: string): Buffer {
  const clean = text.toUpperCase().replace(/[\s=]/g, '');
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of clean) {
    const index = BASE32.indexOf(ch);
    if (index < 0) throw new Error('not base32');
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}
