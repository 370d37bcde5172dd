/**
 * @module The tenant MCP bridge over Streamable HTTP (`/v1/mcp/tenant`), with an MCP token (`mcp:tenant`):
 *
 * - postMcpMessage (POST): one JSON-RPC message. `initialize` opens a session of this instance and answers
 *   its id in `Mcp-Session-Id`; any other message names its session in `Mcp-Session-Id` (missing: `400
 *   invalid_request`; one this instance does not hold for the token's workspace: `404 not_found`, and the
 *   client initialises again). A request answers its JSON-RPC response as JSON (200), a notification `202`.
 * - endMcpSession (DELETE): ends the session named by `Mcp-Session-Id` (204; `404 not_found` as above; the
 *   contract requires the header, so its absence is the validator's `400 invalid_request`).
 * - GET answers `405` (the app's answer to a method the contract does not list): the bridge sends nothing of
 *   its own, so it offers no stream.
 *
 * `MCP-Protocol-Version`, when sent, must be a revision the bridge speaks: the contract's header schema
 * checks it (`400 invalid_request`). The JSON-RPC answers are the dispatcher's, as on the SSE transport.
 */
import { fail } from '../errors.ts';
import { authOf, type Handler, type Handlers } from './handler.ts';

const SESSION_GONE = 'This MCP session does not exist or has ended; send initialize to start a new one.';

const postMcpMessage: Handler<'postMcpMessage'> = async (c, { body, headers }, { mcp }) => {
  const { workspaceId, keyScopes } = authOf(c, 'mcpToken');
  if (body.method === 'initialize' && body.id !== undefined) {
    const response = await mcp.dispatcher.dispatch({ workspaceId, keyScopes }, body);
    // A session only for an initialize that succeeded.
    if (response && 'result' in response) c.header('Mcp-Session-Id', mcp.httpSessions.open(workspaceId).id);
    return response ? { status: 200, body: response } : { status: 202 };
  }
  const sessionId = headers['mcp-session-id'];
  if (sessionId === undefined) {
    throw fail('invalid_request', "Missing header 'Mcp-Session-Id': send the one the initialize answer gave, or initialize first.", {
      param: 'mcp-session-id',
    });
  }
  if (!mcp.httpSessions.use(sessionId, workspaceId)) throw fail('not_found', SESSION_GONE);
  const response = await mcp.dispatcher.dispatch({ workspaceId, keyScopes }, body);
  return response ? { status: 200, body: response } : { status: 202 };
};

const endMcpSession: Handler<'endMcpSession'> = (c, { headers }, { mcp }) => {
  const { workspaceId } = authOf(c, 'mcpToken');
  // The contract requires the header here (400 invalid_request without it).
  if (!mcp.httpSessions.end(headers['mcp-session-id'], workspaceId)) throw fail('not_found', SESSION_GONE);
  return { status: 204 };
};

export const mcpStreamableHttpHandlers = { postMcpMessage, endMcpSession } satisfies Partial<Handlers>;
