/**
 * Tenant isolation: two workspaces, A and B, on one store (PGlite; PostgreSQL too when DATABASE_URL
 * is set), served by one app, as one deployment serves every workspace.
 *
 * A is seeded with one of each resource (a run with steps, tool calls and a pending approval, a run
 * queued by an inbound event, a key, an inbound webhook, an outbound destination with deliveries, an
 * MCP token, a pending invitation); B with its own. Then, for every operation of the contract (generated/routes.ts),
 * B's credentials try A's resources. MATRIX classifies each operation explicitly; an operation the
 * table does not name fails the suite, so a new operation cannot skip the matrix.
 *
 * Outbound: A's events reach only A's destination (a real HTTPS receiver on loopback), signed with
 * A's secret; B's reach only B's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../sdk/src/index.ts';
import { routes, type OperationId } from './contract.ts';
import { pauseAgent } from './domain/agents/settings.ts';
import { inboundRunExecutor } from './domain/runs/inbound.ts';
import { totpCode } from './domain/sessions/totp.ts';
import { signInboundBody } from './domain/webhooks/inbound-signature.ts';
import { WORKSPACE_EVENT_TYPES } from './domain/webhooks/envelope.ts';
import { createSelfSignedCertificate, startHttpsTestReceiver, type HttpsTestReceiver } from '@service/testing/https-receiver';
import { misfits, stale, unclassified, type Classification } from '@service/testing/isolation-matrix';
import { sseBlock } from '@service/testing/sse';
import { randomBase62 } from './random.ts';
import type { Db } from './store/db.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { startCrmServer, type McpTestServer } from '@service/testing/mcp-servers';
import { runDeliveryBatch, type DeliveryWorkerDeps } from './worker/deliveries.ts';
import { handOverInboundRuns } from './worker/inbound-runs.ts';

// ---------------------------------------------------------------------------------------------
// The two tenants and what the checks act with.

type Session = { cookie: string; csrfToken: string };

/** The MCP server (crm) both tenants' integrations connect to. */
let mcpServer: McpTestServer;
type Credential = { bearer: string } | { session: Session } | 'none';

/** A's resources, as B would name them in a path. */
type Resource = 'run' | 'queuedRun' | 'key' | 'inbound' | 'destination' | 'approval' | 'invitation' | 'draft' | 'integration';

interface Tenant {
  label: 'a' | 'b';
  t: TestApp;
  workspaceId: string;
  /** The workspace's key with every scope. */
  key: string;
  admin: Session;
  mcpToken: string;
  receiver: HttpsTestReceiver;
  destinationSecret: string;
  inboundSecret: string;
  /** One resource of each kind; `run` completed with steps, tool calls, a draft and a pending approval; `invitation` pending. */
  ids: Record<Resource, string>;
}

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** What the checks of the table act with: the deployment, both tenants, and the store. */
interface Ctx {
  A: Tenant;
  B: Tenant;
  db: Db;
  call(method: string, path: string, as: Credential, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  /** The deployment's clock. */
  clock: TestApp['clock'];
}

type Check = (ctx: Ctx) => Promise<void>;

type IsolationCase = Classification &
  (
    | { kind: 'resource'; resource: Resource; body?: unknown }
    | { kind: 'list'; resource: 'run' | 'key' | 'inbound' | 'destination' | 'approval' | 'invitation' | 'draft' | 'integration' }
    | { kind: 'own' | 'inbound' | 'public'; check: Check }
  );

// ---------------------------------------------------------------------------------------------
// The checks of operations that name no resource in their path.

const ask = (content: string, extra: Record<string, unknown> = {}) => ({ alias: 'Sonata', messages: [{ role: 'user', content }], ...extra });

/** The seed run's request: an email to send (a pending approval, a draft), in the tenant's conversation. */
const seedRequest = (label: string) => ask('Send an email to the new lead', { agentSlug: 'sales', conversationId: `conv-${label}` });
/** The Idempotency-Key of each tenant's seed invocation: the same in both workspaces. */
const SEED_IDEMPOTENCY_KEY = 'seed-invocation-1';
/** A second conversation of each tenant. */
const secondRequest = (label: string) => ask('Plan the next quarter', { agentSlug: 'strategy', conversationId: `conv-${label}-2` });

/**
 * B invokes in one of A's conversations (`conversationId`): the run is B's (A cannot read it) and it
 * starts from B's own history, which is empty: it reads exactly as many input tokens as the same
 * request in a conversation nobody used. Had it been given A's turns, it would read more.
 */
function invocationIsOwn(path: string, content: string, conversationId: string): Check {
  return async ({ A, B, call }) => {
    const invoke = (conversation: string) => call('POST', path, { bearer: B.key }, ask(content, { conversationId: conversation }));
    const inA = await invoke(conversationId);
    const fresh = await invoke(`conv-${randomBase62(12)}`);
    expect(inA.status).toBe(200);
    expect(fresh.status).toBe(200);
    const runId = inA.body.runId as string;
    const own = await call('GET', `/runs/${runId}`, { bearer: B.key });
    expect(own.status).toBe(200);
    expect(own.body.run.usage.inputTokens).toBe(fresh.body.usage.inputTokens);
    expect(inA.body.content).toBe(fresh.body.content);
    // History does count: B's next turn in that conversation (now B's own) reads more.
    const next = await invoke(conversationId);
    expect(next.body.usage.inputTokens).toBeGreaterThan(fresh.body.usage.inputTokens);
    const foreign = await call('GET', `/runs/${runId}`, { bearer: A.key });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ error: 'not_found' });
  };
}

const usageIsOwn =
  (path: string): Check =>
  async ({ A, B, call }) => {
    const stuOf = async (tenant: Tenant) => {
      const runs = await call('GET', '/runs?limit=200', { bearer: tenant.key });
      return (runs.body.data as { usage: { stu: number } }[]).reduce((sum, r) => sum + r.usage.stu, 0);
    };
    const b = await call('GET', path, { bearer: B.key });
    const a = await call('GET', path, { bearer: A.key });
    expect(b.status).toBe(200);
    expect(b.body.consumedStu).toBe(await stuOf(B));
    expect(a.body.consumedStu).toBe(await stuOf(A));
    expect(b.body.consumedStu).not.toBe(a.body.consumedStu);
  };

const keyCreationIsOwn =
  (path: string): Check =>
  async ({ A, B, call }) => {
    const created = await call('POST', path, { session: B.admin }, { name: 'b-created', scopes: ['usage:read'] });
    expect(created.status).toBe(201);
    const ids = async (tenant: Tenant) => ((await call('GET', path, { session: tenant.admin })).body.data as { id: string }[]).map((k) => k.id);
    expect(await ids(B)).toContain(created.body.id);
    expect(await ids(A)).not.toContain(created.body.id);
  };

/** JSON-RPC through the bridge; `sessionId` pushes the answer to that SSE session too. */
async function rpc(ctx: Ctx, token: string, request: Record<string, unknown>, sessionId?: string): Promise<Answer> {
  return ctx.call('POST', `/v1/mcp/tenant/rpc${sessionId ? `?sessionId=${sessionId}` : ''}`, { bearer: token }, { jsonrpc: '2.0', ...request });
}

/** An open MCP stream: its session id, and its next `message` event (keep-alive comments skipped). */
async function openStream(ctx: Ctx, token: string) {
  const res = await ctx.call('GET', '/v1/mcp/tenant/sse', { bearer: token });
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  async function nextEvent(): Promise<{ event: string; data: string }> {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (block.startsWith(':')) continue;
        return sseBlock(block);
      }
      const chunk = await reader.read();
      if (chunk.done) throw new Error('stream ended');
      buffer += decoder.decode(chunk.value, { stream: true });
    }
  }
  const endpoint = await nextEvent();
  expect(endpoint.event).toBe('endpoint');
  const sessionId = /sessionId=(mcs_[A-Za-z0-9]+)/.exec(endpoint.data)![1]!;
  return { sessionId, nextEvent, close: () => reader.cancel() };
}

/**
 * `owner` holds a stream; `other` posts naming the owner's session. The other's call is answered as
 * if the session did not exist (the same JSON-RPC answer as for a made-up session) and nothing
 * reaches the owner's stream: the next thing there is the owner's own call.
 */
async function streamIsOwn(ctx: Ctx, owner: Tenant, other: Tenant): Promise<void> {
  const stream = await openStream(ctx, owner.mcpToken);
  try {
    const intruding = await rpc(ctx, other.mcpToken, { id: 'intruder', method: 'ping' }, stream.sessionId);
    const madeUp = await rpc(ctx, other.mcpToken, { id: 'intruder', method: 'ping' }, `mcs_${randomBase62(16)}`);
    expect(intruding.status).toBe(200);
    expect(intruding.body).toEqual(madeUp.body);
    const own = await rpc(ctx, owner.mcpToken, { id: 'owner', method: 'ping' }, stream.sessionId);
    expect(own.status).toBe(200);
    const pushed = await stream.nextEvent();
    expect(pushed.event).toBe('message');
    expect(JSON.parse(pushed.data)).toEqual(own.body);
  } finally {
    await stream.close();
  }
}

