/**
 * @module API keys of a workspace: issue, list, rotate, revoke, and verify a bearer secret.
 * Every read and write is scoped by workspace: another workspace's key is simply not found.
 */
import type { Clock } from '../../clock.ts';
import { constantTimeEqual } from '../../crypto.ts';
import { fail } from '../../errors.ts';
import { newId } from '../../random.ts';
import type { TableRow } from '../../../../../generated/db.ts';
import type { Db, Tx } from '../../store/db.ts';
import { VerificationCache, type VerifiedKey } from './cache.ts';
import { KEYS_CHANNEL, KeyInvalidation } from './invalidation.ts';
import { notifySql } from '../../store/listen.ts';
import { STANDING_COLUMNS, type StandingColumns, standingOf } from '../standing/index.ts';
import { validateScopes } from './scopes.ts';
import { generateSecret, hashSecret, isSecretShaped, visiblePrefix } from './secret.ts';
import type { Schema } from '../../contract.ts';
import { type AuditContext, recordAudit } from '../audit/index.ts';

export type { VerifiedKey };

type ApiKeyStatus = ApiKeyRecord['status'];

/** The key record of the contract: never the secret, never the hash. */
/** A key as the contract shows it (`ApiKey`). */
export type ApiKeyRecord = Schema<'ApiKey'>;

/** A key just created or rotated: the record plus the secret, shown this once. */
interface IssuedKey extends ApiKeyRecord {
  secret: string;
}

interface NewKey {
  name: string;
  scopes: readonly string[];
  expiresInDays?: number | undefined;
}

const DEFAULT_EXPIRY_DAYS = 365;
const MAX_EXPIRY_DAYS = 730;
const DAY_MS = 86_400_000;
// last_used_at is informative; writing it once a minute per key keeps the hot path read-only.
const LAST_USED_RESOLUTION_MS = 60_000;

/** A row of `api_keys` (generated/db.ts, from the migrations). */
type KeyRow = TableRow<'api_keys'>;

export type KeyService = ReturnType<typeof createKeyService>;

interface KeyServiceDeps {
  db: Db;
  clock: Clock;
  cacheTtlMs?: number;
  /**
   * Listen for invalidations (domain/keys/invalidation.ts), so cache hits need no query. The app's
   * service does; a one-off command (CLI, first start) reads the version on each hit instead.
   */
  listen?: boolean;
}

/** Stands for the version of hits cached while listening: every invalidation clears them all. */
const LISTENED = -1;

