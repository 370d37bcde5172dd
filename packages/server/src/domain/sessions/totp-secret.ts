/**
 * @module TOTP secrets at rest. A code can only be checked with the secret itself, so it cannot be
 * hashed: it is sealed with the server's secret box (AES-256-GCM under SECRET_KEY or the data
 * directory's key file, as the webhook secrets are) and opened only to check a code.
 * `sealClearTotpSecrets` seals the rows an earlier version stored in clear, at every start.
 */
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import { row, selectRows, text } from '../../store/rows.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import { base32Encode, matchingStep } from './totp.ts';

/** Sealed values start with the box's version; a Base32 secret never contains a dot. */
const SEALED = /^v\d+\./;

export function openTotpSecret(box: SecretBox, stored: string): string {
  return SEALED.test(stored) ? box.open(stored) : stored;
}

/** Seals every TOTP secret still stored in clear; returns how many. Idempotent. */
export async function sealClearTotpSecrets(db: Db, box: SecretBox): Promise<number> {
  // totp_secret IS NOT NULL: the stored column is nullable, these rows are not.
  const clear = await selectRows(
    db,
    // Not null: the statement selects only set secrets.
    row({ id: text, totp_secret: text }),
    `SELECT id, totp_secret FROM users WHERE totp_secret IS NOT NULL AND totp_secret !~ '^v[0-9]+[.]'`,
  );
  for (const row of clear) {
    // Only if unchanged meanwhile: another instance starting at the same time may seal it first.
    await db.query(`UPDATE users SET totp_secret = $2 WHERE id = $1 AND totp_secret = $3`, [row.id, box.seal(row.totp_secret), row.totp_secret]);
  }
  return clear.length;
}

/**
 * The two-step secret a single-use link sets up (an invitation's new account, a reset of `totp` or `both`). The link
 * completes only once the person sends the first code of it, so the request that shows the secret and the one that
 * confirms it must find the same one: it is derived from the link's token under the server's key, nothing stored in
 * between (a link read later without the key tells nothing of it). Were the key rotated between the two requests,
 * the code would not match and the first request would show the secret under the new key.
 */
export function setupTotpSecret(box: SecretBox, token: string): string {
  return base32Encode(box.derive('totp-setup', token, 20));
}

/**
 * Checks the first code of the secret being set up. Confirming is not signing in: the account starts with no step
 * used, so the page that confirmed the code may sign in with it (once, as every code).
 * @throws not_authenticated when the code does not match
 */
export function confirmSetupCode(secret: string, code: string, now: Date): void {
  if (matchingStep(secret, code, now) === undefined) throw fail('not_authenticated', 'Email, password or code is incorrect.');
}