/**
 * `owner` opens a Streamable HTTP session; `other` naming it (a message, then DELETE) is answered exactly as for a
 * made-up session, `404 not_found`, and the owner's session still works; in it, the owner reads the other's run
 * as a run that does not exist. Then the owner ends it, and it is gone.
 */
async function httpSessionIsOwn(ctx: Ctx, owner: Tenant, other: Tenant): Promise<void> {
  const endpoint = '/v1/mcp/tenant';
  const initialize = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'isolation', version: '1' } },
  };
  const opened = await ctx.call('POST', endpoint, { bearer: owner.mcpToken }, initialize);
  expect(opened.status).toBe(200);
  const sessionId = opened.headers.get('mcp-session-id')!;
  expect(sessionId).toMatch(/^mcs_[A-Za-z0-9]{32}$/);
  const send = (tenant: Tenant, session: string, message: Record<string, unknown>) =>
    ctx.call('POST', endpoint, { bearer: tenant.mcpToken }, { jsonrpc: '2.0', ...message }, { 'mcp-session-id': session });
  const end = (tenant: Tenant, session: string) => ctx.call('DELETE', endpoint, { bearer: tenant.mcpToken }, undefined, { 'mcp-session-id': session });
  const madeUp = `mcs_${randomBase62(32)}`;

  const intruding = await send(other, sessionId, { id: 1, method: 'ping' });
  expect(intruding.status).toBe(404);
  expect(intruding.body).toEqual((await send(other, madeUp, { id: 1, method: 'ping' })).body);
  const ending = await end(other, sessionId);
  expect(ending.status).toBe(404);
  expect(ending.body).toEqual((await end(other, madeUp)).body);

  const getRun = (runId: string) => send(owner, sessionId, { id: 2, method: 'tools/call', params: { name: 'get_run', arguments: { runId } } });
  const foreign = await getRun(other.ids.run);
  expect(foreign.status).toBe(200);
  expect(foreign.body.result).toMatchObject({ isError: true, structuredContent: { error: 'not_found' } });
  expect(foreign.body).toEqual((await getRun(madeUpLike(other.ids.run))).body);
  expect((await getRun(owner.ids.run)).body.result).toMatchObject({ isError: false, structuredContent: { run: { id: owner.ids.run } } });

  expect((await end(owner, sessionId)).status).toBe(204);
  expect((await send(owner, sessionId, { id: 3, method: 'ping' })).status).toBe(404);
}

/** B's MCP token reads A's run exactly as a run that does not exist; its own run as a run. */
const mcpToolsAreOwn: Check = async (ctx) => {
  const { A, B } = ctx;
  const getRun = (runId: string) => rpc(ctx, B.mcpToken, { id: 1, method: 'tools/call', params: { name: 'get_run', arguments: { runId } } });
  const foreign = await getRun(A.ids.run);
  const madeUp = await getRun(madeUpLike(A.ids.run));
  expect(foreign.status).toBe(200);
  expect(foreign.body.result).toMatchObject({ isError: true, structuredContent: { error: 'not_found' } });
  expect(foreign.body).toEqual(madeUp.body);
  const own = await getRun(B.ids.run);
  expect(own.body.result).toMatchObject({ isError: false, structuredContent: { run: { id: B.ids.run } } });
  await streamIsOwn(ctx, A, B);
};