export function createKeyService(deps: KeyServiceDeps) {
  const { db, clock } = deps;
  const cache = new VerificationCache(deps.cacheTtlMs);
  const invalidation = new KeyInvalidation(() => cache.clear());
  const lastTouched = new Map<string, number>();
  // Until the listener is up, hits read the version; a store without LISTEN stays that way.
  const started = deps.listen ? invalidation.start(db).catch(() => {}) : Promise.resolve();

  const insertKey = (tx: Tx, workspaceId: string, input: { name: string; scopes: string[]; days: number }) => insertKeyRow(tx, clock, workspaceId, input);

  return {
    /** Issues a key; the secret is in the answer and nowhere else. */
    async create(workspaceId: string, input: NewKey, audit?: AuditContext): Promise<IssuedKey> {
      const valid = validKey(input);
      return db.transaction(async (tx) => {
        const key = await insertKey(tx, workspaceId, valid);
        await recordAudit(
          tx,
          audit,
          workspaceId,
          { action: 'key.created', target: keyTarget(key), details: { prefix: key.prefix, scopes: key.scopes } },
          clock.now(),
        );
        return key;
      });
    },

    async list(workspaceId: string): Promise<ApiKeyRecord[]> {
      const rows = await db.query<KeyRow>(`SELECT * FROM api_keys WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC`, [workspaceId]);
      const now = clock.now();
      return rows.map((row) => toRecord(row, now));
    },

    /** Soft delete, effective at once on every instance. Revoking a revoked key changes nothing. */
    async revoke(workspaceId: string, id: string, audit?: AuditContext): Promise<ApiKeyRecord> {
      const now = clock.now();
      const record = await db.transaction(async (tx) => {
        const [row] = await tx.query<KeyRow>(`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $3) WHERE id = $1 AND workspace_id = $2 RETURNING *`, [
          id,
          workspaceId,
          now,
        ]);
        if (!row) throw fail('not_found', 'No API key with this id.');
        await recordAudit(tx, audit, workspaceId, { action: 'key.revoked', target: keyTarget(row), details: { prefix: row.prefix } }, now);
        return { record: toRecord(row, now), change: await invalidateKeyCaches(tx) };
      });
      await invalidation.settle(db, record.change.version, record.change.at);
      return record.record;
    },

    /** A new key with the same name, scopes and lifetime; the old one is revoked in the same transaction. */
    async rotate(workspaceId: string, id: string, audit?: AuditContext): Promise<IssuedKey> {
      const now = clock.now();
      const issued = await db.transaction(async (tx) => {
        const [old] = await tx.query<KeyRow>(`SELECT * FROM api_keys WHERE id = $1 AND workspace_id = $2 FOR UPDATE`, [id, workspaceId]);
        if (!old) throw fail('not_found', 'No API key with this id.');
        if (toRecord(old, now).status !== 'active') throw fail('not_found', 'No active API key with this id.');
        const days = Math.max(1, Math.round((old.expires_at.getTime() - old.created_at.getTime()) / DAY_MS));
        const fresh = await insertKey(tx, workspaceId, { name: old.name, scopes: old.scopes, days });
        await tx.query(`UPDATE api_keys SET revoked_at = $2, replaced_by = $3 WHERE id = $1`, [id, now, fresh.id]);
        const details = { replacedBy: fresh.id, prefix: old.prefix, newPrefix: fresh.prefix };
        await recordAudit(tx, audit, workspaceId, { action: 'key.rotated', target: keyTarget(old), details }, now);
        return { fresh, change: await invalidateKeyCaches(tx) };
      });
      await invalidation.settle(db, issued.change.version, issued.change.at);
      return issued.fresh;
    },

    /**
     * After a change of a workspace's standing committed on this instance (domain/workspaces): answer
     * only once this instance's listener heard it, as every other instance's did at that commit.
     */
    async settle(): Promise<void> {
      const [current] = await db.query<{ version: number; at: Date }>(`SELECT version, clock_timestamp() AS at FROM api_key_revocations WHERE id = 1`);
      await invalidation.settle(db, current!.version, current!.at);
    },

    /** Whether cache hits currently rely on the listener (no version read). */
    listening: () => invalidation.listening,

    /** Resolves once the listener is set up (or failed to be: then hits read the version). */
    ready: () => started,

    /**
     * The key behind an `Authorization` header value.
     * @throws missing_bearer when there is no bearer credential, api_key_not_found when no active
     *   key has its prefix, api_key_invalid when the prefix is known but the secret does not match
     */
    async verify(authorization: string | undefined): Promise<VerifiedKey> {
      const secret = bearerToken(authorization);
      if (!secret) throw fail('missing_bearer', 'Send the header Authorization: Bearer <API key>.');
      if (!isSecretShaped(secret)) throw fail('api_key_not_found', 'Unknown, revoked or expired API key.');
      const now = clock.now();
      const secretHash = hashSecret(secret);
      // A lookup that an invalidation overtakes is answered but not cached.
      const generation = invalidation.generation;
      const version = invalidation.listening ? LISTENED : await currentVersion();
      const cached = cache.get(secretHash, version, now);
      if (cached) {
        await touch(cached.keyId, now);
        return cached;
      }
      const candidates = await db.query<KeyRow & StandingColumns>(
        `SELECT k.*, ${STANDING_COLUMNS} FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
          WHERE k.prefix = $1 AND k.revoked_at IS NULL AND k.expires_at > $2`,
        [visiblePrefix(secret), now],
      );
      if (candidates.length === 0) throw fail('api_key_not_found', 'Unknown, revoked or expired API key.');
      // Compare with every candidate so the time taken does not tell which one matched.
      let match: (KeyRow & StandingColumns) | undefined;
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
    },
  };

  async function currentVersion(): Promise<number> {
    const [current] = await db.query<Pick<TableRow<'api_key_revocations'>, 'version'>>(`SELECT version FROM api_key_revocations WHERE id = 1`);
    return current!.version;
  }

  async function touch(keyId: string, now: Date) {
    const last = lastTouched.get(keyId) ?? 0;
    if (now.getTime() - last < LAST_USED_RESOLUTION_MS) return;
    lastTouched.set(keyId, now.getTime());
    await db.query(`UPDATE api_keys SET last_used_at = $2 WHERE id = $1`, [keyId, now]);
  }
}

