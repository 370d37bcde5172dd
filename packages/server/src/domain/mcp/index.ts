/**
 * @module The tenant MCP bridge: the JSON-RPC dispatcher, its tools and the SSE sessions.
 */
export { createMcpDispatcher, PROTOCOL_VERSIONS, SERVER_INFO, type McpDispatcher } from './dispatcher.ts';
export { JSON_RPC_ERRORS, type JsonRpcResponse, type JsonRpcRequest } from './json-rpc.ts';
export { toolDescriptions, TOOLS, type McpDeps, type ToolResult } from './tools.ts';
export { createMcpSessions, MCP_KEEP_ALIVE_MS, type McpSession, type McpSessions } from './sessions.ts';