const MATRIX = {
  // Runs (Set A and Set B)
  createInference: {
    kind: 'own',
    check: async (ctx) => {
      await invocationIsOwn('/v1/inference', 'Draft an email to the new lead', 'conv-a')(ctx);
      // A's exact seed request under A's Idempotency-Key: keys are per credential, so B gets a run of its own, not A's.
      const { A, B, call } = ctx;
      // (B's seed key used it already, for B's own seed: a key B has not used it with.)
      const fresh = await B.t.keyWith('orchestrator:invoke');
      const res = await call('POST', '/v1/inference', { bearer: fresh }, seedRequest('a'), { 'Idempotency-Key': SEED_IDEMPOTENCY_KEY });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.runId).not.toBe(A.ids.run);
      expect((await call('GET', `/runs/${res.body.runId}`, { bearer: B.key })).status).toBe(200);
    },
  },
  sendAgentMessage: {
    kind: 'own',
    pathParameter: 'an agent slug of the catalog, the same in every workspace',
    check: invocationIsOwn('/v1/agents/strategy/messages', 'Plan the next quarter', 'conv-a-2'),
  },
  sendOrchestratorMessage: {
    kind: 'own',
    check: async ({ A, B, call }) => {
      const res = await call('POST', '/v1/orchestrator/messages', { bearer: B.key }, ask('How is our pipeline?'));
      expect(res.status).toBe(200);
      expect((await call('GET', `/runs/${res.body.runId}`, { bearer: B.key })).status).toBe(200);
      expect((await call('GET', `/runs/${res.body.runId}`, { bearer: A.key })).status).toBe(404);
    },
  },
  listRuns: { kind: 'list', resource: 'run' },
  listRunsV1: { kind: 'list', resource: 'run' },
  getRun: { kind: 'resource', resource: 'run' },
  getRunV1: { kind: 'resource', resource: 'run' },
  getRunEvents: { kind: 'resource', resource: 'run' },
  getRunEventsV1: { kind: 'resource', resource: 'run' },
  cancelRun: { kind: 'resource', resource: 'queuedRun' },
  cancelRunV1: { kind: 'resource', resource: 'queuedRun' },
  getCurrentUsage: { kind: 'own', check: usageIsOwn('/usage/current') },
  getUsageV1: { kind: 'own', check: usageIsOwn('/v1/usage') },
  getDailyUsage: {
    kind: 'own',
    // Each workspace's days add up to its own consumption only.
    check: async ({ A, B, call }) => {
      const daily = async (tenant: Tenant) =>
        ((await call('GET', '/usage/daily', { session: tenant.admin })).body.days as { stu: number }[]).reduce((sum, d) => sum + d.stu, 0);
      const consumed = async (tenant: Tenant) => (await call('GET', '/usage/current', { bearer: tenant.key })).body.consumedStu as number;
      expect(await daily(A)).toBe(await consumed(A));
      expect(await daily(B)).toBe(await consumed(B));
      expect(await daily(A)).not.toBe(await daily(B));
    },
  },
  listAgents: {
    kind: 'own',
    // A paused `legal` at seeding: B's catalog still lists it, A's does not.
    check: async ({ A, B, call }) => {
      const slugs = async (tenant: Tenant) => ((await call('GET', '/v1/agents', { bearer: tenant.key })).body.data as { slug: string }[]).map((a) => a.slug);
      expect(await slugs(B)).toContain('legal');
      expect(await slugs(A)).not.toContain('legal');
    },
  },

  // The panel's agents (session): the state of an agent is per workspace.
  listWorkspaceAgents: {
    kind: 'own',
    // A paused `legal` at seeding: A's panel shows it paused, B's active.
    check: async ({ A, B, call }) => {
      const stateOf = async (tenant: Tenant, slug: string) =>
        ((await call('GET', '/agents', { session: tenant.admin })).body.data as { slug: string; state: string }[]).find((a) => a.slug === slug)?.state;
      expect(await stateOf(A, 'legal')).toBe('paused');
      expect(await stateOf(B, 'legal')).toBe('active');
    },
  },
  pauseAgent: {
    kind: 'own',
    pathParameter: 'an agent slug of the catalog, the same in every workspace',
    check: (ctx) => agentSwitchIsOwn(ctx, 'pause'),
  },
  resumeAgent: {
    kind: 'own',
    pathParameter: 'an agent slug of the catalog, the same in every workspace',
    check: (ctx) => agentSwitchIsOwn(ctx, 'resume'),
  },
  getAgentConfiguration: {
    kind: 'own',
    pathParameter: 'an agent slug of the catalog, the same in every workspace',
    check: (ctx) => agentConfigurationIsOwn(ctx),
  },
  updateAgentConfiguration: {
    kind: 'own',
    pathParameter: 'an agent slug of the catalog, the same in every workspace',
    check: (ctx) => agentConfigurationIsOwn(ctx),
  },

  // What agents wrote for review (session).
  listDrafts: { kind: 'list', resource: 'draft' },
  getDraft: { kind: 'resource', resource: 'draft' },

  // The spending kill switches (session): per workspace.
  getKillSwitches: { kind: 'own', check: (ctx) => manualSwitchIsOwn(ctx) },
  setManualKillSwitch: { kind: 'own', check: (ctx) => manualSwitchIsOwn(ctx) },

  // Inbound events: signed by the webhook's own secret, and only by it.
  ingestInboundEvent: { kind: 'inbound', check: (ctx) => inboundNeedsOwnSecret(ctx, '') },
  ingestInboundEventV1: { kind: 'inbound', check: (ctx) => inboundNeedsOwnSecret(ctx, '/v1') },

  // The tenant MCP bridge
  createMcpToken: {
    kind: 'own',
    check: async (ctx) => {
      const issued = await ctx.call('POST', '/v1/mcp/tenant/tokens', { bearer: ctx.B.key });
      expect(issued.status).toBe(201);
      const foreign = await rpc(ctx, issued.body.token, { id: 1, method: 'tools/call', params: { name: 'get_run', arguments: { runId: ctx.A.ids.run } } });
      expect(foreign.body.result).toMatchObject({ isError: true, structuredContent: { error: 'not_found' } });
    },
  },
  callMcpRpc: { kind: 'own', check: mcpToolsAreOwn },
  openMcpStream: { kind: 'own', check: (ctx) => streamIsOwn(ctx, ctx.B, ctx.A) },
  postMcpMessage: { kind: 'own', check: (ctx) => httpSessionIsOwn(ctx, ctx.B, ctx.A) },
  endMcpSession: { kind: 'own', check: (ctx) => httpSessionIsOwn(ctx, ctx.A, ctx.B) },

  // API keys (admin session), Set A and Set B
  listApiKeys: { kind: 'list', resource: 'key' },
  listApiKeysV1: { kind: 'list', resource: 'key' },
  createApiKey: { kind: 'own', check: keyCreationIsOwn('/api-keys') },
  createApiKeyV1: { kind: 'own', check: keyCreationIsOwn('/v1/api-keys') },
  revokeApiKey: { kind: 'resource', resource: 'key' },
  revokeApiKeyV1: { kind: 'resource', resource: 'key' },
  rotateApiKey: { kind: 'resource', resource: 'key' },
  rotateApiKeyV1: { kind: 'resource', resource: 'key' },

  // Admin sign-in
  login: {
    kind: 'public',
    check: async (ctx) => {
      const res = await signIn(ctx, ctx.B);
      expect(res.status).toBe(200);
      expect(res.body.workspaceId).toBe(ctx.B.workspaceId);
    },
  },
  logout: {
    kind: 'own',
    check: async (ctx) => {
      const { A, B, call } = ctx;
      const signedIn = await signIn(ctx, B);
      const second = { cookie: (signedIn.headers.get('set-cookie') ?? '').split(';')[0]!, csrfToken: signedIn.body.csrfToken as string };
      expect((await call('POST', '/auth/logout', { session: second })).status).toBe(204);
      expect((await call('GET', '/api-keys', { session: second })).status).toBe(401);
      // Only the caller's own session ended: A's and B's others still work.
      expect((await call('GET', '/api-keys', { session: A.admin })).status).toBe(200);
      expect((await call('GET', '/api-keys', { session: B.admin })).status).toBe(200);
    },
  },

  getSession: {
    kind: 'own',
    // Each session reads itself: its own user, workspace and CSRF token, nothing of the other workspace.
    check: async ({ A, B, call }) => {
      const b = await call('GET', '/auth/session', { session: B.admin });
      expect(b.status, JSON.stringify(b.body)).toBe(200);
      expect(b.body).toMatchObject({ workspaceId: B.workspaceId, user: { email: B.t.admin.email, role: 'owner' }, csrfToken: B.admin.csrfToken });
      expect((b.body.workspaces as { id: string }[]).map((w) => w.id)).toEqual([B.workspaceId]);
      expect(JSON.stringify(b.body)).not.toContain(A.workspaceId);
      const a = await call('GET', '/auth/session', { session: A.admin });
      expect(a.body).toMatchObject({ workspaceId: A.workspaceId, user: { email: A.t.admin.email }, csrfToken: A.admin.csrfToken });
      expect(a.body.csrfToken).not.toBe(b.body.csrfToken);
    },
  },

  // Inbound webhook settings (admin session)
  listInboundWebhooks: { kind: 'list', resource: 'inbound' },
  createInboundWebhook: { kind: 'own', check: (ctx) => slugsAreDeploymentWide(ctx) },
  revokeInboundWebhook: { kind: 'resource', resource: 'inbound' },
  pauseInboundWebhook: { kind: 'resource', resource: 'inbound' },
  resumeInboundWebhook: { kind: 'resource', resource: 'inbound' },

  // Outbound destinations (admin session)
  listWebhookDestinations: { kind: 'list', resource: 'destination' },
  createWebhookDestination: {
    kind: 'own',
    check: async ({ A, B, call }) => {
      const created = await call(
        'POST',
        '/webhook-destinations',
        { session: B.admin },
        { url: `${B.receiver.origin}/b-second`, events: ['integration.connected'] },
      );
      expect(created.status).toBe(201);
      const ids = async (tenant: Tenant) =>
        ((await call('GET', '/webhook-destinations', { session: tenant.admin })).body.data as { id: string }[]).map((d) => d.id);
      expect(await ids(B)).toContain(created.body.id);
      expect(await ids(A)).not.toContain(created.body.id);
      // The new destination is paused again so that it takes no part in the outbound checks.
      expect((await call('POST', `/webhook-destinations/${created.body.id}/pause`, { session: B.admin })).status).toBe(200);
    },
  },
  rotateWebhookDestinationSecret: { kind: 'resource', resource: 'destination' },
  pauseWebhookDestination: { kind: 'resource', resource: 'destination' },
  resumeWebhookDestination: { kind: 'resource', resource: 'destination' },
  pingWebhookDestination: { kind: 'resource', resource: 'destination' },
  sendWebhookDestinationTestEvent: { kind: 'resource', resource: 'destination', body: { type: 'run.completed' } },
  replayWebhookDestination: { kind: 'resource', resource: 'destination' },
  listDestinationDeliveries: { kind: 'resource', resource: 'destination' },

  // Approvals and integrations (admin session)
  decideApproval: { kind: 'resource', resource: 'approval', body: { decision: 'approved' } },
  listApprovals: { kind: 'list', resource: 'approval' },
  createIntegration: {
    kind: 'own',
    // Its event is B's: queued for B's destination only (delivery is checked in 'outbound'). The seeded
    // integrations were connected before the destinations existed; the others of the suite are B's too.
    check: async ({ A, B, call, db }) => {
      const res = await call('POST', '/integrations', { session: B.admin }, { integration: 'crm-second', url: mcpServer.url });
      expect(res.status).toBe(201);
      const queued = await db.query<{ tenant_id: string; destination_id: string }>(
        `SELECT e.tenant_id, d.destination_id FROM outbox_events e JOIN deliveries d ON d.event_id = e.id WHERE e.type = 'integration.connected'`,
      );
      expect(queued.length).toBeGreaterThan(0);
      for (const row of queued) expect(row).toEqual({ tenant_id: B.workspaceId, destination_id: B.ids.destination });
      expect(A.ids.destination).not.toBe(B.ids.destination);
    },
  },
  listIntegrations: { kind: 'list', resource: 'integration' },
  getIntegration: { kind: 'resource', resource: 'integration' },
  testIntegration: { kind: 'resource', resource: 'integration' },
  pauseIntegration: { kind: 'resource', resource: 'integration' },
  resumeIntegration: { kind: 'resource', resource: 'integration' },
  removeIntegration: { kind: 'resource', resource: 'integration' },

  // Members (admin session): the people of the session's own workspace only
  getSsoSettings: {
    kind: 'own',
    // B's single sign-on is B's: A's owner reads none (404), B's reads B's issuer, never a secret.
    check: async ({ A, B, call }) => {
      const set = await call(
        'PUT',
        '/workspace/sso',
        { session: B.admin },
        { issuer: 'https://login.b.example', clientId: 'b', clientSecret: 'b-secret-value', allowedDomains: ['b.example'] },
      );
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      try {
        expect((await call('GET', '/workspace/sso', { session: A.admin })).status).toBe(404);
        const b = await call('GET', '/workspace/sso', { session: B.admin });
        expect(b.body).toMatchObject({ issuer: 'https://login.b.example', clientSecretSet: true });
        expect(JSON.stringify(b.body)).not.toContain('b-secret-value');
      } finally {
        expect((await call('DELETE', '/workspace/sso', { session: B.admin })).status).toBe(204);
      }
    },
  },
  updateSsoSettings: {
    kind: 'own',
    // B's write sets B's single sign-on alone; A's stays unset.
    check: async ({ A, B, call }) => {
      const set = await call(
        'PUT',
        '/workspace/sso',
        { session: B.admin },
        { issuer: 'https://login.b.example', clientId: 'b', clientSecret: 'b-secret-value', allowedDomains: ['b.example'] },
      );
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      expect((await call('GET', '/workspace/sso', { session: A.admin })).status).toBe(404);
      expect((await call('DELETE', '/workspace/sso', { session: B.admin })).status).toBe(204);
    },
  },
  removeSsoSettings: {
    kind: 'own',
    // B removes B's single sign-on only: A's stays.
    check: async ({ A, B, call }) => {
      const set = await call(
        'PUT',
        '/workspace/sso',
        { session: A.admin },
        { issuer: 'https://login.a.example', clientId: 'a', clientSecret: 'a-secret-value', allowedDomains: ['a.example'] },
      );
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      expect((await call('DELETE', '/workspace/sso', { session: B.admin })).status).toBe(404);
      expect((await call('GET', '/workspace/sso', { session: A.admin })).status).toBe(200);
      expect((await call('DELETE', '/workspace/sso', { session: A.admin })).status).toBe(204);
    },
  },
  startSsoSignIn: {
    kind: 'public',
    // The email's domain decides the workspace; a domain no workspace signs in is 404 for anyone.
    check: async ({ call }) => {
      const res = await call('POST', '/auth/sso/start', 'none', { email: 'someone@nobody-signs-in.example' });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: 'not_found' });
    },
  },
  finishSsoSignIn: {
    kind: 'public',
    // The sealed flow cookie decides the workspace; without one nothing signs in.
    check: async ({ call }) => {
      const res = await call('POST', '/auth/sso/callback', 'none', { state: 'a-state', code: 'a-code' });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ error: 'not_authenticated' });
    },
  },
  selectWorkspace: {
    kind: 'own',
    // B's admin is no member of A: selecting A is tenant_forbidden, and the session stays on B.
    check: async ({ A, B, call }) => {
      const res = await call('POST', '/auth/workspace', { session: B.admin }, { workspaceId: A.workspaceId });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: 'tenant_forbidden' });
      const keys = await call('GET', '/api-keys', { session: B.admin });
      expect((keys.body.data as { id: string }[]).map((k) => k.id)).toContain(B.ids.key);
      expect((keys.body.data as { id: string }[]).map((k) => k.id)).not.toContain(A.ids.key);
    },
  },
  listMembers: {
    kind: 'own',
    check: async ({ A, B, call }) => {
      const emails = async (tenant: Tenant) =>
        ((await call('GET', '/workspace/members', { session: tenant.admin })).body.data as { email: string }[]).map((m) => m.email);
      expect(await emails(B)).toEqual([B.t.admin.email]);
      expect(await emails(A)).toEqual([A.t.admin.email]);
    },
  },
  updateMember: {
    kind: 'own',
    pathParameter: "user_id names a person, who may belong to several workspaces; A's member is member_not_found to B",
    check: async ({ A, B, call }) => memberIsOwn({ A, B, call }, 'PATCH', { role: 'member' }),
  },
  removeMember: {
    kind: 'own',
    pathParameter: "user_id names a person, who may belong to several workspaces; A's member is member_not_found to B",
    check: async ({ A, B, call }) => memberIsOwn({ A, B, call }, 'DELETE'),
  },
  createInvitation: {
    kind: 'own',
    // B's invitation joins B's workspace, never A's.
    check: async ({ B, call, clock }) => {
      const invited = await call('POST', '/workspace/invitations', { session: B.admin }, { email: 'invitee-of-b@example.com' });
      expect(invited.status).toBe(201);
      const accepted = await completeTwoStep({ call, clock }, '/invitations/accept', { token: invited.body.token, password: 'a password of the invitee' });
      expect(accepted.body).toMatchObject({ workspaceId: B.workspaceId, role: 'member' });
    },
  },
  listInvitations: { kind: 'list', resource: 'invitation' },
  listAuditEvents: {
    kind: 'own',
    // Each workspace's log holds its own changes only; filtering by A's key or A's admin finds nothing in B's.
    check: async ({ A, B, db, call }) => {
      const idsOf = async (workspaceId: string) =>
        (await db.query<{ id: string }>(`SELECT id FROM audit_events WHERE workspace_id = $1`, [workspaceId])).map((row) => row.id);
      const [ofA, ofB] = [await idsOf(A.workspaceId), await idsOf(B.workspaceId)];
      expect(ofA.length).toBeGreaterThan(0);
      const listed = await call('GET', '/audit-events?limit=200', { session: B.admin });
      expect(listed.status).toBe(200);
      const seen = (listed.body.data as { id: string }[]).map((event) => event.id);
      expect(listed.body.total).toBe(ofB.length);
      expect(seen.filter((id) => ofA.includes(id))).toEqual([]);
      for (const query of [`target=${A.ids.key}`, `actor=${encodeURIComponent(A.t.admin.email)}`]) {
        const filtered = await call('GET', `/audit-events?${query}`, { session: B.admin });
        expect(filtered.status).toBe(200);
        expect(filtered.body).toMatchObject({ data: [], total: 0 });
      }
    },
  },
  resendInvitation: { kind: 'resource', resource: 'invitation' },
  revokeInvitation: { kind: 'resource', resource: 'invitation' },
  previewInvitation: {
    kind: 'public',
    // The token decides the workspace: each tenant's link names its own workspace, and none names an id; revoked, it is
    // 410 for anyone.
    check: async ({ A, B, call, db }) => {
      for (const tenant of [A, B]) {
        const invited = await call('POST', '/workspace/invitations', { session: tenant.admin }, { email: `preview-of-${tenant.label}@example.com` });
        const preview = await call('POST', '/invitations/preview', 'none', { token: invited.body.token });
        const [workspace] = await db.query<{ name: string }>(`SELECT name FROM workspaces WHERE id = $1`, [tenant.workspaceId]);
        expect(preview.body).toEqual({
          workspaceName: workspace!.name,
          email: `preview-of-${tenant.label}@example.com`,
          role: 'member',
          expiresAt: invited.body.expiresAt,
          hasAccount: false,
        });
        for (const id of [A.workspaceId, B.workspaceId]) expect(JSON.stringify(preview.body)).not.toContain(id);
        expect((await call('DELETE', `/workspace/invitations/${invited.body.id}`, { session: tenant.admin })).status).toBe(204);
        const revoked = await call('POST', '/invitations/preview', 'none', { token: invited.body.token });
        expect(revoked.status).toBe(410);
        expect(revoked.body).toMatchObject({ error: 'expired', reason: 'revoked' });
      }
    },
  },
  acceptInvitation: {
    kind: 'public',
    // The token decides the workspace; one of A's, used, is expired for anyone.
    check: async ({ A, call, clock }) => {
      const invited = await call('POST', '/workspace/invitations', { session: A.admin }, { email: 'invitee-of-a@example.com' });
      const first = await completeTwoStep({ call, clock }, '/invitations/accept', { token: invited.body.token, password: 'a password of the invitee' });
      expect(first.body.workspaceId).toBe(A.workspaceId);
      const again = await call('POST', '/invitations/accept', 'none', { token: invited.body.token, password: 'a password of the invitee' });
      expect(again.status).toBe(410);
    },
  },

  resetMember: {
    kind: 'own',
    pathParameter: "user_id names a person, who may belong to several workspaces; A's member is member_not_found to B",
    // B cannot reset A's owner: the same 404 as a made-up id, and A's sessions live on.
    check: async ({ A, B, call }) => {
      const aMembers = (await call('GET', '/workspace/members', { session: A.admin })).body.data as { userId: string }[];
      const owner = aMembers[0]!.userId;
      const foreign = await call('POST', `/workspace/members/${owner}/reset`, { session: B.admin }, { reset: 'both' });
      const missing = await call('POST', `/workspace/members/${madeUpLike(owner)}/reset`, { session: B.admin }, { reset: 'both' });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error).toBe('member_not_found');
      expect(omitRequestId(foreign.body)).toEqual(omitRequestId(missing.body));
      expect((await call('GET', '/workspace/members', { session: A.admin })).status).toBe(200);
    },
  },
  previewAccountReset: {
    kind: 'public',
    // The token decides the account: a reset of A's member previews that member's email and what it renews, nothing of
    // a workspace; redeemed, it is expired for anyone.
    check: async ({ A, call, clock }) => {
      const invited = await call('POST', '/workspace/invitations', { session: A.admin }, { email: 'preview-reset-of-a@example.com' });
      await completeTwoStep({ call, clock }, '/invitations/accept', { token: invited.body.token, password: 'a password of the invitee' });
      const members = (await call('GET', '/workspace/members', { session: A.admin })).body.data as { userId: string; email: string }[];
      const member = members.find((m) => m.email === 'preview-reset-of-a@example.com')!;
      const reset = await call('POST', `/workspace/members/${member.userId}/reset`, { session: A.admin }, { reset: 'totp' });
      const preview = await call('POST', '/account-resets/preview', 'none', { token: reset.body.token });
      expect(preview.body).toEqual({ email: 'preview-reset-of-a@example.com', reset: 'totp', expiresAt: reset.body.expiresAt });
      await completeTwoStep({ call, clock }, '/account-resets/redeem', { token: reset.body.token, password: 'a password of the invitee' });
      expect((await call('POST', '/account-resets/preview', 'none', { token: reset.body.token })).status).toBe(410);
    },
  },
  redeemAccountReset: {
    kind: 'public',
    // The token decides the account: A's member's reset ends A's member's sessions only; used, it is expired for anyone.
    check: async ({ A, B, call, clock }) => {
      const invited = await call('POST', '/workspace/invitations', { session: A.admin }, { email: 'reset-of-a@example.com' });
      await completeTwoStep({ call, clock }, '/invitations/accept', { token: invited.body.token, password: 'a password of the invitee' });
      const members = (await call('GET', '/workspace/members', { session: A.admin })).body.data as { userId: string; email: string }[];
      const member = members.find((m) => m.email === 'reset-of-a@example.com')!;
      const reset = await call('POST', `/workspace/members/${member.userId}/reset`, { session: A.admin }, { reset: 'password' });
      expect(reset.status, JSON.stringify(reset.body)).toBe(201);
      const first = await call('POST', '/account-resets/redeem', 'none', { token: reset.body.token, password: 'another long password' });
      expect(first.body).toMatchObject({ email: 'reset-of-a@example.com', reset: 'password', totpSecret: null });
      const again = await call('POST', '/account-resets/redeem', 'none', { token: reset.body.token, password: 'another long password' });
      expect(again.status).toBe(410);
      for (const tenant of [A, B]) expect((await call('GET', '/workspace/members', { session: tenant.admin })).status).toBe(200);
    },
  },

  // Health (no credential): the same answer for anyone, about the instance, naming no workspace
  getLiveness: { kind: 'public', check: (ctx) => healthNamesNoTenant(ctx, '/healthz') },
  getReadiness: { kind: 'public', check: (ctx) => healthNamesNoTenant(ctx, '/readyz') },

  // The operator's API: no tenant credential opens it
  listWorkspaces: { kind: 'own', check: (ctx) => operatorOnly(ctx, 'GET', '/operator/workspaces') },
  createWorkspace: { kind: 'own', check: (ctx) => operatorOnly(ctx, 'POST', '/operator/workspaces', { name: 'Forged' }) },
  getWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'GET', `/operator/workspaces/${ctx.A.workspaceId}`),
  },
  updateWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'PATCH', `/operator/workspaces/${ctx.A.workspaceId}`, { status: 'suspended' }),
  },
  createUserReset: {
    kind: 'own',
    // No tenant credential resets an account, and A's admin stays signed in.
    check: async (ctx) => {
      await operatorOnly(ctx, 'POST', '/operator/users/resets', { email: ctx.A.t.admin.email, reset: 'both' });
      expect((await ctx.call('GET', '/workspace/members', { session: ctx.A.admin })).status).toBe(200);
    },
  },
  deleteWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'DELETE', `/operator/workspaces/${ctx.A.workspaceId}`),
  },
  listWorkspaceApiKeys: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'GET', `/operator/workspaces/${ctx.A.workspaceId}/api-keys`),
  },
  createWorkspaceApiKey: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/api-keys`, { name: 'Forged', scopes: ['usage:read'] }),
  },
  revokeWorkspaceApiKey: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'DELETE', `/operator/workspaces/${ctx.A.workspaceId}/api-keys/${ctx.A.ids.key}`),
  },
  rotateWorkspaceApiKey: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/api-keys/${ctx.A.ids.key}/rotate`),
  },
  getWorkspaceKillSwitches: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'GET', `/operator/workspaces/${ctx.A.workspaceId}/kill-switches`),
  },
  setWorkspaceManualKillSwitch: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'PUT', `/operator/workspaces/${ctx.A.workspaceId}/kill-switches/manual`, { engaged: true }),
  },
  listAgentsOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'GET', `/operator/workspaces/${ctx.A.workspaceId}/agents`),
  },
  pauseAgentOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/agents/sales/pause`, { reason: 'Forged' }),
  },
  resumeAgentOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/agents/legal/resume`),
  },
  listWorkspaceUsers: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'GET', `/operator/workspaces/${ctx.A.workspaceId}/users`),
  },
  createWorkspaceUser: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/users`, { email: 'forged@example.com' }),
  },
  listInboundWebhooksOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'GET', `/operator/workspaces/${ctx.A.workspaceId}/inbound-webhooks`),
  },
  createInboundWebhookOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/inbound-webhooks`, { slug: 'forged-hook' }),
  },
  pauseInboundWebhookOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/inbound-webhooks/forged-hook/pause`),
  },
  resumeInboundWebhookOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/inbound-webhooks/forged-hook/resume`),
  },
  revokeInboundWebhookOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'DELETE', `/operator/workspaces/${ctx.A.workspaceId}/inbound-webhooks/forged-hook`),
  },
  listWebhookDestinationsOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'GET', `/operator/workspaces/${ctx.A.workspaceId}/webhook-destinations`),
  },
  createWebhookDestinationOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) =>
      operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/webhook-destinations`, {
        url: 'https://hooks.example.com/forged',
        events: ['run.completed'],
      }),
  },
  rotateWebhookDestinationSecretOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/webhook-destinations/dst_AAAAAAAAAAAAAAAAAAAA/rotate-secret`),
  },
  pauseWebhookDestinationOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/webhook-destinations/dst_AAAAAAAAAAAAAAAAAAAA/pause`),
  },
  resumeWebhookDestinationOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/webhook-destinations/dst_AAAAAAAAAAAAAAAAAAAA/resume`),
  },
  pingWebhookDestinationOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/webhook-destinations/dst_AAAAAAAAAAAAAAAAAAAA/ping`),
  },
  sendWebhookDestinationTestEventOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) =>
      operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/webhook-destinations/dst_AAAAAAAAAAAAAAAAAAAA/test-events`, { type: 'ping' }),
  },
  replayWebhookDestinationOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) => operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/webhook-destinations/dst_AAAAAAAAAAAAAAAAAAAA/replay`),
  },
  decideApprovalOfWorkspace: {
    kind: 'own',
    pathParameter: 'the operator names any workspace; no tenant credential opens the route',
    check: (ctx) =>
      operatorOnly(ctx, 'POST', `/operator/workspaces/${ctx.A.workspaceId}/approvals/apr_AAAAAAAAAAAAAAAAAAAA/decision`, { decision: 'approved' }),
  },
} satisfies Record<OperationId, IsolationCase>;

/** B turns its manual kill switch on: B's invocations are refused, A's switch stays off (A's runs are left as seeded); then B turns it off. */
async function manualSwitchIsOwn({ A, B, call }: Ctx): Promise<void> {
  const on = await call('PUT', '/kill-switches/manual', { session: B.admin }, { engaged: true, reason: 'B only' });
  try {
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect(on.body.manual).toMatchObject({ engaged: true, reason: 'B only' });
    expect((await call('GET', '/kill-switches', { session: A.admin })).body.manual).toMatchObject({ engaged: false, reason: null });
    expect((await call('POST', '/v1/inference', { bearer: B.key }, ask('Hello'))).status).toBe(429);
  } finally {
    expect((await call('PUT', '/kill-switches/manual', { session: B.admin }, { engaged: false })).status).toBe(200);
  }
}

/**
 * B pauses (or resumes) an agent: only B's agent changes. B pauses `finance`, A's stays active; B resumes
 * `legal`, which A paused at seeding: A's stays paused.
 */
async function agentSwitchIsOwn({ A, B, call }: Ctx, action: 'pause' | 'resume'): Promise<void> {
  const slug = action === 'pause' ? 'finance' : 'legal';
  const stateOf = async (tenant: Tenant) =>
    ((await call('GET', '/agents', { session: tenant.admin })).body.data as { slug: string; state: string }[]).find((a) => a.slug === slug)?.state;
  const before = await stateOf(A);
  const res = await call('POST', `/agents/${slug}/${action}`, { session: B.admin }, action === 'pause' ? { reason: 'B only' } : undefined);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.state).toBe(action === 'pause' ? 'paused' : 'active');
  expect(await stateOf(A)).toBe(before);
  if (action === 'pause') expect((await call('POST', `/agents/${slug}/resume`, { session: B.admin })).status).toBe(200);
}

/** B configures `hr`: B reads its own instructions back, A's `hr` keeps the default. */
async function agentConfigurationIsOwn({ A, B, call }: Ctx): Promise<void> {
  const instructions = `B's own HR instructions ${randomBase62(6)}`;
  const res = await call('PUT', '/agents/hr/configuration', { session: B.admin }, { instructions, stepLimit: 3, tools: ['crm'], approvals: {} });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect((await call('GET', '/agents/hr/configuration', { session: B.admin })).body).toMatchObject({ instructions, stepLimit: 3 });
  const ofA = (await call('GET', '/agents/hr/configuration', { session: A.admin })).body;
  expect(ofA).toMatchObject({ customInstructions: false, stepLimit: 8, tools: null, updatedAt: null });
}

