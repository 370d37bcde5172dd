/**
 * @module The Prism mock keeps the contract: every operation, called through a typed openapi-fetch client,
 * answers its documented example; and every operation answers at least one documented error (asked with
 * `Prefer: code=…`) whose body validates against the contract's schema.
 */
import { readFileSync } from 'node:fs';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import createClient from 'openapi-fetch';
import type { paths } from '../generated/types.ts';
import { startPrism, type Prism } from './support/prism.ts';
import { compileResponseValidator, type Bundle } from './support/bundle.ts';

const bundle = JSON.parse(readFileSync(new URL('../generated/openapi.json', import.meta.url), 'utf8')) as Bundle;

const API_KEY = 'service_sk_live_Xb7Qm2Lp9Tn4Vr8Kc1Zw5Hd3';
const MCP_TOKEN = 'service_mcp_Vb8Nk4R9Qe3Tx7Lm2Hd6Zc1Wq5Jp0Ys3';
const SESSION = 'service_session=Qm9yZWFsaXMtc2Vzc2lvbi10b2tlbi0wMDAx';
const CSRF = 'csrf_Hk3vQ9sLw2Xr7Tn4Bm8Yp1Zc';
const RUN_ID = 'run_7Hk2Lm9QvX4pT8sW3nB6';
const KEY_ID = 'key_4Fq8Zr2Mx7Lp1Vt9';

const bearer = { Authorization: `Bearer ${API_KEY}` };
const mcp = { Authorization: `Bearer ${MCP_TOKEN}` };
const session = { Cookie: SESSION };
const csrf = { 'X-CSRF-Token': CSRF };
const signed = { 'X-SERVICE-Signature': 'a'.repeat(64), 'X-SERVICE-Event-Id': 'lead-2026-11-22-000184' };

const inference = {
  alias: 'Sonata' as const,
  agentSlug: 'sales',
  messages: [{ role: 'user' as const, content: 'Draft a follow-up email to Dana Whitfield about the Q4 renewal.' }],
};
const message = { alias: 'Sonata' as const, effort: 'high' as const, messages: [{ role: 'user' as const, content: 'Summarise last quarter.' }] };
const newKey = { name: 'CRM integration', scopes: ['orchestrator:invoke', 'usage:read'], expiresInDays: 365 };
const lead = { event: 'lead.created', id: 'lead_000184', contact: { name: 'Dana Whitfield' } };
const DST_ID = 'dst_5Lx2Qw8Nm4Rt7Vb1K';
const INT_ID = 'int_3Fg7Hj1Kl5Zx9Cv2Bn';
const hook = { slug: 'crm-leads', agentSlug: 'sales', algorithm: 'sha256' as const, timestampRequired: true };
const destination = { url: 'https://hooks.northwind.example/agent-events', events: ['run.completed' as const] };
const rpc = { jsonrpc: '2.0' as const, id: 1, method: 'tools/list' };
const toolCall = {
  jsonrpc: '2.0' as const,
  id: 1,
  method: 'tools/call',
  params: { name: 'invoke_agent', arguments: { alias: 'Prelude', agentSlug: 'finance', message: 'What is our outstanding receivables total?' } },
};
const MCP_SESSION = 'mcs_9Xv2Lq7Tn4Rb8Kc1Zw5Hd3Mf6Ps0YaQe';

type Call = (
  client: ReturnType<typeof createClient<paths>>,
  headers?: Record<string, string>,
) => Promise<{ response: Response; data?: unknown; error?: unknown }>;

const operator = { Authorization: 'Bearer service_op_Zq3Lm8Vx1Tn6Kp4Rw9Hd2Cb7Yf5Js0Ga' };
const WORKSPACE_ID = 'wksp_X7P5oJGqOLi5uAE9Tmat';
const USER_ID = 'usr_3Pw7Lk2Qm9Xv4Tn8Rb';
const INVITATION_ID = 'inv_4Tq8Zr2Mx7Lp1Vt9Ka';

