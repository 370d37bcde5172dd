/**
 * @module Connected integrations, as admins manage them: connect (the URL behind the SSRF guard of webhook
 * destinations, the auth header sealed, then the connection check; only a server that passes is recorded, with
 * `integration.connected` emitted in the same transaction), list, read, check again, pause, resume and remove.
 * Every change is audited in its own transaction. Another workspace's integration is `404 not_found`. Pausing or
 * removing one closes its kept MCP session in this process (mcp-client.ts; other instances close theirs when their
 * tool source next reads the workspace's integrations, tool-source.ts).
 */
import type { Clock } from '../../clock.ts';
import type { Schema } from '../../contract.ts';
import { fail } from '../../errors.ts';
import { newId } from '../../random.ts';
import type { Db, Tx } from '../../store/db.ts';
import { type AuditAction, type AuditContext, recordAudit } from '../audit/index.ts';
import { guardDestinationUrl } from '../destinations/service.ts';
import { enqueueEvent } from '../events/outbox.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import type { DestinationPolicy } from '../webhooks/ssrf-guard.ts';
import { McpFailure, type McpConnector, type McpEndpoint } from './mcp-client.ts';
import {
  deleteIntegration,
  insertIntegration,
  type IntegrationRow,
  listIntegrations,
  loadIntegration,
  recordCheck,
  setPaused,
  toIntegration,
} from './records.ts';
import { type CachedTool, toCachedTools } from './tool-names.ts';

type Integration = Schema<'Integration'>;
type CreateIntegrationRequest = Schema<'CreateIntegrationRequest'>;

export type IntegrationService = ReturnType<typeof createIntegrationService>;

/** Headers the transport sets itself (or that would change what the request is): an auth header may not be one. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-type',
  'content-length',
  'accept',
  'connection',
  'transfer-encoding',
  'te',
  'upgrade',
  'keep-alive',
  'proxy-authorization',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
]);

export interface IntegrationDeps {
  db: Db;
  clock: Clock;
  secretBox: SecretBox;
  policy: DestinationPolicy;
  connector: McpConnector;
  logWarning?: LogWarning;
}

/** The endpoint of a stored integration, its header opened (its MCP session is kept for its later calls, mcp-client.ts). */
export function endpointOf(row: IntegrationRow, secretBox: SecretBox): McpEndpoint {
  if (row.url === null) throw new Error('integration without a server');
  const header =
    row.auth_header_name !== null && row.auth_header_encrypted !== null
      ? { name: row.auth_header_name, value: secretBox.open(row.auth_header_encrypted) }
      : null;
  return { url: row.url, header, integrationId: row.id };
}

/** A warning line of the structured logger (fields chosen by the caller: ids and names, never a URL or a header). */
export type LogWarning = (fields: Record<string, unknown>, message: string) => void;

/**
 * The connection check: `initialize` and `tools/list`, as the cached tools of `integration`, or the failure's general
 * words. Tools left out because their names collide are one warning of the check (the workspace, the integration's
 * name and the tools' names: never its URL or header).
 */
export async function checkConnection(
  connector: McpConnector,
  workspaceId: string,
  integration: string,
  endpoint: McpEndpoint,
  logWarning?: LogWarning,
): Promise<{ ok: true; tools: CachedTool[] } | { ok: false; error: string }> {
  try {
    const { tools, collisions } = toCachedTools(integration, await connector.listTools(workspaceId, endpoint));
    if (collisions.length > 0) {
      logWarning?.({ workspaceId, integration, collisions }, 'integration tools left out: their names collide with an earlier tool of the server');
    }
    return { ok: true, tools };
  } catch (error) {
    if (error instanceof McpFailure) return { ok: false, error: error.message };
    throw error;
  }
}