/** A's owner, named by B on a member route: member_not_found, as for a made-up id; A's owner unchanged. */
async function memberIsOwn({ A, B, call }: Pick<Ctx, 'A' | 'B' | 'call'>, method: string, body?: unknown): Promise<void> {
  const aMembers = (await call('GET', '/workspace/members', { session: A.admin })).body.data as { userId: string; role: string }[];
  const owner = aMembers[0]!;
  const foreign = await call(method, `/workspace/members/${owner.userId}`, { session: B.admin }, body);
  const missing = await call(method, `/workspace/members/${madeUpLike(owner.userId)}`, { session: B.admin }, body);
  expect(foreign.status).toBe(404);
  expect(foreign.body.error).toBe('member_not_found');
  expect(omitRequestId(foreign.body)).toEqual(omitRequestId(missing.body));
  const after = (await call('GET', '/workspace/members', { session: A.admin })).body.data;
  expect(after).toEqual(aMembers);
}

async function healthNamesNoTenant({ A, B, call }: Ctx, path: string): Promise<void> {
  const anonymous = await call('GET', path, 'none');
  const asB = await call('GET', path, { bearer: B.key });
  expect(anonymous.status).toBe(200);
  expect(asB.body).toEqual(anonymous.body);
  for (const id of [A.workspaceId, B.workspaceId]) expect(JSON.stringify(anonymous.body)).not.toContain(id);
}