/** One typed call per operation of the contract, keyed by operationId. */
const calls: Record<string, Call> = {
  createInference: (c, h) => c.POST('/v1/inference', { body: inference, headers: { ...bearer, ...h } }),
  getRun: (c, h) => c.GET('/runs/{run_id}', { params: { path: { run_id: RUN_ID } }, headers: { ...bearer, ...h } }),
  listRuns: (c, h) => c.GET('/runs', { params: { query: { status: 'completed', limit: 20 } }, headers: { ...bearer, ...h } }),
  cancelRun: (c, h) => c.POST('/runs/{run_id}/cancel', { params: { path: { run_id: RUN_ID } }, headers: { ...bearer, ...h } }),
  getCurrentUsage: (c, h) => c.GET('/usage/current', { headers: { ...bearer, ...h } }),
  ingestInboundEvent: (c, h) => c.POST('/webhooks/inbound/{slug}', { params: { path: { slug: 'crm-leads' } }, body: lead, headers: { ...signed, ...h } }),
  openMcpStream: (c, h) => c.GET('/v1/mcp/tenant/sse', { headers: { ...mcp, ...h }, parseAs: 'text' }),
  callMcpRpc: (c, h) => c.POST('/v1/mcp/tenant/rpc', { body: rpc, headers: { ...mcp, ...h } }),
  postMcpMessage: (c, h) => c.POST('/v1/mcp/tenant', { params: { header: { 'Mcp-Session-Id': MCP_SESSION } }, body: toolCall, headers: { ...mcp, ...h } }),
  endMcpSession: (c, h) => c.DELETE('/v1/mcp/tenant', { params: { header: { 'Mcp-Session-Id': MCP_SESSION } }, headers: { ...mcp, ...h } }),
  createMcpToken: (c, h) => c.POST('/v1/mcp/tenant/tokens', { body: { expiresInSeconds: 3600 }, headers: { ...bearer, ...h } }),
  listApiKeys: (c, h) => c.GET('/api-keys', { headers: { ...session, ...h } }),
  createApiKey: (c, h) => c.POST('/api-keys', { params: { header: csrf }, body: newKey, headers: { ...session, ...h } }),
  rotateApiKey: (c, h) => c.POST('/api-keys/{id}/rotate', { params: { path: { id: KEY_ID }, header: csrf }, headers: { ...session, ...h } }),
  revokeApiKey: (c, h) => c.DELETE('/api-keys/{id}', { params: { path: { id: KEY_ID }, header: csrf }, headers: { ...session, ...h } }),
  login: (c, h) => c.POST('/auth/login', { body: { email: 'admin@northwind.example', password: 'correct-horse', totpCode: '492039' }, headers: h }),
  logout: (c, h) => c.POST('/auth/logout', { params: { header: csrf }, headers: { ...session, ...h } }),
  getSession: (c, h) => c.GET('/auth/session', { headers: { ...session, ...h } }),
  startSsoSignIn: (c, h) => c.POST('/auth/sso/start', { body: { email: 'dana@northwind.example' }, headers: h }),
  finishSsoSignIn: (c, h) => c.POST('/auth/sso/callback', { body: { state: 'Yq3vWb9Lm2Xr7Tn4', code: '4Tn8Rb3Pw7Lk2Qm9Xv' }, headers: h }),
  getSsoSettings: (c, h) => c.GET('/workspace/sso', { headers: { ...session, ...h } }),
  updateSsoSettings: (c, h) =>
    c.PUT('/workspace/sso', {
      params: { header: csrf },
      body: { issuer: 'https://login.northwind.example', clientId: 'agent-service', allowedDomains: ['northwind.example'] },
      headers: { ...session, ...h },
    }),
  removeSsoSettings: (c, h) => c.DELETE('/workspace/sso', { params: { header: csrf }, headers: { ...session, ...h } }),
  listAgents: (c, h) => c.GET('/v1/agents', { headers: { ...bearer, ...h } }),
  sendAgentMessage: (c, h) => c.POST('/v1/agents/{slug}/messages', { params: { path: { slug: 'sales' } }, body: message, headers: { ...bearer, ...h } }),
  sendOrchestratorMessage: (c, h) => c.POST('/v1/orchestrator/messages', { body: message, headers: { ...bearer, ...h } }),
  getRunV1: (c, h) => c.GET('/v1/runs/{run_id}', { params: { path: { run_id: RUN_ID } }, headers: { ...bearer, ...h } }),
  getRunEvents: (c, h) => c.GET('/runs/{run_id}/events', { params: { path: { run_id: RUN_ID } }, headers: { ...bearer, ...h }, parseAs: 'text' }),
  getRunEventsV1: (c, h) =>
    c.GET('/v1/runs/{run_id}/events', { params: { path: { run_id: RUN_ID }, query: { after: 0 } }, headers: { ...bearer, ...h }, parseAs: 'text' }),
  listRunsV1: (c, h) => c.GET('/v1/runs', { params: { query: { agent_slug: 'sales', offset: 0 } }, headers: { ...bearer, ...h } }),
  cancelRunV1: (c, h) => c.POST('/v1/runs/{run_id}/cancel', { params: { path: { run_id: RUN_ID } }, headers: { ...bearer, ...h } }),
  getUsageV1: (c, h) => c.GET('/v1/usage', { headers: { ...bearer, ...h } }),
  ingestInboundEventV1: (c, h) => c.POST('/v1/webhooks/inbound/{slug}', { params: { path: { slug: 'crm-leads' } }, body: lead, headers: { ...signed, ...h } }),
  listApiKeysV1: (c, h) => c.GET('/v1/api-keys', { headers: { ...session, ...h } }),
  createApiKeyV1: (c, h) => c.POST('/v1/api-keys', { params: { header: csrf }, body: newKey, headers: { ...session, ...h } }),
  rotateApiKeyV1: (c, h) => c.POST('/v1/api-keys/{id}/rotate', { params: { path: { id: KEY_ID }, header: csrf }, headers: { ...session, ...h } }),
  revokeApiKeyV1: (c, h) => c.DELETE('/v1/api-keys/{id}', { params: { path: { id: KEY_ID }, header: csrf }, headers: { ...session, ...h } }),
  listInboundWebhooks: (c, h) => c.GET('/inbound-webhooks', { headers: { ...session, ...h } }),
  createInboundWebhook: (c, h) => c.POST('/inbound-webhooks', { params: { header: csrf }, body: hook, headers: { ...session, ...h } }),
  revokeInboundWebhook: (c, h) =>
    c.DELETE('/inbound-webhooks/{slug}', { params: { path: { slug: 'crm-leads' }, header: csrf }, headers: { ...session, ...h } }),
  pauseInboundWebhook: (c, h) =>
    c.POST('/inbound-webhooks/{slug}/pause', { params: { path: { slug: 'crm-leads' }, header: csrf }, headers: { ...session, ...h } }),
  resumeInboundWebhook: (c, h) =>
    c.POST('/inbound-webhooks/{slug}/resume', { params: { path: { slug: 'crm-leads' }, header: csrf }, headers: { ...session, ...h } }),
  listWebhookDestinations: (c, h) => c.GET('/webhook-destinations', { headers: { ...session, ...h } }),
  createWebhookDestination: (c, h) => c.POST('/webhook-destinations', { params: { header: csrf }, body: destination, headers: { ...session, ...h } }),
  rotateWebhookDestinationSecret: (c, h) =>
    c.POST('/webhook-destinations/{id}/rotate-secret', { params: { path: { id: DST_ID }, header: csrf }, headers: { ...session, ...h } }),
  pauseWebhookDestination: (c, h) =>
    c.POST('/webhook-destinations/{id}/pause', { params: { path: { id: DST_ID }, header: csrf }, headers: { ...session, ...h } }),
  resumeWebhookDestination: (c, h) =>
    c.POST('/webhook-destinations/{id}/resume', { params: { path: { id: DST_ID }, header: csrf }, headers: { ...session, ...h } }),
  pingWebhookDestination: (c, h) =>
    c.POST('/webhook-destinations/{id}/ping', { params: { path: { id: DST_ID }, header: csrf }, headers: { ...session, ...h } }),
  sendWebhookDestinationTestEvent: (c, h) =>
    c.POST('/webhook-destinations/{id}/test-events', {
      params: { path: { id: DST_ID }, header: csrf },
      body: { type: 'run.completed' },
      headers: { ...session, ...h },
    }),
  replayWebhookDestination: (c, h) =>
    c.POST('/webhook-destinations/{id}/replay', { params: { path: { id: DST_ID }, header: csrf }, headers: { ...session, ...h } }),
  listDestinationDeliveries: (c, h) =>
    c.GET('/webhook-destinations/{id}/deliveries', { params: { path: { id: DST_ID }, query: { status: 'failed', limit: 20 } }, headers: { ...session, ...h } }),
  listWorkspaceAgents: (c, h) => c.GET('/agents', { headers: { ...session, ...h } }),
  pauseAgent: (c, h) =>
    c.POST('/agents/{slug}/pause', { params: { path: { slug: 'finance' }, header: csrf }, body: { reason: 'Month-end close' }, headers: { ...session, ...h } }),
  resumeAgent: (c, h) => c.POST('/agents/{slug}/resume', { params: { path: { slug: 'finance' }, header: csrf }, headers: { ...session, ...h } }),
  getAgentConfiguration: (c, h) => c.GET('/agents/{slug}/configuration', { params: { path: { slug: 'sales' } }, headers: { ...session, ...h } }),
  updateAgentConfiguration: (c, h) =>
    c.PUT('/agents/{slug}/configuration', {
      params: { path: { slug: 'sales' }, header: csrf },
      body: { instructions: null, stepLimit: 8, tools: null, approvals: { 'crm.update': 'required' } },
      headers: { ...session, ...h },
    }),
  listDrafts: (c, h) => c.GET('/drafts', { params: { query: { limit: 20 } }, headers: { ...session, ...h } }),
  getDraft: (c, h) => c.GET('/drafts/{draft_id}', { params: { path: { draft_id: 'drf_3Jv9Xc5Mq1Lt7Rb4Wz' } }, headers: { ...session, ...h } }),
  getDailyUsage: (c, h) => c.GET('/usage/daily', { headers: { ...session, ...h } }),
  getKillSwitches: (c, h) => c.GET('/kill-switches', { headers: { ...session, ...h } }),
  setManualKillSwitch: (c, h) =>
    c.PUT('/kill-switches/manual', { params: { header: csrf }, body: { engaged: true, reason: 'Unexpected spend' }, headers: { ...session, ...h } }),
  listApprovals: (c, h) => c.GET('/approvals', { params: { query: { status: 'pending' } }, headers: { ...session, ...h } }),
  decideApproval: (c, h) =>
    c.POST('/approvals/{approval_id}/decision', {
      params: { path: { approval_id: 'apr_6Wm1Kp8Zt3Qx7Nv2Lb' }, header: csrf },
      body: { decision: 'approved' },
      headers: { ...session, ...h },
    }),
  getLiveness: (c, h) => c.GET('/healthz', { headers: h }),
  getReadiness: (c, h) => c.GET('/readyz', { headers: h }),
  createIntegration: (c, h) =>
    c.POST('/integrations', {
      params: { header: csrf },
      body: { integration: 'crm', url: 'https://mcp.crm.northwind.example/mcp' },
      headers: { ...session, ...h },
    }),
  listIntegrations: (c, h) => c.GET('/integrations', { headers: { ...session, ...h } }),
  getIntegration: (c, h) => c.GET('/integrations/{id}', { params: { path: { id: INT_ID } }, headers: { ...session, ...h } }),
  testIntegration: (c, h) => c.POST('/integrations/{id}/test', { params: { path: { id: INT_ID }, header: csrf }, headers: { ...session, ...h } }),
  pauseIntegration: (c, h) => c.POST('/integrations/{id}/pause', { params: { path: { id: INT_ID }, header: csrf }, headers: { ...session, ...h } }),
  resumeIntegration: (c, h) => c.POST('/integrations/{id}/resume', { params: { path: { id: INT_ID }, header: csrf }, headers: { ...session, ...h } }),
  removeIntegration: (c, h) => c.DELETE('/integrations/{id}', { params: { path: { id: INT_ID }, header: csrf }, headers: { ...session, ...h } }),
  selectWorkspace: (c, h) => c.POST('/auth/workspace', { params: { header: csrf }, body: { workspaceId: WORKSPACE_ID }, headers: { ...session, ...h } }),
  listMembers: (c, h) => c.GET('/workspace/members', { headers: { ...session, ...h } }),
  updateMember: (c, h) =>
    c.PATCH('/workspace/members/{user_id}', { params: { path: { user_id: USER_ID }, header: csrf }, body: { role: 'admin' }, headers: { ...session, ...h } }),
  removeMember: (c, h) => c.DELETE('/workspace/members/{user_id}', { params: { path: { user_id: USER_ID }, header: csrf }, headers: { ...session, ...h } }),
  createInvitation: (c, h) =>
    c.POST('/workspace/invitations', { params: { header: csrf }, body: { email: 'dana@northwind.example' }, headers: { ...session, ...h } }),
  listInvitations: (c, h) => c.GET('/workspace/invitations', { headers: { ...session, ...h } }),
  listAuditEvents: (c, h) => c.GET('/audit-events', { params: { query: { action: 'key.created', limit: 20 } }, headers: { ...session, ...h } }),
  resendInvitation: (c, h) =>
    c.POST('/workspace/invitations/{invitation_id}/resend', {
      params: { path: { invitation_id: INVITATION_ID }, header: csrf },
      headers: { ...session, ...h },
    }),
  revokeInvitation: (c, h) =>
    c.DELETE('/workspace/invitations/{invitation_id}', { params: { path: { invitation_id: INVITATION_ID }, header: csrf }, headers: { ...session, ...h } }),
  previewInvitation: (c, h) => c.POST('/invitations/preview', { body: { token: `service_inv_${'A'.repeat(32)}` }, headers: h }),
  acceptInvitation: (c, h) =>
    c.POST('/invitations/accept', { body: { token: `service_inv_${'A'.repeat(32)}`, password: 'correct-horse-battery' }, headers: h }),
  resetMember: (c, h) =>
    c.POST('/workspace/members/{user_id}/reset', {
      params: { path: { user_id: USER_ID }, header: csrf },
      body: { reset: 'both' },
      headers: { ...session, ...h },
    }),
  previewAccountReset: (c, h) => c.POST('/account-resets/preview', { body: { token: `service_rst_${'A'.repeat(32)}` }, headers: h }),
  redeemAccountReset: (c, h) =>
    c.POST('/account-resets/redeem', { body: { token: `service_rst_${'A'.repeat(32)}`, password: 'correct-horse-battery' }, headers: h }),
  createUserReset: (c, h) => c.POST('/operator/users/resets', { body: { email: 'it@acme.example', reset: 'totp' }, headers: { ...operator, ...h } }),
  listWorkspaces: (c, h) => c.GET('/operator/workspaces', { headers: { ...operator, ...h } }),
  createWorkspace: (c, h) => c.POST('/operator/workspaces', { body: { name: 'Acme Corp', plan: 'starter' }, headers: { ...operator, ...h } }),
  getWorkspace: (c, h) => c.GET('/operator/workspaces/{workspace_id}', { params: { path: { workspace_id: WORKSPACE_ID } }, headers: { ...operator, ...h } }),
  updateWorkspace: (c, h) =>
    c.PATCH('/operator/workspaces/{workspace_id}', {
      params: { path: { workspace_id: WORKSPACE_ID } },
      body: { rpmLimit: 5000 },
      headers: { ...operator, ...h },
    }),
  deleteWorkspace: (c, h) =>
    c.DELETE('/operator/workspaces/{workspace_id}', { params: { path: { workspace_id: WORKSPACE_ID } }, headers: { ...operator, ...h } }),
  listWorkspaceApiKeys: (c, h) =>
    c.GET('/operator/workspaces/{workspace_id}/api-keys', { params: { path: { workspace_id: WORKSPACE_ID } }, headers: { ...operator, ...h } }),
  createWorkspaceApiKey: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/api-keys', { params: { path: { workspace_id: WORKSPACE_ID } }, body: newKey, headers: { ...operator, ...h } }),
  revokeWorkspaceApiKey: (c, h) =>
    c.DELETE('/operator/workspaces/{workspace_id}/api-keys/{id}', {
      params: { path: { workspace_id: WORKSPACE_ID, id: KEY_ID } },
      headers: { ...operator, ...h },
    }),
  rotateWorkspaceApiKey: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/api-keys/{id}/rotate', {
      params: { path: { workspace_id: WORKSPACE_ID, id: KEY_ID } },
      headers: { ...operator, ...h },
    }),
  getWorkspaceKillSwitches: (c, h) =>
    c.GET('/operator/workspaces/{workspace_id}/kill-switches', { params: { path: { workspace_id: WORKSPACE_ID } }, headers: { ...operator, ...h } }),
  setWorkspaceManualKillSwitch: (c, h) =>
    c.PUT('/operator/workspaces/{workspace_id}/kill-switches/manual', {
      params: { path: { workspace_id: WORKSPACE_ID } },
      body: { engaged: true, reason: 'Unexpected spend' },
      headers: { ...operator, ...h },
    }),
  listAgentsOfWorkspace: (c, h) =>
    c.GET('/operator/workspaces/{workspace_id}/agents', { params: { path: { workspace_id: WORKSPACE_ID } }, headers: { ...operator, ...h } }),
  pauseAgentOfWorkspace: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/agents/{slug}/pause', {
      params: { path: { workspace_id: WORKSPACE_ID, slug: 'finance' } },
      body: { reason: 'Month-end close' },
      headers: { ...operator, ...h },
    }),
  resumeAgentOfWorkspace: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/agents/{slug}/resume', {
      params: { path: { workspace_id: WORKSPACE_ID, slug: 'finance' } },
      headers: { ...operator, ...h },
    }),
  listWorkspaceUsers: (c, h) =>
    c.GET('/operator/workspaces/{workspace_id}/users', {
      params: { path: { workspace_id: WORKSPACE_ID } },
      headers: { ...operator, ...h },
    }),
  createWorkspaceUser: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/users', {
      params: { path: { workspace_id: WORKSPACE_ID } },
      body: { email: 'dana@northwind.example', role: 'admin' },
      headers: { ...operator, ...h },
    }),
  listInboundWebhooksOfWorkspace: (c, h) =>
    c.GET('/operator/workspaces/{workspace_id}/inbound-webhooks', {
      params: { path: { workspace_id: WORKSPACE_ID } },
      headers: { ...operator, ...h },
    }),
  createInboundWebhookOfWorkspace: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/inbound-webhooks', {
      params: { path: { workspace_id: WORKSPACE_ID } },
      body: { slug: 'crm-leads', agentSlug: 'sales' },
      headers: { ...operator, ...h },
    }),
  pauseInboundWebhookOfWorkspace: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/inbound-webhooks/{slug}/pause', {
      params: { path: { workspace_id: WORKSPACE_ID, slug: 'crm-leads' } },
      headers: { ...operator, ...h },
    }),
  resumeInboundWebhookOfWorkspace: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/inbound-webhooks/{slug}/resume', {
      params: { path: { workspace_id: WORKSPACE_ID, slug: 'crm-leads' } },
      headers: { ...operator, ...h },
    }),
  revokeInboundWebhookOfWorkspace: (c, h) =>
    c.DELETE('/operator/workspaces/{workspace_id}/inbound-webhooks/{slug}', {
      params: { path: { workspace_id: WORKSPACE_ID, slug: 'crm-leads' } },
      headers: { ...operator, ...h },
    }),
  listWebhookDestinationsOfWorkspace: (c, h) =>
    c.GET('/operator/workspaces/{workspace_id}/webhook-destinations', {
      params: { path: { workspace_id: WORKSPACE_ID } },
      headers: { ...operator, ...h },
    }),
  createWebhookDestinationOfWorkspace: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/webhook-destinations', {
      params: { path: { workspace_id: WORKSPACE_ID } },
      body: { url: 'https://hooks.northwind.example/agent-events', events: ['run.completed'] },
      headers: { ...operator, ...h },
    }),
  rotateWebhookDestinationSecretOfWorkspace: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/webhook-destinations/{id}/rotate-secret', {
      params: { path: { workspace_id: WORKSPACE_ID, id: DST_ID } },
      headers: { ...operator, ...h },
    }),
  pauseWebhookDestinationOfWorkspace: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/webhook-destinations/{id}/pause', {
      params: { path: { workspace_id: WORKSPACE_ID, id: DST_ID } },
      headers: { ...operator, ...h },
    }),
  resumeWebhookDestinationOfWorkspace: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/webhook-destinations/{id}/resume', {
      params: { path: { workspace_id: WORKSPACE_ID, id: DST_ID } },
      headers: { ...operator, ...h },
    }),
  pingWebhookDestinationOfWorkspace: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/webhook-destinations/{id}/ping', {
      params: { path: { workspace_id: WORKSPACE_ID, id: DST_ID } },
      headers: { ...operator, ...h },
    }),
  sendWebhookDestinationTestEventOfWorkspace: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/webhook-destinations/{id}/test-events', {
      params: { path: { workspace_id: WORKSPACE_ID, id: DST_ID } },
      body: { type: 'run.completed' },
      headers: { ...operator, ...h },
    }),
  replayWebhookDestinationOfWorkspace: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/webhook-destinations/{id}/replay', {
      params: { path: { workspace_id: WORKSPACE_ID, id: DST_ID } },
      headers: { ...operator, ...h },
    }),
  decideApprovalOfWorkspace: (c, h) =>
    c.POST('/operator/workspaces/{workspace_id}/approvals/{approval_id}/decision', {
      params: { path: { workspace_id: WORKSPACE_ID, approval_id: 'apr_6Wm1Kp8Zt3Qx7Nv2Lb' } },
      body: { decision: 'approved', decidedBy: 'dana@northwind.example' },
      headers: { ...operator, ...h },
    }),
};