export function createIntegrationService(deps: IntegrationDeps) {
  const { db, clock, secretBox, policy, connector, logWarning } = deps;

  async function load(workspaceId: string, id: string): Promise<IntegrationRow> {
    const row = await loadIntegration(db, workspaceId, id);
    if (!row) throw fail('not_found', 'No such integration.');
    return row;
  }

  async function audited(audit: AuditContext | undefined, tx: Tx, row: IntegrationRow, action: AuditAction, details: Record<string, unknown> = {}) {
    await recordAudit(tx, audit, row.workspace_id, { action, target: { type: 'integration', id: row.id, label: row.integration }, details }, clock.now());
  }

  async function pauseOrResume(workspaceId: string, id: string, paused: boolean, audit: AuditContext | undefined): Promise<Integration> {
    const before = await load(workspaceId, id);
    if (before.url === null) throw fail('invalid_body', 'This integration has no server to pause or resume.');
    const integration = await db.transaction(async (tx) => {
      const row = await setPaused(tx, workspaceId, id, paused);
      if (!row) throw fail('not_found', 'No such integration.');
      await audited(audit, tx, row, paused ? 'integration.paused' : 'integration.resumed');
      return toIntegration(row);
    });
    if (paused) connector.forget(workspaceId, id);
    return integration;
  }

  return {
    /** Checks the server, then records it and emits `integration.connected`; a failing check records nothing. */
    async connect(workspaceId: string, connectedBy: string, input: CreateIntegrationRequest, audit?: AuditContext): Promise<Integration> {
      const header = input.authHeader ?? null;
      if (header && RESERVED_HEADERS.has(header.name.toLowerCase())) {
        throw fail('invalid_body', `The header ${header.name} is set by the connection itself; choose another name.`, { param: 'authHeader.name' });
      }
      if ((await listIntegrations(db, workspaceId)).some((row) => row.integration === input.integration && row.url !== null)) {
        throw fail('invalid_body', `An integration named ${input.integration} is already connected.`, { param: 'integration' });
      }
      await guardDestinationUrl(input.url, policy);
      const check = await checkConnection(connector, workspaceId, input.integration, { url: input.url, header }, logWarning);
      if (!check.ok) throw fail('invalid_body', `The connection check failed: ${check.error}`, { param: 'url' });
      const provider = input.provider ?? 'mcp';
      const now = clock.now();
      return db.transaction(async (tx) => {
        const row = await insertIntegration(tx, {
          id: newId('int'),
          workspaceId,
          integration: input.integration,
          provider,
          connectedBy,
          url: input.url,
          authHeaderName: header?.name ?? null,
          authHeaderSealed: header ? secretBox.seal(header.value) : null,
          tools: check.tools,
          now,
        });
        if (!row) throw fail('invalid_body', `An integration named ${input.integration} is already connected.`, { param: 'integration' });
        await enqueueEvent(
          tx,
          { tenantId: workspaceId, type: 'integration.connected', data: { integration: row.integration, provider, connected_by: connectedBy } },
          { now },
        );
        await audited(audit, tx, row, 'integration.connected', { provider, tools: check.tools.length });
        return toIntegration(row);
      });
    },
    async list(workspaceId: string): Promise<Integration[]> {
      return (await listIntegrations(db, workspaceId)).map(toIntegration);
    },
    async get(workspaceId: string, id: string): Promise<Integration> {
      return toIntegration(await load(workspaceId, id));
    },
    /** The connection check again: the tools refreshed when it passes, `failing` when it does not (never an error of the request). */
    async test(workspaceId: string, id: string, audit?: AuditContext): Promise<Integration> {
      const row = await load(workspaceId, id);
      if (row.url === null) throw fail('invalid_body', 'This integration has no server to check.');
      const check = await checkConnection(connector, workspaceId, row.integration, endpointOf(row, secretBox), logWarning);
      return db.transaction(async (tx) => {
        const checked = await recordCheck(tx, row, check, clock.now());
        if (!checked) throw fail('not_found', 'No such integration.');
        await audited(audit, tx, checked, 'integration.tested', { ok: check.ok });
        return toIntegration(checked);
      });
    },
    pause: (workspaceId: string, id: string, audit?: AuditContext) => pauseOrResume(workspaceId, id, true, audit),
    resume: (workspaceId: string, id: string, audit?: AuditContext) => pauseOrResume(workspaceId, id, false, audit),
    async remove(workspaceId: string, id: string, audit?: AuditContext): Promise<void> {
      const row = await load(workspaceId, id);
      await db.transaction(async (tx) => {
        if (!(await deleteIntegration(tx, workspaceId, id))) throw fail('not_found', 'No such integration.');
        await audited(audit, tx, row, 'integration.removed');
      });
      connector.forget(workspaceId, id);
    },
  };
}