/** The tenants' keys and sessions are no operator credential: 401, and A's workspace is untouched. */
async function operatorOnly({ A, B, call }: Ctx, method: string, path: string, body?: unknown): Promise<void> {
  for (const credential of [{ bearer: A.key }, { bearer: B.key }, { session: A.admin }, { session: B.admin }] as const) {
    const res = await call(method, path, credential, body);
    expect(res.status).toBe(401);
  }
  const still = await call('GET', '/usage/current', { bearer: A.key });
  expect(still.status).toBe(200);
}

/** Signs the tenant's admin in on the deployment, with a TOTP code of a step not used yet. */
/** A link that sets up two-step verification, used as a person does: a `202`'s secret confirmed with its current code. */
async function completeTwoStep({ call, clock }: Pick<Ctx, 'call' | 'clock'>, path: string, body: { token: string; password: string }): Promise<Answer> {
  const first = await call('POST', path, 'none', body);
  if (first.status !== 202) return first;
  return call('POST', path, 'none', { ...body, totpCode: totpCode(first.body.totpSecret, clock.now()) });
}

async function signIn({ call, clock }: Ctx, tenant: Tenant): Promise<Answer> {
  clock.advance(30_000);
  const { email, password, totpSecret } = tenant.t.admin;
  return call('POST', '/auth/login', 'none', { email, password, totpCode: totpCode(totpSecret, clock.now()) });
}

