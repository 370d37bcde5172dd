/**
 * @module The contract as the server uses it, all generated from the OpenAPI document: the routes
 * the app mounts, the per-operation types handlers are written against, and the schemas' types
 * that the domain returns (a run, a step, an API key...), so that no shape is declared twice.
 */
import type { components } from '../../../generated/types.ts';

export { routes, type OperationId, type Operations } from '../../../generated/routes.ts';
export { mcpTools, type McpToolName } from '../../../generated/mcp-tools.ts';
export {
  zAccountResetKind,
  zAdminSession,
  zApproval,
  zAuditAction,
  zAuditActor,
  zAuditTarget,
  zDelivery,
  zDeliveryAttempt,
  zDeliveryErrorKind,
  zDraft,
  zInboundSlugPath,
  zInboundWebhook,
  zMcpProtocolVersion,
  zMessage,
  zModelAlias,
  zRun,
  zRunStatus,
  zStep,
  zToolCall,
  zWebhookDestination,
  zWorkspaceRole,
} from '../../../generated/zod.ts';

/** A schema of the contract as a TypeScript type, e.g. `Schema<'Run'>`. */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N];
