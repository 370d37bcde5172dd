/**
 * @module Idempotency-Key of the invocation routes: per credential, for 24 hours, the first request's
 * run answers every retry. The key is claimed in the same transaction that creates the run, so two
 * concurrent retries cannot both create one.
 */
import { createHash } from 'node:crypto';
import { fail } from '../../errors.ts';
import type { Db, Tx } from '../../store/db.ts';
import { deleteClaim, insertClaim, readClaim } from './queries/idempotency.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface IdempotencyClaim {
  /** The credential that sent the request (`key_…`). */
  credentialId: string;
  key: string;
  /** From `requestHash`: the operation and its body. */
  requestHash: string;
}

/** A stable hash of what the request asks for; key order in the body does not matter. */
export function requestHash(operation: string, body: unknown): string {
  return createHash('sha256')
    .update(`${operation}\n${canonicalJson(body)}`)
    .digest('hex');
}

/**
 * The run an earlier request with this key created, or null when the key is new (or expired, in
 * which case the old claim is dropped). A key reused with another body is `400 invalid_request`.
 */
export async function findClaim(db: Db, claim: IdempotencyClaim, now: Date): Promise<string | null> {
  const stored = await readClaim(db, claim.credentialId, claim.key);
  if (!stored) return null;
  if (stored.expiresAt.getTime() <= now.getTime()) {
    await deleteClaim(db, claim.credentialId, claim.key);
    return null;
  }
  if (stored.requestHash !== claim.requestHash) {
    throw fail('invalid_request', "'idempotency-key' was already used with a different request.", { param: 'idempotency-key' });
  }
  return stored.runId;
}

/** Claims the key for `runId`; false when a concurrent request claimed it first. */
export async function claimKey(tx: Tx, claim: IdempotencyClaim, workspaceId: string, runId: string, now: Date): Promise<boolean> {
  return insertClaim(tx, { ...claim, workspaceId, runId, now, expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS) });
}

/** Whether `start_runs` failed because a concurrent request claimed the key first (it undid everything). */
export function claimLost(err: unknown): boolean {
  return err instanceof Error && err.message.includes('idempotency_claim_lost');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
