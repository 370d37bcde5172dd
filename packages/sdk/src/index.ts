/**
 * @module `@service/sdk`: the official TypeScript client of the Agent Invocation Service, and the
 * receiver-side verification of its signed webhook deliveries.
 */
export { ServiceClient, DEFAULT_BASE_URL, type ClientOptions, type LoginOptions } from './client.ts';
export {
  ServiceError,
  AuthenticationError,
  PermissionError,
  NotFoundError,
  RateLimitError,
  QuotaExceededError,
  KillSwitchError,
  InvalidRequestError,
  InternalServerError,
  ConnectionError,
  TimeoutError,
  StreamInterruptedError,
  errorClassOf,
  type ErrorCode,
  type ErrorFields,
} from './core/errors.ts';
export type { RequestOptions } from './core/transport.ts';
export type { OperationSpec } from './core/operation.ts';
export { Inference, Agents, Orchestrator, type InferenceRequest, type InferenceResponse, type AgentMessageRequest, type StreamEvent } from './inference.ts';
export {
  Runs,
  RunPage,
  RunPagePromise,
  TERMINAL_STATUSES,
  type Run,
  type RunDetail,
  type RunList,
  type RunStatus,
  type RunListParams,
  type PollOptions,
} from './runs.ts';
export { TERMINAL_EVENT_TYPES, isTerminalRunEvent, type RunEvent, type RunEventType, type RunEventsOptions, type TerminalRunEvent } from './run-events.ts';
export { AgentConfigurations, ApiKeys, Approvals, Drafts, Webhooks, InboundWebhooks, WebhookDestinations } from './admin.ts';
export { OPERATIONS, SERVERS, Operations, type OperationId, type OperationInputs, type OperationOutputs, type Schemas } from './generated/operations.ts';
export * from './webhooks/index.ts';