/** Issues a key in the caller's transaction (a workspace's first key, issued with the workspace); the secret is in the answer and nowhere else. */
export async function issueKey(tx: Tx, clock: Clock, workspaceId: string, input: NewKey): Promise<IssuedKey> {
  return insertKeyRow(tx, clock, workspaceId, validKey(input));
}

function validKey(input: NewKey): { name: string; scopes: string[]; days: number } {
  const name = validateName(input.name);
  const scopes = validateScopes(input.scopes);
  const days = validateExpiry(input.expiresInDays ?? DEFAULT_EXPIRY_DAYS);
  return { name, scopes, days };
}

async function insertKeyRow(tx: Tx, clock: Clock, workspaceId: string, input: { name: string; scopes: string[]; days: number }): Promise<IssuedKey> {
  const secret = generateSecret();
  const now = clock.now();
  const [row] = await tx.query<KeyRow>(
    `INSERT INTO api_keys (id, workspace_id, name, prefix, secret_hash, scopes, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [newId('key'), workspaceId, input.name, visiblePrefix(secret), hashSecret(secret), input.scopes, now, new Date(now.getTime() + input.days * DAY_MS)],
  );
  return { ...toRecord(row!, now), secret };
}

/**
 * In the caller's transaction, bumps the version that every cached key verification was made under
 * and notifies every instance's listener of it at commit (domain/keys/invalidation.ts): a revoke, a
 * rotation, or a change of a workspace's standing. Resolves to the new version and the store's time.
 */
export async function invalidateKeyCaches(tx: Tx): Promise<{ version: number; at: Date }> {
  const [row] = await tx.query<{ version: number; at: Date }>(
    `WITH bumped AS (UPDATE api_key_revocations SET version = version + 1 WHERE id = 1 RETURNING version)
     SELECT version, clock_timestamp() AS at, ${notifySql(KEYS_CHANNEL, 'version::text')} FROM bumped`,
  );
  return row!;
}

/** The token of `Bearer <token>`, or undefined when the header is absent or uses another scheme. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
}

/** A key as the audit log names it: its id and name (the prefix goes in the details). */
function keyTarget(key: { id: string; name: string }) {
  return { type: 'api_key' as const, id: key.id, label: key.name };
}

function toRecord(row: KeyRow, now: Date): ApiKeyRecord {
  const status: ApiKeyStatus = row.revoked_at ? 'revoked' : row.expires_at <= now ? 'expired' : 'active';
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    status,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

function validateName(name: string): string {
  if (typeof name !== 'string' || name.length < 1 || name.length > 100) {
    throw fail('invalid_body', "'name' must be 1 to 100 characters");
  }
  return name;
}

function validateExpiry(days: number): number {
  if (!Number.isInteger(days) || days < 1 || days > MAX_EXPIRY_DAYS) {
    throw fail('invalid_body', "'expiresInDays' must be an integer from 1 to 730");
  }
  return days;
}
