/**
 * @module The contract's routes as the app mounts them.
 *
 * TEMPORARY: a hand-written stand-in for generated/routes.ts (the brief's operation table, with
 * schemas for the operations built so far). Replaced by a re-export once `pnpm generate` writes it.
 */
import { z } from 'zod';
import type { RouteSpec, SecurityRequirement } from './routes/route-spec.ts';

const key = (...scopes: string[]): SecurityRequirement => ({ scheme: 'apiKey', scopes });
const admin: SecurityRequirement = { scheme: 'adminSession', scopes: [] };
const mcp: SecurityRequirement = { scheme: 'mcpToken', scopes: ['mcp:tenant'] };
const inbound: SecurityRequirement = { scheme: 'inboundSignature', scopes: [] };

const csrfHeaders = z.object({ 'X-CSRF-Token': z.string().min(16).max(128).regex(/^[A-Za-z0-9_-]+$/) });
const keyIdParams = z.object({ id: z.string().regex(/^key_[A-Za-z0-9]{16,32}$/) });
const scope = z.string().min(1).max(100);
const json = (schema: z.ZodType, required = true) => ({ contentType: 'application/json', schema, required });

type Spec = Omit<RouteSpec, 'responses' | 'request'> & { request?: RouteSpec['request'] };
const r = (spec: Spec): RouteSpec => ({ request: {}, responses: {}, ...spec });

const keyRoutes = (prefix: string, suffix: string): RouteSpec[] => [
  r({ method: 'get', path: `${prefix}/api-keys`, operationId: `listApiKeys${suffix}`, security: [admin] }),
  r({
    method: 'post',
    path: `${prefix}/api-keys`,
    operationId: `createApiKey${suffix}`,
    security: [admin],
    request: {
      headers: csrfHeaders,
      body: json(
        z.strictObject({
          name: z.string().min(1).max(100),
          scopes: z.array(scope).min(1).max(32),
          expiresInDays: z.number().int().min(1).max(730).default(365),
        }),
      ),
    },
  }),
  r({
    method: 'post',
    path: `${prefix}/api-keys/{id}/rotate`,
    operationId: `rotateApiKey${suffix}`,
    security: [admin],
    request: { params: keyIdParams, headers: csrfHeaders },
  }),
  r({
    method: 'delete',
    path: `${prefix}/api-keys/{id}`,
    operationId: `revokeApiKey${suffix}`,
    security: [admin],
    request: { params: keyIdParams, headers: csrfHeaders },
  }),
];

export const routes: readonly RouteSpec[] = [
  r({ method: 'post', path: '/v1/inference', operationId: 'createInference', security: [key('orchestrator:invoke')] }),
  r({ method: 'get', path: '/runs/{run_id}', operationId: 'getRun', security: [key('orchestrator:invoke'), key('tenant:read')] }),
  r({ method: 'get', path: '/runs', operationId: 'listRuns', security: [key('orchestrator:invoke'), key('tenant:read')] }),
  r({ method: 'post', path: '/runs/{run_id}/cancel', operationId: 'cancelRun', security: [key('orchestrator:invoke')] }),
  r({ method: 'get', path: '/usage/current', operationId: 'getCurrentUsage', security: [key('usage:read')] }),
  r({ method: 'post', path: '/webhooks/inbound/{slug}', operationId: 'ingestInboundEvent', security: [inbound] }),
  r({ method: 'get', path: '/v1/mcp/tenant/sse', operationId: 'openMcpStream', security: [mcp] }),
  r({ method: 'post', path: '/v1/mcp/tenant/rpc', operationId: 'callMcpRpc', security: [mcp] }),
  r({
    method: 'post',
    path: '/v1/mcp/tenant/tokens',
    operationId: 'createMcpToken',
    security: [key('mcp:tenant')],
    request: { body: json(z.strictObject({ expiresInSeconds: z.number().int().min(60).max(86400).default(3600) }), false) },
  }),
  ...keyRoutes('', ''),
  r({
    method: 'post',
    path: '/auth/login',
    operationId: 'login',
    security: [],
    request: {
      body: json(
        z.strictObject({
          email: z.string().min(3).max(254),
          password: z.string().min(1).max(1024),
          totpCode: z.string().regex(/^[0-9]{6}$/),
        }),
      ),
    },
  }),
  r({ method: 'post', path: '/auth/logout', operationId: 'logout', security: [admin], request: { headers: csrfHeaders } }),
  r({ method: 'get', path: '/v1/agents', operationId: 'listAgents', security: [key('departments:read')] }),
  r({ method: 'post', path: '/v1/agents/{slug}/messages', operationId: 'sendAgentMessage', security: [key('orchestrator:invoke')] }),
  r({ method: 'post', path: '/v1/orchestrator/messages', operationId: 'sendOrchestratorMessage', security: [key('orchestrator:invoke')] }),
  r({ method: 'get', path: '/v1/runs/{run_id}', operationId: 'getRunV1', security: [key('orchestrator:invoke'), key('tenant:read')] }),
  r({ method: 'get', path: '/v1/runs', operationId: 'listRunsV1', security: [key('orchestrator:invoke'), key('tenant:read')] }),
  r({ method: 'post', path: '/v1/runs/{run_id}/cancel', operationId: 'cancelRunV1', security: [key('orchestrator:invoke')] }),
  r({ method: 'get', path: '/v1/usage', operationId: 'getUsageV1', security: [key('usage:read')] }),
  r({ method: 'post', path: '/v1/webhooks/inbound/{slug}', operationId: 'ingestInboundEventV1', security: [inbound] }),
  ...keyRoutes('/v1', 'V1'),
];