/** An inbound event for A's slug is verified with A's secret only; B's secret is any wrong secret. */
async function inboundNeedsOwnSecret({ A, B, call, db }: Ctx, prefix: '' | '/v1'): Promise<void> {
  const raw = JSON.stringify({ event: 'lead.created', id: `lead_${randomBase62(8)}`, contact: { name: 'Dana' } });
  const send = (slug: string, secret: string) =>
    call('POST', `${prefix}/webhooks/inbound/${slug}`, 'none', raw, {
      'X-SERVICE-Signature': signInboundBody(raw, secret),
      'X-SERVICE-Event-Id': `evt-${randomBase62(10)}`,
    });
  const events = () => db.query(`SELECT id FROM inbound_events ORDER BY id`);
  const before = await events();
  for (const [slug, secret] of [
    [A.ids.inbound, B.inboundSecret],
    [B.ids.inbound, A.inboundSecret],
  ] as const) {
    const foreign = await send(slug, secret);
    const wrong = await send(slug, `whsec_${randomBase62(32)}`);
    expect(foreign.status).toBe(401);
    expect(foreign.body.error).toBe('signature_invalid');
    expect(omitRequestId(foreign.body)).toEqual(omitRequestId(wrong.body));
  }
  expect(await events()).toEqual(before);
}

/**
 * Inbound slugs are unique per deployment (they are the URL). B cannot take A's slug: the answer is
 * `400 invalid_body`, the same as for a slug B itself already uses, so it tells nothing about
 * whose slug it is.
 */
async function slugsAreDeploymentWide({ A, B, call }: Ctx): Promise<void> {
  const taken = await call('POST', '/inbound-webhooks', { session: B.admin }, { slug: A.ids.inbound });
  const ownTaken = await call('POST', '/inbound-webhooks', { session: B.admin }, { slug: B.ids.inbound });
  expect(taken.status).toBe(400);
  expect(omitRequestId(taken.body)).toEqual({ error: 'invalid_body', message: `The slug '${A.ids.inbound}' is already taken.`, param: 'slug' });
  expect(omitRequestId(ownTaken.body)).toEqual({ error: 'invalid_body', message: `The slug '${B.ids.inbound}' is already taken.`, param: 'slug' });
  const fresh = await call('POST', '/inbound-webhooks', { session: B.admin }, { slug: `b-fresh-${randomBase62(6).toLowerCase()}` });
  expect(fresh.status).toBe(201);
}

// ---------------------------------------------------------------------------------------------
// Helpers

function omitRequestId(body: unknown): unknown {
  if (body === null || typeof body !== 'object') return body;
  const { requestId: _requestId, ...rest } = body as Record<string, unknown>;
  return rest;
}

/** An id of the same shape (prefix and length) that names nothing. */
function madeUpLike(id: string): string {
  const underscore = id.indexOf('_');
  if (underscore > 0) return `${id.slice(0, underscore + 1)}${randomBase62(id.length - underscore - 1)}`;
  // A slug: lowercase, same length.
  return `x${randomBase62(id.length - 1).toLowerCase()}`;
}

function credentialFor(route: (typeof routes)[number], tenant: Tenant): Credential {
  const scheme = route.security[0]?.scheme;
  if (scheme === 'apiKey') return { bearer: tenant.key };
  if (scheme === 'mcpToken') return { bearer: tenant.mcpToken };
  if (scheme === 'adminSession') return { session: tenant.admin };
  return 'none';
}

/** Everything of a workspace that B's calls could change, read from the store. */
async function snapshot(db: Db, workspaceId: string) {
  const q = (sql: string) => db.query(sql, [workspaceId]);
  return {
    runs: await q(`SELECT * FROM runs WHERE workspace_id = $1 ORDER BY id`),
    steps: await q(`SELECT s.* FROM run_steps s JOIN runs r ON r.id = s.run_id WHERE r.workspace_id = $1 ORDER BY s.id`),
    toolCalls: await q(`SELECT c.* FROM tool_calls c JOIN runs r ON r.id = c.run_id WHERE r.workspace_id = $1 ORDER BY c.id`),
    approvals: await q(`SELECT * FROM approvals WHERE workspace_id = $1 ORDER BY id`),
    // last_used_at moves when A's own checks read with A's key.
    keys: await q(`SELECT id, name, prefix, secret_hash, scopes, created_at, expires_at, revoked_at FROM api_keys WHERE workspace_id = $1 ORDER BY id`),
    mcpTokens: await q(`SELECT * FROM mcp_tokens WHERE workspace_id = $1 ORDER BY id`),
    inbound: await q(`SELECT * FROM inbound_webhooks WHERE workspace_id = $1 ORDER BY id`),
    inboundEvents: await q(`SELECT * FROM inbound_events WHERE workspace_id = $1 ORDER BY id`),
    destinations: await q(`SELECT * FROM webhook_destinations WHERE workspace_id = $1 ORDER BY id`),
    integrations: await q(`SELECT * FROM integrations WHERE workspace_id = $1 ORDER BY id`),
    deliveries: await q(`SELECT d.* FROM deliveries d JOIN webhook_destinations w ON w.id = d.destination_id WHERE w.workspace_id = $1 ORDER BY d.id`),
    events: await q(`SELECT * FROM outbox_events WHERE tenant_id = $1 ORDER BY id`),
    turns: await q(`SELECT * FROM conversation_turns WHERE workspace_id = $1 ORDER BY conversation_id, seq`),
    ledger: await q(`SELECT * FROM usage_ledger WHERE workspace_id = $1 ORDER BY run_id`),
    // The seeded invitation (A's own checks invite other people).
    invitations: await q(`SELECT * FROM invitations WHERE workspace_id = $1 AND email LIKE 'seeded-%' ORDER BY id`),
  };
}

// ---------------------------------------------------------------------------------------------
// The classification itself: complete, current, and fitting each path. Needs no store.

