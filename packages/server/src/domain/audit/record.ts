/**
 * @module Recording an audit event, always in the caller's transaction (a `Tx`): the event commits with the change
 * it describes, or neither does. Who acted comes from the request's `AuditContext` (built once per request from the
 * credential, the client address and the request id; never from a body); the actor's label (an email, a key's
 * prefix) is read by the same statement, as it is at the change.
 *
 * The guard: `details` never holds a secret. A value shaped like one of the service's secrets or tokens, or a key
 * named like one (`secret`, `token`, `password`), makes the recording throw, and the change with it: a programming
 * error, caught by the tests, never a secret at rest. Labels come from people (a key's name): a secret-shaped part
 * of one is masked rather than refused.
 */
import type { Schema } from '../../contract.ts';
import { newId } from '../../random.ts';
import type { Db, Tx } from '../../store/db.ts';

export type AuditAction = Schema<'AuditAction'>;
export type AuditTarget = { type: Schema<'AuditTarget'>['type']; id: string; label?: string | null | undefined };
/** Who acted, as the credential proved it; the label is read from the store when absent. */
export type AuditActor = { type: Schema<'AuditActor'>['type']; id: string; label?: string | undefined };

/** What a request knows of its caller, built once per request (routes/handler.ts `auditOf`). */
export interface AuditContext {
  /** Null on a route without a credential (accepting an invitation, redeeming a reset): the service names the account. */
  actor: AuditActor | null;
  /** The client address as the rate limiter keys it (TRUST_PROXY applies), null when unknown. */
  address: string | null;
  requestId: string | null;
}

/**
 * The operator at the machine's command line (`pnpm service …` on the store directly): no credential, no address, no
 * request id, but a person's change all the same.
 */
export const COMMAND_LINE: AuditContext = { actor: { type: 'operator', id: 'cli', label: 'command line' }, address: null, requestId: null };

export interface AuditEntry {
  action: AuditAction;
  target: AuditTarget;
  details?: Record<string, unknown>;
  /** Overrides the context's actor (a route without a credential, where the account is known only to the service). */
  actor?: AuditActor;
}

const MAX_DETAILS = 16;
const MAX_LABEL = 2048;
/** The service's secrets and tokens by their prefixes, and long random draws (session and CSRF tokens). */
const SECRET_SHAPED = [
  /service_sk_live_[0-9A-Za-z]{20,}/,
  /service_(?:mcp|inv|rst)_[0-9A-Za-z]{16,}/,
  /whsec_[0-9A-Za-z]{16,}/,
  /(?<![0-9A-Za-z_])[0-9A-Za-z]{39,}(?![0-9A-Za-z_])/,
];
const SECRET_NAMES = /secret|token|password|totp/i;

/** Whether a text holds something shaped like one of the service's secrets or tokens. */
export function looksSecret(text: string): boolean {
  return SECRET_SHAPED.some((pattern) => pattern.test(text));
}

/** @throws Error when `details` holds a secret-shaped value or key, or too many keys */
export function assertNoSecret(details: Record<string, unknown>): void {
  if (Object.keys(details).length > MAX_DETAILS) throw new Error(`audit details hold more than ${MAX_DETAILS} keys`);
  const visit = (value: unknown, path: string): void => {
    if (typeof value === 'string') {
      if (looksSecret(value)) throw new Error(`audit details refused: ${path} is shaped like a secret`);
    } else if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) visit(item, `${path}[${i}]`);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        if (SECRET_NAMES.test(key)) throw new Error(`audit details refused: ${path}.${key} is named like a secret`);
        visit(item, `${path}.${key}`);
      }
    }
  };
  visit(details, 'details');
}

function safeLabel(label: string | null | undefined): string | null {
  if (label === null || label === undefined) return null;
  let text = label.slice(0, MAX_LABEL);
  for (const pattern of SECRET_SHAPED) text = text.replace(new RegExp(pattern.source, 'g'), '[redacted]');
  return text;
}

// The actor's label as it is now: the label given, else the user's email or the key's prefix, else 'operator' for the
// operator, else the id. Written out for each statement's numbering (placeholders are never built by hand).
const ACTOR_LABEL_4 = `COALESCE($6::text,
    (SELECT u.email FROM users u WHERE $4::text = 'user' AND u.id = $5::text),
    (SELECT k.prefix FROM api_keys k WHERE $4::text = 'api_key' AND k.id = $5::text),
    CASE WHEN $4::text = 'operator' THEN 'operator' END, $5::text)`;
const ACTOR_LABEL_3 = `COALESCE($5::text,
    (SELECT u.email FROM users u WHERE $3::text = 'user' AND u.id = $4::text),
    (SELECT k.prefix FROM api_keys k WHERE $3::text = 'api_key' AND k.id = $4::text),
    CASE WHEN $3::text = 'operator' THEN 'operator' END, $4::text)`;

const COLUMNS = `id, workspace_id, action, actor_type, actor_id, actor_label, target_type, target_id, target_label, address, request_id, details, created_at`;

/** Records one event in the workspace, in the caller's transaction (nothing without a context: a change made by the CLI). */
export async function recordAudit(tx: Tx, context: AuditContext | undefined, workspaceId: string, entry: AuditEntry, now: Date): Promise<void> {
  const params = auditParams(context, entry);
  if (!params) return;
  await tx.query(
    `INSERT INTO audit_events (${COLUMNS})
     VALUES ($1, $2, $3, $4, $5, ${ACTOR_LABEL_4}, $7, $8, $9, $10, $11, $12::jsonb, $13)`,
    [newId('aud'), workspaceId, ...params, now],
  );
}

/**
 * Records one event in every workspace the user belongs to (an operator's reset, its redemption, a failed sign-in),
 * in one statement: a user of no workspace, or none at all (`userId` null), records nothing, in the same time. A
 * failed sign-in has no change to commit with (its attempt was counted before it was judged): it may run on the store.
 */
export async function recordAuditForUser(tx: Db | Tx, context: AuditContext | undefined, userId: string | null, entry: AuditEntry, now: Date): Promise<void> {
  const params = auditParams(context, entry);
  if (!params) return;
  await tx.query(
    `INSERT INTO audit_events (${COLUMNS})
     SELECT 'aud_' || substr(md5(random()::text || clock_timestamp()::text || m.workspace_id), 1, 24), m.workspace_id,
            $2, $3, $4, ${ACTOR_LABEL_3}, $6, $7, $8, $9, $10, $11::jsonb, $12
       FROM memberships m WHERE m.user_id = $1::text`,
    [userId, ...params, now],
  );
}

function auditParams(context: AuditContext | undefined, entry: AuditEntry): unknown[] | null {
  // A change made without a request (a command of the CLI, first start) has no context: nothing is recorded.
  if (!context) return null;
  const actor = entry.actor ?? context.actor;
  // No credential and no account named: nobody to record (a route without a caller never gets here).
  if (!actor) return null;
  const details = entry.details ?? {};
  assertNoSecret(details);
  return [
    entry.action,
    actor.type,
    actor.id,
    safeLabel(actor.label),
    entry.target.type,
    entry.target.id,
    safeLabel(entry.target.label),
    context.address,
    context.requestId,
    JSON.stringify(details),
  ];
}
