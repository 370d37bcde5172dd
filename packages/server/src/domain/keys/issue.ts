/**
 * @module Issuing a key: its name, scopes and lifetime checked, its secret generated and shown this once (only
 * its hash and visible prefix are stored).
 */
import type { Clock } from '../../clock.ts';
import { fail } from '../../errors.ts';
import { newId } from '../../random.ts';
import type { Db, Tx } from '../../store/db.ts';
import { selectRow } from '../../store/rows.ts';
import { type AuditContext, recordAudit } from '../audit/index.ts';
import { type IssuedKey, keyRow, keyTarget, toRecord } from './record.ts';
import { validateScopes } from './scopes.ts';
import { generateSecret, hashSecret, visiblePrefix } from './secret.ts';

export interface NewKey {
  name: string;
  scopes: readonly string[];
  expiresInDays?: number | undefined;
}

/** A key's name, scopes and lifetime in days, checked. */
export interface ValidKey {
  name: string;
  scopes: string[];
  days: number;
}

const DEFAULT_EXPIRY_DAYS = 365;
const MAX_EXPIRY_DAYS = 730;
export const DAY_MS = 86_400_000;

/** Issues a key; the secret is in the answer and nowhere else. */
export async function createKey(deps: { db: Db; clock: Clock }, workspaceId: string, input: NewKey, audit?: AuditContext): Promise<IssuedKey> {
  const { db, clock } = deps;
  const valid = validKey(input);
  return db.transaction(async (tx) => {
    const key = await insertKeyRow(tx, clock, workspaceId, valid);
    await recordAudit(
      tx,
      audit,
      workspaceId,
      { action: 'key.created', target: keyTarget(key), details: { prefix: key.prefix, scopes: key.scopes } },
      clock.now(),
    );
    return key;
  });
}

/** Issues a key in the caller's transaction (a workspace's first key, issued with the workspace); the secret is in the answer and nowhere else. */
export async function issueKey(tx: Tx, clock: Clock, workspaceId: string, input: NewKey): Promise<IssuedKey> {
  return insertKeyRow(tx, clock, workspaceId, validKey(input));
}

function validKey(input: NewKey): ValidKey {
  const name = validateName(input.name);
  const scopes = validateScopes(input.scopes);
  const days = validateExpiry(input.expiresInDays ?? DEFAULT_EXPIRY_DAYS);
  return { name, scopes, days };
}

/** Inserts the key with a new secret; answers its record and the secret. */
export async function insertKeyRow(tx: Tx, clock: Clock, workspaceId: string, input: ValidKey): Promise<IssuedKey> {
  const secret = generateSecret();
  const now = clock.now();
  const row = await selectRow(
    tx,
    keyRow,
    `INSERT INTO api_keys (id, workspace_id, name, prefix, secret_hash, scopes, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [newId('key'), workspaceId, input.name, visiblePrefix(secret), hashSecret(secret), input.scopes, now, new Date(now.getTime() + input.days * DAY_MS)],
  );
  return { ...toRecord(row!, now), secret };
}

function validateName(name: string): string {
  if (typeof name !== 'string' || name.length < 1 || name.length > 100) {
    throw fail('invalid_body', "'name' must be 1 to 100 characters", { param: 'name' });
  }
  return name;
}

function validateExpiry(days: number): number {
  if (!Number.isInteger(days) || days < 1 || days > MAX_EXPIRY_DAYS) {
    throw fail('invalid_body', "'expiresInDays' must be an integer from 1 to 730", { param: 'expiresInDays' });
  }
  return days;
}
