/**
 * @module The agent loop (above engine/, beside runs/): an agent's model calls, tool calls, drafts
 * and approval requests within one run. runs/ owns the run's lifecycle and calls the loop.
 */
export * from './tool.ts';
export { type AgentDefinitions, noConnectedTools } from './agents.ts';
export { type Decided, requestApproval, settleWaitingCall } from './approval.ts';
export { ACTION_TOOLS, BUILT_IN_TOOLS, DRAFT_TOOL } from './built-in-tools.ts';
export {
  callWaitingTool,
  continueAgentLoop,
  type CallingRun,
  firstCallInput,
  nextCallInput,
  type LoopContext,
  type LoopIO,
  type LoopOutcome,
  type LoopRun,
  runAgentLoop,
  TOOL_TIMEOUT_MS,
} from './loop.ts';
export { handoffTools } from './handoff.ts';
export { type DelegatedPart, initialLoopState, type LoopState, routedToOf, type WaitingCall } from './state.ts';
