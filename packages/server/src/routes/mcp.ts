/**
 * @module The tenant MCP bridge over HTTP, with an MCP token (`mcp:tenant`):
 *
 * - openMcpStream (GET /v1/mcp/tenant/sse): `text/event-stream`; first `event: endpoint` naming
 *   `/v1/mcp/tenant/rpc?sessionId=mcs_…`, then `event: message` per JSON-RPC response sent to that
 *   session, and a `: keep-alive` comment every 15 s. The session lives in this process's memory
 *   and ends when the client disconnects.
 * - callMcpRpc (POST /v1/mcp/tenant/rpc): one JSON-RPC request, answered as JSON (200), or `202`
 *   with no body for a notification. When `sessionId` names an open stream of the same workspace,
 *   the response is also pushed there.
 *
 * Responses are redacted by the dispatcher: the SSE push does not pass the HTTP body redactor.
 * The same bridge over Streamable HTTP, the current transport: routes/mcp-streamable-http.ts.
 */
import { streamSSE } from 'hono/streaming';
import { authOf, type Handler, type Handlers } from './handler.ts';

const openMcpStream: Handler<'openMcpStream'> = (c, _input, { mcp, streams }) => {
  const { workspaceId } = authOf(c, 'mcpToken');
  const stream = streamSSE(c, async (stream) => {
    const session = mcp.sessions.open(workspaceId, (message) => stream.writeSSE({ event: 'message', data: JSON.stringify(message) }));
    let wake: () => void = () => {};
    let ending = false;
    stream.onAbort(() => {
      mcp.sessions.close(session.id);
      wake();
    });
    // A graceful shutdown closes the stream; the client opens a new one on another instance.
    const unregister = streams.register(async () => {
      ending = true;
      wake();
    });
    try {
      await stream.writeSSE({ event: 'endpoint', data: `/v1/mcp/tenant/rpc?sessionId=${session.id}` });
      while (!stream.aborted && !ending) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, mcp.keepAliveMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        if (!stream.aborted && !ending) await stream.write(': keep-alive\n\n');
      }
    } finally {
      unregister();
      mcp.sessions.close(session.id);
    }
  });
  return { status: 200, stream };
};

const callMcpRpc: Handler<'callMcpRpc'> = async (c, { body, query }, { mcp }) => {
  const { workspaceId, keyScopes } = authOf(c, 'mcpToken');
  const response = await mcp.dispatcher.dispatch({ workspaceId, keyScopes }, body);
  if (!response) return { status: 202 };
  const session = query.sessionId ? mcp.sessions.find(query.sessionId, workspaceId) : undefined;
  // Not awaited: a stream whose client reads slowly must not hold the direct answer back.
  if (session) void session.send(response);
  return { status: 200, body: response };
};

export const mcpHandlers = { openMcpStream, callMcpRpc } satisfies Partial<Handlers>;
