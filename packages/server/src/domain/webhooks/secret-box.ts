/**
 * @module Webhook signing secrets at rest. They must stay usable to compute an HMAC, so they
 * cannot be hashed: they are sealed with AES-256-GCM under a key derived from the server's
 * `SECRET_KEY`, and opened only at the moment of signing or verifying.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { randomBase62 } from '../../random.ts';

/** `whsec_` + 32 base62 characters (about 190 bits), the contract's secret format. */
export function newSigningSecret(): string {
  return `whsec_${randomBase62(32)}`;
}

export interface SecretBox {
  /** `v1.<iv>.<tag>.<ciphertext>`, each part base64url. */
  seal(plaintext: string): string;
  /** Throws when the value was not sealed under this key or was altered. */
  open(sealed: string): string;
  /**
   * `bytes` bytes derived from the key and `input` for `purpose` (HKDF): the same for the same input under the same
   * key, unpredictable without the key. For a value a request must find again without storing it.
   */
  derive(purpose: string, input: string, bytes: number): Buffer;
}

const VERSION = 'v1';
const IV_BYTES = 12;

/**
 * A box under `secretKey` (any string of at least 32 characters; HKDF turns it into the AES key,
 * so a passphrase and a random hex string both work).
 */
export function createSecretBox(secretKey: string): SecretBox {
  if (secretKey.length < 32) throw new Error('SECRET_KEY must be at least 32 characters.');
  const key = Buffer.from(hkdfSync('sha256', secretKey, 'service-webhook-secrets', 'aes-256-gcm', 32));
  return {
    seal(plaintext) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, iv, cipher.getAuthTag(), ciphertext].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
    },
    open(sealed) {
      const [version, iv, tag, ciphertext] = sealed.split('.');
      if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new Error('Not a sealed secret.');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SealedSecretUnreadable();
      }
    },
    derive(purpose, input, bytes) {
      return Buffer.from(hkdfSync('sha256', secretKey, input, `service-derived:${purpose}`, bytes));
    },
  };
}

/**
 * A sealed value that does not open under this key: it was sealed under another SECRET_KEY (or the
 * data directory's key file), or altered. Not the client's fault and not a bug to retry: the error
 * mapper answers `503 service_unavailable` and logs `SEALED_SECRET_HINT` for the operator.
 */
export class SealedSecretUnreadable extends Error {
  override readonly name = 'SealedSecretUnreadable';
  constructor() {
    super('A secret sealed at rest does not open under this key.');
  }
}

/** The log line's message for SealedSecretUnreadable: the cause and the command that repairs it. */
export const SEALED_SECRET_HINT =
  'A secret stored sealed cannot be opened with this SECRET_KEY: it was sealed under another key (another SECRET_KEY, or the ' +
  'key file data/secret.key). Repair: stop every instance, run `service secret-key rotate` with OLD_SECRET_KEY set to the key ' +
  'it was sealed with and SECRET_KEY to the key in use, then start the instances again with that SECRET_KEY (docs/operations.md).';

/** A random key for a process that was given none (tests, in-memory stores): lost with the process. */
export function ephemeralSecretKey(): string {
  return randomBase62(48);
}
