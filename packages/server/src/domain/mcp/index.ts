/**
 * @module The tenant MCP bridge: the JSON-RPC dispatcher, its tools, the SSE sessions and the Streamable HTTP sessions.
 */
export { createMcpDispatcher, PROTOCOL_VERSIONS, SERVER_INFO, type McpDispatcher } from './dispatcher.ts';
export { JSON_RPC_ERRORS, type JsonRpcResponse, type JsonRpcRequest } from './json-rpc.ts';
export { findTool, toolDescriptions, type McpDeps, type McpTool, type ToolResult } from './tools.ts';
export { createMcpSessions, MCP_KEEP_ALIVE_MS, type McpSession, type McpSessions } from './sessions.ts';
export {
  createMcpHttpSessions,
  MCP_HTTP_SESSION_LIMITS,
  type McpHttpSession,
  type McpHttpSessionLimits,
  type McpHttpSessions,
} from './http-sessions.ts';
