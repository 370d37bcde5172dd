/**
 * @module The `integrations` table: a row's decoding, the contract's `Integration` record of it (never the auth
 * header's value), and the statements that change it.
 */
import type { TableRow } from '../../../../../generated/db.ts';
import type { Schema } from '../../contract.ts';
import { type Db, inTransaction, type Tx } from '../../store/db.ts';
import { bool, date, json, nullable, oneOf, selectRow, selectRows, tableRow, text } from '../../store/rows.ts';
import { notify } from '../../store/listen.ts';
import type { CachedTool } from './tool-names.ts';

/**
 * Notified with a workspace's id after every change of its integrations (any instance): the agent loop's tool
 * source holds each workspace's offered integrations in memory (tool-source.ts) and drops them then.
 */
export const INTEGRATIONS_CHANNEL = 'service_integrations';

/** This process's count of its own changes: its tool source drops what it holds at once, before the writer returns. */
let version = 0;
export function integrationsVersion(): number {
  return version;
}

/**
 * Tells every instance (when `tx` commits) and this process (at once) that a workspace's integrations changed: in the
 * writer's transaction, so a change and its news cannot part.
 */
async function changed<T>(db: Tx, workspaceId: string, result: T): Promise<T> {
  await notify(db, INTEGRATIONS_CHANNEL, workspaceId);
  version += 1;
  return result;
}

export type IntegrationRow = TableRow<'integrations'>;

export const integrationRow = tableRow('integrations', {
  id: text,
  workspace_id: text,
  integration: text,
  provider: text,
  connected_by: text,
  connected_at: date,
  url: nullable(text),
  auth_header_name: nullable(text),
  auth_header_encrypted: nullable(text),
  status: oneOf(['active', 'paused', 'failing', 'not_connected']),
  tools: json,
  tools_refreshed_at: nullable(date),
  last_check_at: nullable(date),
  last_check_ok: nullable(bool),
  last_check_error: nullable(text),
});

/** The cached tools of a row (written by this module only, so their shape is ours). */
export function toolsOf(row: IntegrationRow): CachedTool[] {
  return Array.isArray(row.tools) ? (row.tools as CachedTool[]) : [];
}

export function toIntegration(row: IntegrationRow): Schema<'Integration'> {
  return {
    id: row.id,
    integration: row.integration,
    provider: row.provider,
    connectedBy: row.connected_by,
    connectedAt: row.connected_at.toISOString(),
    url: row.url,
    authHeaderName: row.auth_header_name,
    status: row.status,
    tools: toolsOf(row).map((tool) => ({ name: tool.name, description: tool.description, readOnly: tool.readOnly })),
    toolsRefreshedAt: row.tools_refreshed_at ? row.tools_refreshed_at.toISOString() : null,
    lastCheck: row.last_check_at ? { at: row.last_check_at.toISOString(), ok: row.last_check_ok === true, error: row.last_check_error } : null,
  };
}

export function loadIntegration(db: Db | Tx, workspaceId: string, id: string): Promise<IntegrationRow | undefined> {
  return selectRow(db, integrationRow, `SELECT * FROM integrations WHERE id = $1 AND workspace_id = $2`, [id, workspaceId]);
}

export function listIntegrations(db: Db | Tx, workspaceId: string): Promise<IntegrationRow[]> {
  return selectRows(db, integrationRow, `SELECT * FROM integrations WHERE workspace_id = $1 ORDER BY connected_at DESC, id`, [workspaceId]);
}

/** The integrations whose tools are offered: connected to a server, not paused. */
export function offeredIntegrations(db: Db | Tx, workspaceId: string): Promise<IntegrationRow[]> {
  return selectRows(
    db,
    integrationRow,
    `SELECT * FROM integrations WHERE workspace_id = $1 AND url IS NOT NULL AND status IN ('active', 'failing') ORDER BY integration`,
    [workspaceId],
  );
}

