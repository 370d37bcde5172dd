/**
 * @module The JSON-RPC dispatcher of the tenant MCP bridge: `initialize`, `ping`, `tools/list`,
 * `tools/call`. A notification (no `id`) is accepted and answered with nothing. Every response
 * passes through the redactor here, because the SSE push bypasses the HTTP body redaction.
 *
 * Errors: a malformed message -32600, an unknown method -32601, invalid params or arguments (and an
 * unknown tool) -32602. A tool that fails (quota, kill switch, unknown agent, run not found) is not a
 * protocol error: it answers a tool result with `isError: true` and the service's neutral message.
 */
import { zMcpProtocolVersion } from '../../contract.ts';
import { ServiceError } from '../../errors.ts';
import { requireOneOf } from '../keys/scopes.ts';
import type { Redactor } from '../../redact/index.ts';
import { asRequest, idOf, JSON_RPC_ERRORS, rpcError, rpcResult, type JsonRpcId, type JsonRpcResponse } from './json-rpc.ts';
import { findTool, runTool, toolDescriptions, type McpCaller, type McpDeps, type ToolResult } from './tools.ts';

/** Protocol revisions this bridge speaks (the contract's `McpProtocolVersion`); the first is answered when the client asks for another. */
export const PROTOCOL_VERSIONS = zMcpProtocolVersion.options;
/** A neutral name: never a provider's or a model's. */
export const SERVER_INFO = { name: 'agent-invocation-service', version: '1.0.0' } as const;

interface McpDispatcherDeps extends McpDeps {
  /** Unexpected failures of a tool, for the operator (the client sees a neutral message). */
  logError?: (error: unknown) => void;
  /** The app's redactor (the fixed rules and the deployment's own names). */
  redactor: Redactor;
}

export interface McpDispatcher {
  /** The response to one message, or `null` for a notification. */
  dispatch(caller: McpCaller, message: unknown): Promise<JsonRpcResponse | null>;
}

export function createMcpDispatcher(deps: McpDispatcherDeps): McpDispatcher {
  return {
    async dispatch(caller, message) {
      const request = asRequest(message);
      if (!request) return rpcError(idOf(message), JSON_RPC_ERRORS.invalidRequest, 'Invalid Request');
      // Notifications (notifications/initialized, notifications/cancelled, ...) change nothing here.
      if (request.id === undefined) return null;
      const response = await answer(request.id, request.method, request.params ?? {}, caller, deps);
      return deps.redactor.value(response);
    },
  };
}

async function answer(id: JsonRpcId, method: string, params: Record<string, unknown>, caller: McpCaller, deps: McpDispatcherDeps): Promise<JsonRpcResponse> {
  switch (method) {
    case 'initialize': {
      const asked = params.protocolVersion;
      const protocolVersion = PROTOCOL_VERSIONS.find((v) => v === asked) ?? PROTOCOL_VERSIONS[0];
      return rpcResult(id, { protocolVersion, capabilities: { tools: {} }, serverInfo: { ...SERVER_INFO } });
    }
    case 'ping':
      return rpcResult(id, {});
    case 'tools/list':
      return rpcResult(id, { tools: toolDescriptions() });
    case 'tools/call':
      return callTool(id, params, caller, deps);
    default:
      return rpcError(id, JSON_RPC_ERRORS.methodNotFound, `Method not found: ${method.slice(0, 100)}`);
  }
}

async function callTool(id: JsonRpcId, params: Record<string, unknown>, caller: McpCaller, deps: McpDispatcherDeps): Promise<JsonRpcResponse> {
  const { name } = params;
  if (typeof name !== 'string') return rpcError(id, JSON_RPC_ERRORS.invalidParams, 'Invalid params: `name` is required.');
  const tool = findTool(name);
  if (!tool) return rpcError(id, JSON_RPC_ERRORS.invalidParams, `Unknown tool: ${name.slice(0, 100)}`);
  const parsed = tool.arguments.safeParse(params.arguments ?? {});
  if (!parsed.success) {
    // Names the field, never the value sent.
    const issue = parsed.error.issues[0];
    const field = issue?.path.length ? issue.path.join('.') : issue?.code === 'unrecognized_keys' ? issue.keys.join(', ') : 'arguments';
    return rpcError(id, JSON_RPC_ERRORS.invalidParams, `Invalid arguments for ${tool.name}: \`${field}\` is invalid.`);
  }
  try {
    // The scopes of the tool's operation, as its route checks them for an API key.
    requireOneOf(caller.keyScopes, tool.scopes, { agentTargeted: tool.agentTargeted, holder: 'The API key that issued this MCP token' });
    return rpcResult(id, { ...(await runTool(tool, parsed.data, caller, deps)) });
  } catch (error) {
    return rpcResult(id, { ...toolFailure(error, deps) });
  }
}

function toolFailure(error: unknown, deps: McpDispatcherDeps): ToolResult {
  if (error instanceof ServiceError) {
    const text = error.publicMessage ?? `The tool failed: ${error.code}.`;
    return { content: [{ type: 'text', text }], structuredContent: { error: error.code, ...error.extras }, isError: true };
  }
  deps.logError?.(error);
  return { content: [{ type: 'text', text: 'The tool failed; try again later.' }], isError: true };
}
