/**
 * @module Short-lived cache of successful key verifications, so a busy key is not looked up and
 * hashed on every request.
 *
 * Entries carry the revocation version they were made under. While the instance listens for
 * invalidations (invalidation.ts) every revoke, rotation or change of standing clears the cache and
 * a hit costs no query; while it does not, a hit is only good under the version read for the request.
 */
import type { WorkspaceStanding } from '../standing/index.ts';

export interface VerifiedKey {
  keyId: string;
  workspaceId: string;
  scopes: string[];
  expiresAt: Date;
  /** The workspace's standing when the key was looked up (a change of it drops the cache). */
  standing: WorkspaceStanding;
}

interface Entry {
  key: VerifiedKey;
  version: number;
  cachedAt: number;
}

export class VerificationCache {
  readonly #entries = new Map<string, Entry>();

  constructor(
    readonly ttlMs = 30_000,
    readonly maxEntries = 10_000,
  ) {}

  /** The cached key for this secret hash, if cached under `version`, younger than the TTL and unexpired. */
  get(secretHash: string, version: number, now: Date): VerifiedKey | undefined {
    const entry = this.#entries.get(secretHash);
    if (!entry) return undefined;
    const fresh = entry.version === version && now.getTime() - entry.cachedAt < this.ttlMs;
    if (fresh && entry.key.expiresAt > now) return entry.key;
    this.#entries.delete(secretHash);
    return undefined;
  }

  set(secretHash: string, key: VerifiedKey, version: number, now: Date): void {
    if (this.#entries.size >= this.maxEntries) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(secretHash, { key, version, cachedAt: now.getTime() });
  }

  clear(): void {
    this.#entries.clear();
  }
}
