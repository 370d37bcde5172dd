/**
 * @module First start of a deployment: a workspace, its admin (with TOTP) and a first API key
 * holding every scope that can be issued. What `service init` prints.
 */
import { type AuditContext, recordAudit } from '../audit/index.ts';
import type { Clock } from '../../clock.ts';
import { randomBase62 } from '../../random.ts';
import type { Db } from '../../store/db.ts';
import { selectRow, tableRow, text } from '../../store/rows.ts';
import { ISSUABLE_SCOPES, issueKey } from '../keys/index.ts';
import { createUser } from '../sessions/users.ts';
import { createWorkspace, getOperatorWorkspace } from './index.ts';
import type { Schema } from '../../contract.ts';
import { setPlan } from '../agents/settings.ts';
import type { PlanName } from '../../vocabulary/plans.ts';
import { createOperatorToken } from '../operators/index.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';

interface InitOptions {
  /** The operator's request that adds the workspace (its audit log's first event); none at first start. */
  audit?: AuditContext | undefined;
  workspaceName?: string;
  adminEmail?: string;
  /** Chosen by the caller, or 24 random base62 characters. */
  adminPassword?: string;
  /**
   * The deployment's first start (`service init`): refuse with AlreadyInitialised when a workspace
   * exists. Checked under a lock in the creating transaction, so two concurrent inits on any number
   * of processes create one workspace.
   */
  firstOnly?: boolean;
  /** Seals the admin's TOTP secret at rest. */
  secretBox: SecretBox;
  /** The plan to start on (the default plan when absent). */
  plan?: PlanName | undefined;
  /** Created before its payment: its credentials answer 402 payment_not_completed until it is recorded. */
  pendingPayment?: boolean | undefined;
  /** Also issue the deployment's operator token (the first start). */
  withOperatorToken?: boolean;
}

/** `service init` on a store that already has a workspace. */
export class AlreadyInitialised extends Error {
  override readonly name = 'AlreadyInitialised';
  constructor(readonly workspaceId: string) {
    super(`Already initialised (workspace ${workspaceId}).`);
  }
}

export interface InitResult {
  workspaceId: string;
  apiKey: string;
  admin: { email: string; password: string; totpSecret: string };
  /** Present when `withOperatorToken` was asked. */
  operatorToken?: string;
}

const DEFAULT_ADMIN_EMAIL = 'admin@example.com';

export async function initWorkspace(db: Db, clock: Clock, options: InitOptions): Promise<InitResult> {
  const password = options.adminPassword ?? randomBase62(24);
  return db.transaction(async (tx) => {
    if (options.firstOnly) {
      // Held until the transaction ends: a concurrent init waits here, then sees this workspace.
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('service-init'))`);
      const existing = await selectRow(tx, tableRow('workspaces', { id: text }), `SELECT id FROM workspaces ORDER BY created_at, id LIMIT 1`);
      if (existing) throw new AlreadyInitialised(existing.id);
    }
    const workspace = await createWorkspace(tx, clock, options.workspaceName ?? 'Default workspace', { pendingPayment: options.pendingPayment ?? false });
    if (options.plan) await setPlan(tx, clock, workspace.id, options.plan);
    const admin = await createUser(tx, clock, workspace.id, {
      email: options.adminEmail ?? DEFAULT_ADMIN_EMAIL,
      password,
      // The workspace's first admin owns it.
      role: 'owner',
      withTotp: true,
      secretBox: options.secretBox,
    });
    const key = await issueKey(tx, clock, workspace.id, {
      name: 'First key (init)',
      scopes: [...ISSUABLE_SCOPES],
    });
    const details = { plan: options.plan ?? null, owner: admin.email, firstKey: key.prefix };
    const target = { type: 'workspace' as const, id: workspace.id, label: options.workspaceName ?? 'Default workspace' };
    await recordAudit(tx, options.audit, workspace.id, { action: 'workspace.created', target, details }, clock.now());
    return {
      workspaceId: workspace.id,
      apiKey: key.secret,
      admin: { email: admin.email, password, totpSecret: admin.totpSecret! },
      ...(options.withOperatorToken ? { operatorToken: await createOperatorToken(tx, clock) } : {}),
    };
  });
}

/**
 * A workspace the operator adds (operator API, `service workspaces create`): its owner gets a placeholder
 * email when none is given. The answer is what `init --json` prints, plus the operator's view of it.
 */
export async function createCustomerWorkspace(
  db: Db,
  clock: Clock,
  secretBox: SecretBox,
  body: Schema<'CreateWorkspaceRequest'>,
  audit?: AuditContext,
): Promise<Schema<'WorkspaceCreated'>> {
  const { operatorToken: _none, ...created } = await initWorkspace(db, clock, {
    workspaceName: body.name,
    adminEmail: body.adminEmail ?? `owner-${randomBase62(8).toLowerCase()}@workspace.invalid`,
    plan: body.plan,
    pendingPayment: body.pendingPayment,
    secretBox,
    audit,
  });
  return { ...created, workspace: await getOperatorWorkspace(db, created.workspaceId) };
}
