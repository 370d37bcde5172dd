/**
 * @module SSE sessions of the tenant MCP bridge, kept in memory by the process that holds the
 * stream. A session id (`mcs_` + 16 base62) is only usable from the workspace that opened it. With
 * several instances a POST must reach the instance holding the stream (sticky sessions), see
 * docs/server.md.
 */
import { randomBase62 } from '../../random.ts';
import type { JsonRpcResponse } from './json-rpc.ts';

/** Interval of the `: keep-alive` comment on an open stream. */
export const MCP_KEEP_ALIVE_MS = 15_000;

export interface McpSession {
  readonly id: string;
  readonly workspaceId: string;
  /** Writes one JSON-RPC message to the stream as `event: message`. */
  send(message: JsonRpcResponse): Promise<void>;
}

export interface McpSessions {
  open(workspaceId: string, send: McpSession['send']): McpSession;
  /** The open session with this id, if it belongs to the workspace; undefined otherwise. */
  find(id: string, workspaceId: string): McpSession | undefined;
  close(id: string): void;
  /** Number of open sessions (for tests and metrics). */
  readonly size: number;
}

export function createMcpSessions(): McpSessions {
  const open = new Map<string, McpSession>();
  return {
    open(workspaceId, send) {
      const session: McpSession = { id: `mcs_${randomBase62(16)}`, workspaceId, send };
      open.set(session.id, session);
      return session;
    },
    find(id, workspaceId) {
      const session = open.get(id);
      // Another workspace's session reads as absent, like any other resource of theirs.
      return session?.workspaceId === workspaceId ? session : undefined;
    },
    close(id) {
      open.delete(id);
    },
    get size() {
      return open.size;
    },
  };
}
