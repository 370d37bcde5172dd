/**
 * @module API keys of a workspace: issue (issue.ts), list (record.ts), rotate (rotate.ts), revoke (revoke.ts),
 * and verify a bearer secret (verify.ts). Every read and write is scoped by workspace: another workspace's key
 * is simply not found. The service holds what its use cases share: the verification cache and the listener of
 * invalidations (invalidation.ts).
 */
import type { Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';
import type { AuditContext } from '../audit/index.ts';
import { VerificationCache, type VerifiedKey } from './cache.ts';
import { KeyInvalidation, settleKeyCaches } from './invalidation.ts';
import { createKey, type NewKey } from './issue.ts';
import { type ApiKeyRecord, type IssuedKey, listKeys } from './record.ts';
import { revokeKey } from './revoke.ts';
import { rotateKey } from './rotate.ts';
import { lastUsedWriter, verifyKey } from './verify.ts';

export type { VerifiedKey };

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

export function createKeyService(deps: KeyServiceDeps) {
  const { db, clock } = deps;
  const cache = new VerificationCache(deps.cacheTtlMs);
  const invalidation = new KeyInvalidation(() => cache.clear());
  // Until the listener is up, hits read the version; a store without LISTEN stays that way.
  const started = deps.listen ? invalidation.start(db).catch(() => {}) : Promise.resolve();
  const changes = { db, clock, invalidation };
  const verification = { db, clock, cache, invalidation, touch: lastUsedWriter(db) };

  return {
    /** Issues a key; the secret is in the answer and nowhere else. */
    create: (workspaceId: string, input: NewKey, audit?: AuditContext): Promise<IssuedKey> => createKey(deps, workspaceId, input, audit),

    list: (workspaceId: string): Promise<ApiKeyRecord[]> => listKeys(deps, workspaceId),

    /** Soft delete, effective at once on every instance. Revoking a revoked key changes nothing. */
    revoke: (workspaceId: string, id: string, audit?: AuditContext): Promise<ApiKeyRecord> => revokeKey(changes, workspaceId, id, audit),

    /** A new key with the same name, scopes and lifetime; the old one is revoked in the same transaction. */
    rotate: (workspaceId: string, id: string, audit?: AuditContext): Promise<IssuedKey> => rotateKey(changes, workspaceId, id, audit),

    /**
     * After a change of a workspace's standing committed on this instance (domain/workspaces): answer
     * only once this instance's listener heard it, as every other instance's did at that commit.
     */
    settle: (): Promise<void> => settleKeyCaches(db, invalidation),

    /** Whether cache hits currently rely on the listener (no version read). */
    listening: () => invalidation.listening,

    /** Resolves once the listener is set up (or failed to be: then hits read the version). */
    ready: () => started,

    /**
     * The key behind an `Authorization` header value.
     * @throws missing_bearer when there is no bearer credential, api_key_not_found when no active
     *   key has its prefix, api_key_invalid when the prefix is known but the secret does not match
     */
    verify: (authorization: string | undefined): Promise<VerifiedKey> => verifyKey(verification, authorization),
  };
}
