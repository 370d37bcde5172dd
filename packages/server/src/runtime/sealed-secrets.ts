/**
 * @module The columns that hold a value sealed with the deployment's secret key, and the start-up
 * check that the key in use opens them (a wrong SECRET_KEY is refused before anything is served).
 */
import type { SecretBox } from '../domain/webhooks/secret-box.ts';
import type { Db } from '../store/db.ts';
import { row, selectRow, text } from '../store/rows.ts';

/** Every column that holds a sealed value: table, key column, sealed column. */
export const SEALED_COLUMNS = [
  ['webhook_destinations', 'id', 'secret_encrypted'],
  // The secret a rotation replaced, kept through its grace period (migration 0510).
  ['webhook_destinations', 'id', 'previous_secret_encrypted'],
  ['inbound_webhooks', 'id', 'secret_encrypted'],
  ['users', 'id', 'totp_secret'],
  // An integration's auth header value (migration 0540).
  ['integrations', 'id', 'auth_header_encrypted'],
  // A workspace's single sign-on client secret (migration 0560).
  ['sso_settings', 'workspace_id', 'client_secret_encrypted'],
] as const;

/** A sealed value as the start-up check reads one. */
const sealedValue = row({ sealed: text });

/**
 * The first column holding a sealed value that does not open under `box` (one value per column is
 * tried), or undefined. `serve` asks at start, so a wrong SECRET_KEY is said before anyone signs in.
 */
export async function unopenableSecret(db: Db, box: SecretBox): Promise<string | undefined> {
  for (const [table, , column] of SEALED_COLUMNS) {
    const found = await selectRow(db, sealedValue, `SELECT ${column} AS sealed FROM ${table} WHERE ${column} ~ '^v[0-9]+[.]' LIMIT 1`);
    if (found && !opens(box, found.sealed)) return `${table}.${column}`;
  }
  return undefined;
}

export function opens(box: SecretBox, sealed: string): boolean {
  try {
    box.open(sealed);
    return true;
  } catch {
    return false;
  }
}