describe('the isolation matrix classifies every operation of the contract', () => {
  it('names every operation, and nothing else', () => {
    expect(unclassified(routes, MATRIX)).toEqual([]);
    expect(stale(routes, MATRIX)).toEqual([]);
    expect(misfits(routes, MATRIX)).toEqual([]);
  });

  it('fails for an operation the table does not name, e.g. a new one', () => {
    const added = [...routes, { operationId: 'exportWorkspace', path: '/workspace/export' }];
    expect(unclassified(added, MATRIX)).toEqual(['exportWorkspace']);
    const { getRun: _getRun, ...withoutGetRun } = MATRIX;
    expect(unclassified(routes, withoutGetRun)).toEqual(['getRun']);
    expect(stale(routes, { ...MATRIX, exportWorkspace: { kind: 'own' } })).toEqual(['exportWorkspace']);
  });

  it('fails for a classification that does not fit the path', () => {
    const ops = [
      { operationId: 'getDelivery', path: '/deliveries/{delivery_id}' },
      { operationId: 'getWorkspace', path: '/workspace' },
    ];
    expect(misfits(ops, { getDelivery: { kind: 'own' }, getWorkspace: { kind: 'resource' } })).toEqual([
      "getDelivery: /deliveries/{delivery_id} names {delivery_id} but is 'own' without a reason",
      "getWorkspace: 'resource' but /workspace has no path parameter",
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// The matrix, on each store.

const SECRET_KEY = `isolation-${randomBase62(32)}`;
const certificate = createSelfSignedCertificate();

describe.each(testBackends())('tenant isolation on $name', ({ open }) => {
  let store: TestStore;
  let server: TestApp;
  const ctx = {} as Ctx;
  let seeded: Awaited<ReturnType<typeof snapshot>>;
  /** The deployment's time when each delivery arrived: its signature is checked at that time. */
  const receivedAt = new Map<object, Date>();

  async function call(method: string, path: string, as: Credential, body?: unknown, extra: Record<string, unknown> = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...(extra as Record<string, string>) };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (as !== 'none' && 'bearer' in as) headers.authorization = `Bearer ${as.bearer}`;
    if (as !== 'none' && 'session' in as) {
      headers.cookie = as.session.cookie;
      headers['x-csrf-token'] = as.session.csrfToken;
    }
    const res = await server.app.request(path, {
      method: method.toUpperCase(),
      headers,
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    if (res.headers.get('content-type')?.startsWith('text/event-stream')) return { status: res.status, headers: res.headers, body: res.body };
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  }

  function worker(): DeliveryWorkerDeps {
    return {
      db: store.db,
      clock: server.clock,
      secretBox: server.services.webhooks.secretBox,
      policy: { allowList: server.services.webhooks.allowList },
      ca: certificate.cert,
      timeoutMs: 5_000,
      random: () => 0.5,
    };
  }

  async function seed(t: TestApp, label: 'a' | 'b'): Promise<Tenant> {
    const receiver = await startHttpsTestReceiver(certificate, (request) => {
      receivedAt.set(request, server.clock.now());
      return { status: 200 };
    });
    const admin = await t.login();
    const tenant = { label, t, workspaceId: t.workspaceId, key: t.apiKey, admin, receiver } as Tenant;
    const ok = (r: Answer, status: number) => {
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      return r.body;
    };
    // Before the destination: its integration.connected has no delivery (the createIntegration case counts them).
    const integration = ok(await call('POST', '/integrations', { session: admin }, { integration: 'crm', url: mcpServer.url }), 201);
    const destination = ok(
      await call('POST', '/webhook-destinations', { session: admin }, { url: `${receiver.origin}/${label}`, events: [...WORKSPACE_EVENT_TYPES] }),
      201,
    );
    tenant.destinationSecret = destination.secret;
    const invoked = ok(await call('POST', '/v1/inference', { bearer: tenant.key }, seedRequest(label), { 'Idempotency-Key': SEED_IDEMPOTENCY_KEY }), 200);
    ok(await call('POST', '/v1/inference', { bearer: tenant.key }, secondRequest(label)), 200);
    const detail = ok(await call('GET', `/runs/${invoked.runId}`, { bearer: tenant.key }), 200);
    // It wrote a draft and waits for the approval of the send (the approval cases' target).
    expect(detail.run).toMatchObject({ status: 'in_progress', waitingFor: { action: 'email.send' } });
    expect(detail.steps.length).toBeGreaterThan(0);
    expect(detail.toolCalls.length).toBeGreaterThan(0);
    const [approval] = await store.db.query<{ id: string }>(`SELECT id FROM approvals WHERE run_id = $1 AND status = 'pending'`, [invoked.runId]);
    expect(approval).toBeDefined();
    const [draft] = await store.db.query<{ id: string }>(`SELECT id FROM drafts WHERE run_id = $1`, [invoked.runId]);
    expect(draft).toBeDefined();
    const inbound = ok(await call('POST', '/inbound-webhooks', { session: admin }, { slug: `${label}-crm-leads`, agentSlug: 'sales' }), 201);
    tenant.inboundSecret = inbound.secret;
    // Without the worker the inbound run stays queued, in_progress: the target of the cancel cases.
    const raw = JSON.stringify({ event: 'lead.created', contact: { name: 'Dana' } });
    const ingested = ok(
      await call('POST', `/webhooks/inbound/${inbound.slug}`, 'none', raw, {
        'X-SERVICE-Signature': signInboundBody(raw, inbound.secret),
        // The same event id in both workspaces: event ids are unique per webhook, so both are new.
        'X-SERVICE-Event-Id': 'evt-1',
      }),
      200,
    );
    expect(ingested.code).toBe('ok');
    const key = ok(await call('POST', '/api-keys', { session: admin }, { name: `${label}-ci`, scopes: ['usage:read'] }), 201);
    tenant.mcpToken = ok(await call('POST', '/v1/mcp/tenant/tokens', { bearer: tenant.key }), 201).token;
    const invitation = ok(await call('POST', '/workspace/invitations', { session: admin }, { email: `seeded-invitee-${label}@example.com` }), 201);
    tenant.ids = {
      run: invoked.runId,
      queuedRun: ingested.runId,
      key: key.id,
      inbound: inbound.slug,
      destination: destination.id,
      approval: approval!.id,
      invitation: invitation.id,
      draft: draft!.id,
      integration: integration.id,
    };
    return tenant;
  }

  beforeAll(async () => {
    store = await open();
    mcpServer = await startCrmServer();
    const deps = { webhooks: { secretKey: SECRET_KEY, allowList: ['127.0.0.1'] }, integrations: { ca: mcpServer.ca } };
    // One deployment (A's app) serves both workspaces; B's app only made B's workspace and admin.
    server = await createTestApp({ db: store.db, deps });
    const other = await createTestApp({ db: store.db, deps });
    Object.assign(ctx, { db: store.db, call, clock: server.clock });
    ctx.A = await seed(server, 'a');
    ctx.B = await seed(other, 'b');
    await pauseAgent(store.db, server.clock, ctx.A.workspaceId, 'legal', 'isolation test');
    await drainAll();
    // A delivery that was given up: the target of B's replay attempt.
    await store.db.query(
      `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL
        WHERE id = (SELECT id FROM deliveries WHERE destination_id = $1 ORDER BY id LIMIT 1)`,
      [ctx.A.ids.destination],
    );
    seeded = await snapshot(store.db, ctx.A.workspaceId);
  });
  afterAll(async () => {
    await ctx.A?.receiver.close();
    await ctx.B?.receiver.close();
    await mcpServer?.close();
    await store?.cleanup();
  });

  /** A new resource of the tenant, for a call that may change it (the seeded ones stay as they are). */
  async function freshOf(tenant: Tenant, resource: Resource): Promise<string> {
    const as = { session: tenant.admin };
    const created = async (res: Promise<Answer>) => {
      const r = await res;
      expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
      return r.body;
    };
    switch (resource) {
      case 'run':
        return (await created(call('POST', '/v1/inference', { bearer: tenant.key }, ask('Hello')))).runId;
      case 'approval': {
        const { runId } = await created(call('POST', '/v1/inference', { bearer: tenant.key }, ask('Send an email to the new lead', { agentSlug: 'sales' })));
        const [approval] = await store.db.query<{ id: string }>(`SELECT id FROM approvals WHERE run_id = $1`, [runId]);
        return approval!.id;
      }
      case 'draft': {
        const { runId } = await created(call('POST', '/v1/inference', { bearer: tenant.key }, ask('Send an email to the new lead', { agentSlug: 'sales' })));
        const [draft] = await store.db.query<{ id: string }>(`SELECT id FROM drafts WHERE run_id = $1`, [runId]);
        return draft!.id;
      }
      case 'queuedRun': {
        const raw = JSON.stringify({ event: 'lead.created', n: randomBase62(8) });
        const headers = { 'X-SERVICE-Signature': signInboundBody(raw, tenant.inboundSecret), 'X-SERVICE-Event-Id': `evt-${randomBase62(10)}` };
        return (await created(call('POST', `/webhooks/inbound/${tenant.ids.inbound}`, 'none', raw, headers))).runId;
      }
      case 'key':
        return (await created(call('POST', '/api-keys', as, { name: 'fresh', scopes: ['usage:read'] }))).id;
      case 'inbound':
        return (await created(call('POST', '/inbound-webhooks', as, { slug: `${tenant.label}-${randomBase62(8).toLowerCase()}` }))).slug;
      case 'invitation':
        return (await created(call('POST', '/workspace/invitations', as, { email: `fresh-${randomBase62(8).toLowerCase()}@example.com` }))).id;
      case 'integration':
        // B's own integration.connected goes to B's destination, which the outbound checks allow.
        return (await created(call('POST', '/integrations', as, { integration: `fresh-${randomBase62(8).toLowerCase()}`, url: mcpServer.url }))).id;
      case 'destination':
        // Subscribed to an event no run of the suite sends; a ping to it goes to a path of its own.
        return (await created(call('POST', '/webhook-destinations', as, { url: `${tenant.receiver.origin}/${tenant.label}-extra`, events: ['run.failed'] })))
          .id;
    }
  }

  async function drainAll(): Promise<number> {
    let sent = 0;
    for (;;) {
      const batch = await runDeliveryBatch(worker());
      sent += batch.claimed;
      if (batch.claimed === 0) return sent;
    }
  }

  describe.each(routes.map((route) => ({ route, id: route.operationId, label: `${route.method.toUpperCase()} ${route.path}` })))(
    '$id ($label)',
    ({ route }) => {
      it("B's credentials never reach A's data", async () => {
        const entry = (MATRIX as Record<string, IsolationCase>)[route.operationId];
        if (!entry) expect.fail(`${route.operationId} is not classified in MATRIX`);
        // A fresh rate-limit window for every case: the limits are not what is tested here.
        server.clock.advance(61_000);
        const { A, B } = ctx;
        if (entry.kind === 'resource') {
          const as = credentialFor(route, B);
          const fill = (id: string) => route.path.replace(/\{[^}]+\}/, id);
          const foreign = await call(route.method, fill(A.ids[entry.resource]), as, entry.body);
          const missing = await call(route.method, fill(madeUpLike(A.ids[entry.resource])), as, entry.body);
          expect(foreign.status, JSON.stringify(foreign.body)).toBe(404);
          expect(foreign.headers.get('content-type')).toMatch(/^application\/json/);
          expect(foreign.headers.get('x-request-id')).toMatch(/^req_/);
          expect(foreign.body.error).toBe('not_found');
          expect(missing.status).toBe(404);
          expect(omitRequestId(foreign.body)).toEqual(omitRequestId(missing.body));
          // The same call on a resource of B's own, made for it, succeeds: the 404 is about whose id it is.
          const own = await call(route.method, fill(await freshOf(B, entry.resource)), as, entry.body);
          expect(own.status, JSON.stringify(own.body)).toBeGreaterThanOrEqual(200);
          expect(own.status, JSON.stringify(own.body)).toBeLessThan(300);
        } else if (entry.kind === 'list') {
          const key = entry.resource === 'inbound' ? 'slug' : 'id';
          const listed = async (tenant: Tenant) => {
            const res = await call(route.method, route.path, credentialFor(route, tenant));
            expect(res.status).toBe(200);
            return (res.body.data as Record<string, string>[]).map((item) => item[key]);
          };
          const seen = await listed(B);
          expect(seen).toContain(B.ids[entry.resource]);
          expect(seen).not.toContain(A.ids[entry.resource]);
          if (entry.resource === 'run') expect(seen).not.toContain(A.ids.queuedRun);
          expect(await listed(A)).toContain(A.ids[entry.resource]);
        } else {
          await entry.check(ctx);
        }
      });
    },
  );

  it("leaves every resource of A as it was: B's calls changed nothing", async () => {
    expect(await snapshot(store.db, ctx.A.workspaceId)).toEqual(seeded);
    const { A, call: c } = { A: ctx.A, call };
    const run = await c('GET', `/runs/${A.ids.queuedRun}`, { bearer: A.key });
    expect(run.body.run.status).toBe('in_progress');
    const keys = await c('GET', '/api-keys', { session: A.admin });
    expect((keys.body.data as { id: string; status: string }[]).find((k) => k.id === A.ids.key)?.status).toBe('active');
  });

  describe('outbound', () => {
    it("a run started by A's inbound event runs in A and reports to A's destination only", async () => {
      const { A, B } = ctx;
      const failures: unknown[] = [];
      const execute = inboundRunExecutor(server.services.runs, (error) => failures.push(error));
      while ((await handOverInboundRuns({ db: store.db, clock: server.clock, execute })) > 0);
      expect(failures).toEqual([]);
      for (const tenant of [A, B]) {
        const run = await server.services.runs.waitForTerminal(tenant.workspaceId, tenant.ids.queuedRun);
        expect(run.status).toBe('completed');
      }
      await drainAll();
      const completedRuns = (tenant: Tenant) =>
        tenant.receiver.received
          .map((r) => JSON.parse(r.body.toString('utf8')) as { type: string; data: { run_id?: string } })
          .filter((e) => e.type === 'run.completed')
          .map((e) => e.data.run_id);
      expect(completedRuns(A)).toContain(A.ids.queuedRun);
      expect(completedRuns(A)).not.toContain(B.ids.queuedRun);
      expect(completedRuns(B)).toContain(B.ids.queuedRun);
      expect(completedRuns(B)).not.toContain(A.ids.queuedRun);
    });

    it("A's events reach only A's destination, signed with A's secret; B's only B's", async () => {
      await drainAll();
      const { A, B } = ctx;
      for (const [own, other] of [
        [A, B],
        [B, A],
      ] as const) {
        expect(own.receiver.received.length).toBeGreaterThan(0);
        const types: string[] = [];
        for (const request of own.receiver.received) {
          const envelope = JSON.parse(request.body.toString('utf8')) as { tenant_id: string };
          expect(envelope.tenant_id).toBe(own.workspaceId);
          const text = request.body.toString('utf8');
          for (const id of [other.workspaceId, other.ids.run, other.ids.approval, other.ids.queuedRun]) expect(text).not.toContain(id);
          // Destinations made by the matrix's own-resource calls have secrets of their own.
          if (request.path !== `/${own.label}`) continue;
          const headers = request.headers as Record<string, string>;
          const mine = await verifyWebhook({ rawBody: request.body, headers, secret: own.destinationSecret, now: receivedAt.get(request)! });
          const theirs = await verifyWebhook({ rawBody: request.body, headers, secret: other.destinationSecret, now: receivedAt.get(request)! });
          expect(mine.ok, `${request.path} verifies with its own workspace's secret`).toBe(true);
          expect(theirs).toMatchObject({ ok: false, reason: 'signature_mismatch' });
          if (mine.ok) {
            expect(mine.event.tenant_id).toBe(own.workspaceId);
            types.push(mine.event.type);
          }
        }
        expect(types).toEqual(expect.arrayContaining(['run.completed', 'approval.created']));
        // B's integration (createIntegration) went to B only; nobody pinged A's destination.
        expect(types.includes('integration.connected')).toBe(own === B);
        expect(types).not.toContain('ping');
      }
    });
  });

  it("A's resources in their other states (revoked, paused, decided, ended) still answer B exactly as a made-up id", async () => {
    const { A, B } = ctx;
    const asA = { session: A.admin };
    const changed = [
      await call('DELETE', `/api-keys/${A.ids.key}`, asA),
      await call('POST', `/inbound-webhooks/${A.ids.inbound}/pause`, asA),
      await call('POST', `/webhook-destinations/${A.ids.destination}/pause`, asA),
      await call('POST', `/approvals/${A.ids.approval}/decision`, asA, { decision: 'rejected' }),
      await call('DELETE', `/workspace/invitations/${A.ids.invitation}`, asA),
    ];
    expect(changed.map((r) => r.status)).toEqual([200, 200, 200, 200, 204]);
    const check = async () => {
      for (const route of routes) {
        const entry = (MATRIX as Record<string, IsolationCase>)[route.operationId]!;
        if (entry.kind !== 'resource') continue;
        server.clock.advance(61_000);
        const as = credentialFor(route, B);
        const fill = (id: string) => route.path.replace(/\{[^}]+\}/, id);
        const foreign = await call(route.method, fill(A.ids[entry.resource]), as, entry.body);
        const missing = await call(route.method, fill(madeUpLike(A.ids[entry.resource])), as, entry.body);
        expect({ op: route.operationId, status: foreign.status, body: omitRequestId(foreign.body) }).toEqual({
          op: route.operationId,
          status: 404,
          body: omitRequestId(missing.body),
        });
      }
    };
    await check();
    // Revoked is the inbound webhook's last state.
    expect((await call('DELETE', `/inbound-webhooks/${A.ids.inbound}`, asA)).status).toBe(200);
    await check();
  });
});
