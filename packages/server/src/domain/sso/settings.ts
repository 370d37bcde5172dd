/**
 * @module A workspace's single sign-on settings (`sso_settings`, one row per workspace), set by its owner: the
 * identity provider's issuer (past the guard of webhook destinations), the client id and its secret (sealed with the
 * deployment's secret box, as webhook secrets and integrations' auth headers are, and never answered), the allowed
 * email domains (lower case), just-in-time membership and its role, and whether members must sign in this way.
 */
import type { Clock } from '../../clock.ts';
import type { Schema } from '../../contract.ts';
import { fail } from '../../errors.ts';
import type { Db } from '../../store/db.ts';
import { bool, columnsOf, date, oneOf, row, selectRow, selectRows, tableRow, text, textArray } from '../../store/rows.ts';
import { type AuditContext, recordAudit } from '../audit/index.ts';
import { guardDestinationUrl } from '../destinations/service.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import type { DestinationPolicy } from '../webhooks/ssrf-guard.ts';

/** The panel's page the identity provider sends the browser back to, on the panel's own address. */
export const REDIRECT_PATH = '/panel/sso/callback';

export type SsoSettings = Schema<'SsoSettings'>;
export type SsoSettingsUpdate = Schema<'SsoSettingsUpdate'>;

const settingsRow = row(
  columnsOf('sso_settings', {
    workspace_id: text,
    issuer: text,
    client_id: text,
    client_secret_encrypted: text,
    allowed_domains: textArray,
    jit_membership: bool,
    default_role: oneOf(['member', 'admin'] as const),
    sso_required: bool,
    updated_at: date,
  }),
);
export type SettingsRow = ReturnType<typeof settingsRow>;

const COLUMNS = 'workspace_id, issuer, client_id, client_secret_encrypted, allowed_domains, jit_membership, default_role, sso_required, updated_at';

/** The settings as the API answers them: never the secret. */
export function toSettings(found: SettingsRow): SsoSettings {
  return {
    issuer: found.issuer,
    clientId: found.client_id,
    clientSecretSet: true,
    allowedDomains: found.allowed_domains,
    jitMembership: found.jit_membership,
    defaultRole: found.default_role,
    ssoRequired: found.sso_required,
    redirectPath: REDIRECT_PATH,
    updatedAt: found.updated_at.toISOString(),
  };
}

export async function readSettings(db: Db, workspaceId: string): Promise<SettingsRow | undefined> {
  return selectRow(db, settingsRow, `SELECT ${COLUMNS} FROM sso_settings WHERE workspace_id = $1`, [workspaceId]);
}

/** The settings that sign in addresses of `domain` (lower case), oldest first. */
export async function settingsForDomain(db: Db, domain: string): Promise<SettingsRow[]> {
  return selectRows(db, settingsRow, `SELECT ${COLUMNS} FROM sso_settings WHERE allowed_domains @> ARRAY[$1]::text[] ORDER BY created_at, workspace_id`, [
    domain,
  ]);
}

/** Only an owner sets up single sign-on (middleware/auth already refused members and admins without two-step). */
export function requireOwner(role: string): void {
  if (role !== 'owner') throw fail('role_forbidden', 'Only an owner of the workspace manages its single sign-on.');
}

/**
 * Creates or replaces the settings, audited as `sso.configured` (the first time) or `sso.updated`.
 * @throws invalid_body for a refused issuer (`param: issuer`) or a missing client secret the first time
 */
export async function writeSettings(
  deps: { db: Db; clock: Clock; secretBox: SecretBox; policy: DestinationPolicy },
  workspaceId: string,
  update: SsoSettingsUpdate,
  audit: AuditContext | undefined,
): Promise<SsoSettings> {
  const { db, clock, secretBox } = deps;
  await guardDestinationUrl(update.issuer, deps.policy, 'issuer');
  const before = await readSettings(db, workspaceId);
  if (!before && update.clientSecret === undefined) {
    throw fail('invalid_body', "'clientSecret' is required when single sign-on is set up the first time", { param: 'clientSecret' });
  }
  const sealed = update.clientSecret !== undefined ? secretBox.seal(update.clientSecret) : before!.client_secret_encrypted;
  const domains = [...new Set(update.allowedDomains.map((d) => d.toLowerCase()))];
  const now = clock.now();
  await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO sso_settings (workspace_id, issuer, client_id, client_secret_encrypted, allowed_domains, jit_membership, default_role, sso_required, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5::text[], $6, $7, $8, $9, $9)
       ON CONFLICT (workspace_id) DO UPDATE SET issuer = EXCLUDED.issuer, client_id = EXCLUDED.client_id,
         client_secret_encrypted = EXCLUDED.client_secret_encrypted, allowed_domains = EXCLUDED.allowed_domains,
         jit_membership = EXCLUDED.jit_membership, default_role = EXCLUDED.default_role, sso_required = EXCLUDED.sso_required,
         updated_at = EXCLUDED.updated_at`,
      [workspaceId, update.issuer, update.clientId, sealed, domains, update.jitMembership, update.defaultRole, update.ssoRequired, now],
    );
    await recordAudit(
      tx,
      audit,
      workspaceId,
      {
        action: before ? 'sso.updated' : 'sso.configured',
        target: { type: 'workspace', id: workspaceId, label: update.issuer },
        details: {
          issuer: update.issuer,
          allowedDomains: domains,
          jitMembership: update.jitMembership,
          defaultRole: update.defaultRole,
          ssoRequired: update.ssoRequired,
          ...(before && update.clientSecret !== undefined ? { clientCredentialReplaced: true } : {}),
        },
      },
      now,
    );
  });
  const after = await readSettings(db, workspaceId);
  return toSettings(after!);
}

/** The issuer of the settings a removal deleted (for its audit line). */
const removedIssuer = tableRow('sso_settings', { issuer: text });

/** @throws not_found when the workspace has no single sign-on */
export async function removeSettings(deps: { db: Db; clock: Clock }, workspaceId: string, audit: AuditContext | undefined): Promise<void> {
  const { db, clock } = deps;
  await db.transaction(async (tx) => {
    const removed = await selectRows(tx, removedIssuer, `DELETE FROM sso_settings WHERE workspace_id = $1 RETURNING issuer`, [workspaceId]);
    if (removed.length === 0) throw fail('not_found', 'This workspace has no single sign-on.');
    await recordAudit(
      tx,
      audit,
      workspaceId,
      { action: 'sso.removed', target: { type: 'workspace', id: workspaceId, label: removed[0]!.issuer } },
      clock.now(),
    );
  });
}
