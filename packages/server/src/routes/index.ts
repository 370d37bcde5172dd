/**
 * @module The handlers of the contract's operations, by operationId. An operation of the contract
 * that has no handler here is mounted anyway and answers `501 not_implemented`.
 */
import { agentHandlers } from './agents.ts';
import { apiKeyHandlers } from './api-keys.ts';
import { approvalHandlers } from './approvals.ts';
import { authHandlers } from './auth.ts';
import type { OperationHandler } from './handler.ts';
import { inboundWebhookHandlers } from './inbound-webhooks.ts';
import { inferenceHandlers } from './inference.ts';
import { mcpHandlers } from './mcp.ts';
import { mcpTokenHandlers } from './mcp-tokens.ts';
import { runHandlers } from './runs.ts';
import { usageHandlers } from './usage.ts';
import { webhookDestinationHandlers } from './webhook-destinations.ts';

export type { OperationHandler } from './handler.ts';

export const handlers: Readonly<Partial<Record<string, OperationHandler>>> = {
  ...authHandlers, // login, logout
  ...apiKeyHandlers, // key management, Set A and Set B
  ...mcpTokenHandlers, // createMcpToken
  ...mcpHandlers, // openMcpStream, callMcpRpc (the tenant MCP bridge)
  ...inboundWebhookHandlers, // inbound ingestion (Set A and B) and inbound webhook settings
  ...webhookDestinationHandlers, // outbound destinations
  ...approvalHandlers, // decideApproval, createIntegration
  ...inferenceHandlers, // createInference, sendAgentMessage, sendOrchestratorMessage
  ...runHandlers, // getRun, listRuns, cancelRun, Set A and Set B
  ...usageHandlers, // getCurrentUsage, getUsageV1
  ...agentHandlers, // listAgents
};

/** The public agent API: answers `404 not_found` while the deployment is in private beta. */
export const PUBLIC_AGENT_API_OPERATIONS = new Set([
  'createInference',
  'sendAgentMessage',
  'sendOrchestratorMessage',
  'listAgents',
  'getRun',
  'getRunV1',
  'listRuns',
  'listRunsV1',
  'cancelRun',
  'cancelRunV1',
  'getCurrentUsage',
  'getUsageV1',
]);

/** Operations that take a target agent: a key restricted to that agent may call them. */
export const AGENT_TARGETED_OPERATIONS = new Set(['createInference', 'sendAgentMessage', 'sendOrchestratorMessage']);

/** Session operations open to any signed-in user, whatever the role. */
export const ANY_ROLE_OPERATIONS = new Set(['logout']);

/** Inbound webhook routes: a body that is not JSON is `payload_invalid` there. */
export const INBOUND_OPERATIONS = new Set(['ingestInboundEvent', 'ingestInboundEventV1']);
