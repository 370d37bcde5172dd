/**
 * @module Inbound webhooks of a workspace: creation (secret shown once), list, pause, resume,
 * revoke, and the lookup of a slug by the inbound route. Another workspace's webhook is
 * `404 not_found`, exactly like one that does not exist.
 */
import { STANDING_COLUMNS, standingColumns, standingOf, type WorkspaceStanding } from '../standing/index.ts';
import type { Clock } from '../../clock.ts';
import { fail } from '../../errors.ts';
import { newId } from '../../random.ts';
import type { Db } from '../../store/db.ts';
import { bool, columnsOf, date, int, nullable, oneOf, row, selectRow, selectRows, text } from '../../store/rows.ts';
import { type AuditContext, recordAudit } from '../audit/index.ts';
import { DEFAULT_SIGNATURE_HEADER } from '../webhooks/inbound-signature.ts';
import type { HmacAlgorithm } from '../webhooks/hmac.ts';
import { registerInboundRunHooks } from './run-hooks.ts';
import type { TableRow } from '../../../../../generated/db.ts';
import { newSigningSecret, type SecretBox } from '../webhooks/secret-box.ts';
import { checkTemplate } from '../webhooks/template.ts';
import { isAgentSlug } from '../../vocabulary/catalog.ts';
import { toAlias } from '../../vocabulary/alias.ts';
import { zInboundWebhook, type Schema } from '../../contract.ts';

/** The contract's InboundWebhook record. */
type InboundWebhook = Schema<'InboundWebhook'>;
type InboundWebhookStatus = InboundWebhook['status'];

/** The contract's CreateInboundWebhookRequest (defaults are applied here). */
type CreateInboundWebhookInput = Schema<'CreateInboundWebhookRequest'>;

/** What the inbound route needs to verify and route an event; the secret is opened only here. */
export interface InboundWebhookTarget {
  id: string;
  workspaceId: string;
  slug: string;
  secret: string;
  algorithm: HmacAlgorithm;
  signatureHeader: string;
  timestampRequired: boolean;
  requestsPerMinute: number;
  template: string | null;
  agentSlug: string;
  alias: string;
  /** Its workspace's standing: a suspended or unpaid workspace refuses its events. */
  standing: WorkspaceStanding;
}

const DEFAULT_INBOUND_RPM = 60;
const DEFAULT_INBOUND_AGENT = 'orchestrator';
const DEFAULT_INBOUND_ALIAS = 'Sonata';

/** A row of `inbound_webhooks` (generated/db.ts, from the migrations). */
type Row = TableRow<'inbound_webhooks'>;

/** The columns of `inbound_webhooks` (`SELECT *`, `RETURNING *`). */
const webhookColumns = columnsOf('inbound_webhooks', {
  id: text,
  workspace_id: text,
  slug: text,
  secret_encrypted: text,
  algorithm: oneOf(['sha256', 'sha512']),
  signature_header: text,
  timestamp_required: bool,
  requests_per_minute: int,
  template: nullable(text),
  agent_slug: text,
  alias: text,
  status: oneOf(['active', 'paused', 'revoked']),
  created_at: date,
  last_event_at: nullable(date),
  revoked_at: nullable(date),
});
const webhookRow = row(webhookColumns);
/** A webhook with its workspace's standing (an inbound request's target). */
const targetRow = row({ ...webhookColumns, ...standingColumns });

export interface InboundWebhookService {
  create(workspaceId: string, input: CreateInboundWebhookInput, audit?: AuditContext): Promise<InboundWebhook & { secret: string }>;
  list(workspaceId: string): Promise<InboundWebhook[]>;
  pause(workspaceId: string, slug: string, audit?: AuditContext): Promise<InboundWebhook>;
  resume(workspaceId: string, slug: string, audit?: AuditContext): Promise<InboundWebhook>;
  revoke(workspaceId: string, slug: string, audit?: AuditContext): Promise<InboundWebhook>;
  /** For the inbound route: unknown or revoked → `webhook_not_found`, paused → `webhook_unavailable`. */
  target(slug: string): Promise<InboundWebhookTarget>;
}