const operations = Object.entries(bundle.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => ['get', 'post', 'delete', 'put', 'patch'].includes(method))
    .map(([method, op]) => ({ path, method, op })),
);

let prism: Prism;
let client: ReturnType<typeof createClient<paths>>;

beforeAll(async () => {
  prism = await startPrism(['mock', 'generated/openapi.yaml']);
  client = createClient<paths>({ baseUrl: prism.baseUrl });
}, 60_000);
afterAll(async () => prism?.stop());

describe('Prism mock', () => {
  it('has a typed call for every operation of the contract, and no other', () => {
    expect(Object.keys(calls).sort()).toEqual(operations.map((o) => o.op.operationId).sort());
  });

  describe.each(operations.map((o) => [o.op.operationId, o] as const))('%s', (operationId, { op }) => {
    it('answers its documented example with the documented headers', async () => {
      const { response, data } = await calls[operationId]!(client);
      const [status, declared] = Object.entries(op.responses).find(([s]) => s.startsWith('2'))!;
      expect(response.status).toBe(Number(status));
      // Health routes (x-operations) are outside the rate limits and document no rate-limit headers.
      const limited = !(op as { 'x-operations'?: boolean })['x-operations'];
      for (const header of ['x-request-id', ...(limited ? ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'] : [])]) {
        expect(response.headers.get(header), header).not.toBeNull();
      }
      const media = declared.content ? Object.entries(declared.content)[0] : undefined;
      if (!media) return; // 204 / 202: no body
      const [type, { examples }] = media;
      const example = Object.values(examples ?? {})[0]?.value;
      expect(example, 'the contract has an example').toBeDefined();
      expect(response.headers.get('content-type')).toContain(type);
      // Prism trims the trailing blank line of a text example; the events themselves must match.
      if (typeof example === 'string') expect(String(data).trimEnd()).toBe(example.trimEnd());
      else expect(data).toEqual(example);
    });

    it('answers a documented error whose body validates against the schema', async () => {
      // Health routes answer no 4xx: their documented 5xx instead.
      const statuses = Object.keys(op.responses);
      const errorStatus = (statuses.find((s) => s.startsWith('4')) ?? statuses.find((s) => s.startsWith('5')))!;
      const { response, error: body } = await calls[operationId]!(client, { Prefer: `code=${errorStatus}` });
      expect(response.status).toBe(Number(errorStatus));
      expect(response.headers.get('x-request-id')).not.toBeNull();
      if (errorStatus === '429') expect(response.headers.get('retry-after')).not.toBeNull();
      const validate = compileResponseValidator(bundle, op, errorStatus);
      expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
      expect(body).toMatchObject({ error: expect.stringMatching(/^[a-z][a-z0-9_]*$/) });
    });
  });

  it('answers the stream example as text/event-stream when asked', async () => {
    const { response, data: text } = await client.POST('/v1/inference', {
      body: { ...inference, stream: true },
      headers: { ...bearer, Accept: 'text/event-stream' },
      parseAs: 'text',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(text).toMatch(/^data: \{"delta":/);
    expect(text).toContain('event: end\ndata: {"done":true,"runId":"run_');
  });

  it('refuses a body that breaks a field rule (messages must not be empty)', async () => {
    const { response } = await client.POST('/v1/inference', {
      body: { alias: 'Sonata', messages: [] },
      headers: bearer,
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
  });
});
