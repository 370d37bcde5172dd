/**
 * @module The handlers of the contract's operations, by operationId: exactly one per operation, each
 * typed by its operation (`tsc` fails on a missing, misspelt or mistyped one).
 */
import { agentHandlers } from './agents.ts';
import { apiKeyHandlers } from './api-keys.ts';
import { approvalHandlers } from './approvals.ts';
import { integrationHandlers } from './integrations.ts';
import { auditEventHandlers } from './audit-events.ts';
import { authHandlers } from './auth.ts';
import { authSessionHandlers } from './auth-session.ts';
import { draftHandlers } from './drafts.ts';
import type { Handlers } from './handler.ts';
import { inboundWebhookHandlers } from './inbound-webhooks.ts';
import { inferenceHandlers } from './inference.ts';
import { mcpHandlers } from './mcp.ts';
import { mcpStreamableHttpHandlers } from './mcp-streamable-http.ts';
import { mcpTokenHandlers } from './mcp-tokens.ts';
import { memberHandlers } from './members.ts';
import { operatorHandlers } from './operator.ts';
import { operationsHandlers } from './operations.ts';
import { runHandlers } from './runs.ts';
import { runEventHandlers } from './run-events.ts';
import { ssoHandlers } from './sso.ts';
import { usageHandlers } from './usage.ts';
import { webhookDestinationHandlers } from './webhook-destinations.ts';

export type { Handler, Handlers } from './handler.ts';

export const handlers: Handlers = {
  ...authHandlers, // login, logout, selectWorkspace
  ...authSessionHandlers, // getSession (who am I)
  ...ssoHandlers, // single sign-on: the owner's settings, the sign-in's start and finish
  ...apiKeyHandlers, // key management, Set A and Set B
  ...mcpTokenHandlers, // createMcpToken
  ...mcpHandlers, // openMcpStream, callMcpRpc (the tenant MCP bridge, HTTP+SSE transport)
  ...mcpStreamableHttpHandlers, // postMcpMessage, endMcpSession (the same bridge over Streamable HTTP)
  ...inboundWebhookHandlers, // inbound ingestion (Set A and B) and inbound webhook settings
  ...webhookDestinationHandlers, // outbound destinations
  ...approvalHandlers, // listApprovals, decideApproval
  ...integrationHandlers, // connected integrations (MCP servers)
  ...inferenceHandlers, // createInference, sendAgentMessage, sendOrchestratorMessage
  ...runHandlers, // getRun, listRuns, cancelRun, Set A and Set B
  ...runEventHandlers, // getRunEvents, Set A and Set B
  ...usageHandlers, // getCurrentUsage, getUsageV1
  ...agentHandlers, // listAgents, the panel's agents: pause, resume, configuration
  ...draftHandlers, // listDrafts, getDraft (what agents wrote for review)
  ...memberHandlers, // the members of the session's workspace, invitations
  ...auditEventHandlers, // listAuditEvents (the workspace's audit log)
  ...operatorHandlers, // the operator API: workspaces
  ...operationsHandlers, // getLiveness, getReadiness (health for load balancers)
};
