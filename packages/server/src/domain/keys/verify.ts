/**
 * @module Verifying a bearer secret: the key behind an `Authorization` header, from the verification cache
 * (cache.ts) while it is fresh, else from the store; `last_used_at` written at most once a minute per key.
 */
import type { Clock } from '../../clock.ts';
import { constantTimeEqual } from '../../crypto.ts';
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import { row, selectRows } from '../../store/rows.ts';
import { STANDING_COLUMNS, standingColumns, standingOf } from '../standing/index.ts';
import type { VerificationCache, VerifiedKey } from './cache.ts';
import { type KeyInvalidation, readKeysVersion } from './invalidation.ts';
import { keyColumns } from './record.ts';
import { hashSecret, isSecretShaped, visiblePrefix } from './secret.ts';

// last_used_at is informative; writing it once a minute per key keeps the hot path read-only.
const LAST_USED_RESOLUTION_MS = 60_000;
/** Stands for the version of hits cached while listening: every invalidation clears them all. */
const LISTENED = -1;

/** A key with its workspace's standing. */
const candidate = row({ ...keyColumns, ...standingColumns });

export interface KeyVerification {
  db: Db;
  clock: Clock;
  cache: VerificationCache;
  invalidation: Pick<KeyInvalidation, 'generation' | 'listening'>;
  /** Writes the key's `last_used_at` when it is due. */
  touch: (keyId: string, now: Date) => Promise<void>;
}

/**
 * The key behind an `Authorization` header value.
 * @throws missing_bearer when there is no bearer credential, api_key_not_found when no active
 *   key has its prefix, api_key_invalid when the prefix is known but the secret does not match
 */
export async function verifyKey(deps: KeyVerification, authorization: string | undefined): Promise<VerifiedKey> {
  const { db, cache, invalidation, touch } = deps;
  const secret = bearerToken(authorization);
  if (!secret) throw fail('missing_bearer', 'Send the header Authorization: Bearer <API key>.');
  if (!isSecretShaped(secret)) throw fail('api_key_not_found', 'Unknown, revoked or expired API key.');
  const now = deps.clock.now();
  const secretHash = hashSecret(secret);
  // A lookup that an invalidation overtakes is answered but not cached.
  const generation = invalidation.generation;
  const version = invalidation.listening ? LISTENED : await readKeysVersion(db);
  const cached = cache.get(secretHash, version, now);
  if (cached) {
    await touch(cached.keyId, now);
    return cached;
  }
  const candidates = await selectRows(
    db,
    candidate,
    `SELECT k.*, ${STANDING_COLUMNS} FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
      WHERE k.prefix = $1 AND k.revoked_at IS NULL AND k.expires_at > $2`,
    [visiblePrefix(secret), now],
  );
  if (candidates.length === 0) throw fail('api_key_not_found', 'Unknown, revoked or expired API key.');
  // Compare with every candidate so the time taken does not tell which one matched.
  let match: (typeof candidates)[number] | undefined;
  for (const row of candidates) if (constantTimeEqual(row.secret_hash, secretHash)) match = row;
  if (!match) throw fail('api_key_invalid', 'The API key does not verify.');
  const key: VerifiedKey = {
    keyId: match.id,
    workspaceId: match.workspace_id,
    scopes: match.scopes,
    expiresAt: match.expires_at,
    standing: standingOf(match),
  };
  if (invalidation.generation === generation) cache.set(secretHash, key, version, now);
  await touch(key.keyId, now);
  return key;
}

/** Writes a key's `last_used_at` at most once a minute (this instance's memory of the last write). */
export function lastUsedWriter(db: Db): (keyId: string, now: Date) => Promise<void> {
  const lastTouched = new Map<string, number>();
  return async (keyId, now) => {
    const last = lastTouched.get(keyId) ?? 0;
    if (now.getTime() - last < LAST_USED_RESOLUTION_MS) return;
    lastTouched.set(keyId, now.getTime());
    await db.query(`UPDATE api_keys SET last_used_at = $2 WHERE id = $1`, [keyId, now]);
  };
}

/** The token of `Bearer <token>`, or undefined when the header is absent or uses another scheme. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
}