export function createInboundWebhookService(deps: { db: Db; clock: Clock; secretBox: SecretBox }): InboundWebhookService {
  const { db, clock, secretBox } = deps;
  // An inbound run's input is forgotten when the run ends; an interrupted one is queued again.
  registerInboundRunHooks();

  async function load(workspaceId: string, slug: string): Promise<Row> {
    const row = await selectRow(db, webhookRow, `SELECT * FROM inbound_webhooks WHERE slug = $1 AND workspace_id = $2`, [slug, workspaceId]);
    if (!row) throw fail('not_found', 'No such inbound webhook.');
    return row;
  }

  async function transition(workspaceId: string, slug: string, to: InboundWebhookStatus, audit: AuditContext | undefined): Promise<InboundWebhook> {
    const row = await load(workspaceId, slug);
    // Revoked is final; pausing a paused webhook (or resuming an active one) changes nothing.
    if (row.status === 'revoked') throw fail('not_found', 'This inbound webhook is revoked.');
    return db.transaction(async (tx) => {
      const updated = await selectRow(
        tx,
        webhookRow,
        `UPDATE inbound_webhooks SET status = $3, revoked_at = CASE WHEN $3 = 'revoked' THEN $4::timestamptz ELSE revoked_at END
          WHERE slug = $1 AND workspace_id = $2 RETURNING *`,
        [slug, workspaceId, to, clock.now()],
      );
      const action = to === 'paused' ? 'inbound_webhook.paused' : to === 'active' ? 'inbound_webhook.resumed' : 'inbound_webhook.revoked';
      await recordAudit(tx, audit, workspaceId, { action, target: { type: 'inbound_webhook', id: slug, label: slug } }, clock.now());
      return toRecord(updated!);
    });
  }

  return {
    async create(workspaceId, input, audit) {
      if (input.agentSlug !== undefined && !isAgentSlug(input.agentSlug))
        throw fail('invalid_body', "Invalid body field 'agentSlug': must be one of the workspace's agents.", { param: 'agentSlug' });
      if (input.template !== undefined) {
        const problem = checkTemplate(input.template);
        if (problem) throw fail('invalid_body', problem, { param: 'template' });
      }
      const secret = newSigningSecret();
      return db.transaction(async (tx) => {
        const row = await selectRow(
          tx,
          webhookRow,
          `INSERT INTO inbound_webhooks (id, workspace_id, slug, secret_encrypted, algorithm, signature_header,
           timestamp_required, requests_per_minute, template, agent_slug, alias, status, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'active', $12)
         ON CONFLICT (slug) DO NOTHING RETURNING *`,
          [
            newId('whk'),
            workspaceId,
            input.slug,
            secretBox.seal(secret),
            input.algorithm ?? 'sha256',
            input.signatureHeader ?? DEFAULT_SIGNATURE_HEADER,
            input.timestampRequired ?? false,
            input.requestsPerMinute ?? DEFAULT_INBOUND_RPM,
            input.template ?? null,
            input.agentSlug ?? DEFAULT_INBOUND_AGENT,
            input.alias ?? DEFAULT_INBOUND_ALIAS,
            clock.now(),
          ],
        );
        // Slugs are unique across the service (they are the URL); a taken one, even revoked, stays taken.
        if (!row) throw fail('invalid_body', `The slug '${input.slug}' is already taken.`, { param: 'slug' });
        const details = { agentSlug: row.agent_slug, alias: row.alias };
        await recordAudit(
          tx,
          audit,
          workspaceId,
          { action: 'inbound_webhook.created', target: { type: 'inbound_webhook', id: row.slug, label: row.slug }, details },
          clock.now(),
        );
        return { ...toRecord(row), secret };
      });
    },
    async list(workspaceId) {
      const rows = await selectRows(db, webhookRow, `SELECT * FROM inbound_webhooks WHERE workspace_id = $1 ORDER BY created_at DESC, slug`, [workspaceId]);
      return rows.map(toRecord);
    },
    pause: (workspaceId, slug, audit) => transition(workspaceId, slug, 'paused', audit),
    resume: (workspaceId, slug, audit) => transition(workspaceId, slug, 'active', audit),
    revoke: (workspaceId, slug, audit) => transition(workspaceId, slug, 'revoked', audit),
    async target(slug) {
      const row = await selectRow(
        db,
        targetRow,
        `SELECT h.*, ${STANDING_COLUMNS} FROM inbound_webhooks h JOIN workspaces w ON w.id = h.workspace_id WHERE h.slug = $1`,
        [slug],
      );
      if (!row || row.status === 'revoked') throw fail('webhook_not_found');
      if (row.status === 'paused') throw fail('webhook_unavailable', 'This webhook is paused.');
      return {
        id: row.id,
        workspaceId: row.workspace_id,
        slug: row.slug,
        secret: secretBox.open(row.secret_encrypted),
        algorithm: zInboundWebhook.shape.algorithm.parse(row.algorithm),
        signatureHeader: row.signature_header,
        timestampRequired: row.timestamp_required,
        requestsPerMinute: row.requests_per_minute,
        template: row.template,
        agentSlug: row.agent_slug,
        alias: row.alias,
        standing: standingOf(row),
      };
    },
  };
}

function toRecord(row: Row): InboundWebhook {
  return {
    slug: row.slug,
    agentSlug: row.agent_slug,
    alias: toAlias(row.alias),
    signatureHeader: row.signature_header,
    algorithm: zInboundWebhook.shape.algorithm.parse(row.algorithm),
    timestampRequired: row.timestamp_required,
    requestsPerMinute: row.requests_per_minute,
    template: row.template,
    status: zInboundWebhook.shape.status.parse(row.status),
    createdAt: row.created_at.toISOString(),
    lastEventAt: row.last_event_at ? row.last_event_at.toISOString() : null,
  };
}
