/**
 * @module JSON-RPC 2.0 as the Model Context Protocol uses it: the request and response shapes, the
 * standard error codes, and the check that tells a request from a malformed message.
 */

/** The standard JSON-RPC 2.0 error codes the bridge answers. */
export const JSON_RPC_ERRORS = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  /** Absent for a notification, which gets no response. */
  id?: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

export type JsonRpcResponse =
  | { jsonrpc: '2.0'; id: JsonRpcId | null; result: Record<string, unknown> }
  | { jsonrpc: '2.0'; id: JsonRpcId | null; error: { code: number; message: string; data?: unknown } };

export function rpcResult(id: JsonRpcId, result: Record<string, unknown>): JsonRpcResponse {
  return { jsonrpc: '2.0', id, result };
}

export function rpcError(id: JsonRpcId | null, code: number, message: string): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** A JSON-RPC 2.0 request object, or `null` when the message is not one (answered with -32600). */
export function asRequest(message: unknown): JsonRpcRequest | null {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return null;
  const m: { jsonrpc?: unknown; method?: unknown; id?: unknown; params?: unknown } = message;
  if (m.jsonrpc !== '2.0') return null;
  if (typeof m.method !== 'string' || m.method.length === 0) return null;
  if (m.id !== undefined && !isId(m.id)) return null;
  if (m.params !== undefined && !isParams(m.params)) return null;
  return {
    jsonrpc: '2.0',
    method: m.method,
    ...(m.id !== undefined && { id: m.id }),
    ...(m.params !== undefined && { params: m.params }),
  };
}

/** By-name parameters (an object); by-position ones (an array) are not used by MCP. */
function isParams(params: unknown): params is Record<string, unknown> {
  return typeof params === 'object' && params !== null && !Array.isArray(params);
}

/** The id of a malformed message when it has a usable one; `null` otherwise, as JSON-RPC says. */
export function idOf(message: unknown): JsonRpcId | null {
  const id = (message as { id?: unknown } | null)?.id;
  return isId(id) ? id : null;
}

function isId(id: unknown): id is JsonRpcId {
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
}