export interface NewIntegration {
  id: string;
  workspaceId: string;
  integration: string;
  provider: string;
  connectedBy: string;
  url: string;
  authHeaderName: string | null;
  authHeaderSealed: string | null;
  tools: CachedTool[];
  now: Date;
}

/** Inserts a checked integration; undefined when the workspace already has one of that name. */
export async function insertIntegration(tx: Tx, input: NewIntegration): Promise<IntegrationRow | undefined> {
  const row = await selectRow(
    tx,
    integrationRow,
    `INSERT INTO integrations (id, workspace_id, integration, provider, connected_by, connected_at, url, auth_header_name,
       auth_header_encrypted, status, tools, tools_refreshed_at, last_check_at, last_check_ok, last_check_error)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'active', $10::jsonb, $6, $6, true, NULL)
     ON CONFLICT (workspace_id, integration) WHERE url IS NOT NULL DO NOTHING
     RETURNING *`,
    [
      input.id,
      input.workspaceId,
      input.integration,
      input.provider,
      input.connectedBy,
      input.now,
      input.url,
      input.authHeaderName,
      input.authHeaderSealed,
      JSON.stringify(input.tools),
    ],
  );
  return changed(tx, input.workspaceId, row);
}

/**
 * Records a check: a passing one refreshes the tools and makes a failing integration active; a failing one marks an
 * active one failing. A paused integration stays paused either way.
 */
export async function recordCheck(
  db: Db | Tx,
  row: Pick<IntegrationRow, 'id' | 'workspace_id'>,
  check: { ok: true; tools: CachedTool[] } | { ok: false; error: string },
  now: Date,
) {
  return inTransaction(db, async (tx) => changed(tx, row.workspace_id, await writeCheck(tx, row, check, now)));
}

function writeCheck(
  db: Db | Tx,
  row: Pick<IntegrationRow, 'id' | 'workspace_id'>,
  check: { ok: true; tools: CachedTool[] } | { ok: false; error: string },
  now: Date,
) {
  if (check.ok) {
    return selectRow(
      db,
      integrationRow,
      `UPDATE integrations SET tools = $3::jsonb, tools_refreshed_at = $4, last_check_at = $4, last_check_ok = true, last_check_error = NULL,
         status = CASE WHEN status = 'failing' THEN 'active' ELSE status END
       WHERE id = $1 AND workspace_id = $2 RETURNING *`,
      [row.id, row.workspace_id, JSON.stringify(check.tools), now],
    );
  }
  return selectRow(
    db,
    integrationRow,
    `UPDATE integrations SET last_check_at = $3, last_check_ok = false, last_check_error = $4,
       status = CASE WHEN status = 'active' THEN 'failing' ELSE status END
     WHERE id = $1 AND workspace_id = $2 RETURNING *`,
    [row.id, row.workspace_id, now, check.error],
  );
}

export async function setPaused(tx: Tx, workspaceId: string, id: string, paused: boolean): Promise<IntegrationRow | undefined> {
  // Resuming returns to `failing` when the last check failed, else `active`.
  const row = await selectRow(
    tx,
    integrationRow,
    paused
      ? `UPDATE integrations SET status = 'paused' WHERE id = $1 AND workspace_id = $2 AND url IS NOT NULL RETURNING *`
      : `UPDATE integrations SET status = CASE WHEN last_check_ok = false THEN 'failing' ELSE 'active' END
         WHERE id = $1 AND workspace_id = $2 AND url IS NOT NULL RETURNING *`,
    [id, workspaceId],
  );
  return changed(tx, workspaceId, row);
}

export async function deleteIntegration(tx: Tx, workspaceId: string, id: string): Promise<boolean> {
  const rows = await tx.query(`DELETE FROM integrations WHERE id = $1 AND workspace_id = $2 RETURNING id`, [id, workspaceId]);
  return changed(tx, workspaceId, rows.length > 0);
}
