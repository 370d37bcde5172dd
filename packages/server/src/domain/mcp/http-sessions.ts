/**
 * @module Sessions of the tenant MCP bridge's Streamable HTTP transport (`Mcp-Session-Id`), kept in the memory of
 * the instance that answered `initialize`. A session holds only its workspace and when it was last used: every
 * request authenticates with its own MCP token, whose workspace and key scopes are what the tools act with.
 *
 * - An id (`mcs_` + 32 base62) is found only from the workspace that opened it; another workspace's reads as
 *   absent, like any other resource of theirs.
 * - A session unused for `idleMs` (30 minutes) is closed.
 * - A workspace holds at most `perWorkspace` (32) sessions: opening one more closes its least recently used, so one
 *   workspace cannot take more than its share, and a client that never ends its sessions does not lock its
 *   workspace out. The instance holds at most `total` (10,000); past it, the least recently used of all closes.
 * - A closed, evicted or unknown session answers `404` at the route; the client then initialises a new one. With
 *   several instances that is also what a request reaching another instance gets (docs/server.md).
 *
 * Time is the app's clock, so expiry is read at each use and needs no timer.
 */
import type { Clock } from '../../clock.ts';
import { randomBase62 } from '../../random.ts';

export const MCP_HTTP_SESSION_LIMITS = { perWorkspace: 32, total: 10_000, idleMs: 30 * 60_000 } as const;

export interface McpHttpSessionLimits {
  perWorkspace: number;
  total: number;
  idleMs: number;
}

export interface McpHttpSession {
  readonly id: string;
  readonly workspaceId: string;
  lastUsedAt: number;
}

export interface McpHttpSessions {
  /** A new session of the workspace; may close the workspace's (or the instance's) least recently used. */
  open(workspaceId: string): McpHttpSession;
  /** The session with this id if the workspace holds it and it is not idle past the limit; marks it used. */
  use(id: string, workspaceId: string): McpHttpSession | undefined;
  /** Ends the workspace's session; false when it holds none of this id. */
  end(id: string, workspaceId: string): boolean;
  /** Open sessions of the instance, or of one workspace. */
  count(workspaceId?: string): number;
}

export function createMcpHttpSessions(clock: Clock, limits: Partial<McpHttpSessionLimits> = {}): McpHttpSessions {
  const { perWorkspace, total, idleMs } = { ...MCP_HTTP_SESSION_LIMITS, ...limits };
  // Both maps are kept in order of last use (a use moves the entry to the end), so the least recently
  // used comes first and the idle ones form a prefix.
  const all = new Map<string, McpHttpSession>();
  const byWorkspace = new Map<string, Map<string, McpHttpSession>>();

  const now = () => clock.now().getTime();

  function remove(session: McpHttpSession): void {
    all.delete(session.id);
    const own = byWorkspace.get(session.workspaceId);
    own?.delete(session.id);
    if (own?.size === 0) byWorkspace.delete(session.workspaceId);
  }

  function closeIdle(at: number): void {
    for (const session of all.values()) {
      if (at - session.lastUsedAt < idleMs) break;
      remove(session);
    }
  }

  function touch(session: McpHttpSession, at: number): void {
    session.lastUsedAt = at;
    all.delete(session.id);
    all.set(session.id, session);
    const own = byWorkspace.get(session.workspaceId)!;
    own.delete(session.id);
    own.set(session.id, session);
  }

  return {
    open(workspaceId) {
      const at = now();
      closeIdle(at);
      const own = byWorkspace.get(workspaceId) ?? new Map<string, McpHttpSession>();
      while (own.size >= perWorkspace) remove(own.values().next().value!);
      while (all.size >= total) remove(all.values().next().value!);
      // Set after the closes: closing the workspace's last session removes its map.
      byWorkspace.set(workspaceId, own);
      const session: McpHttpSession = { id: `mcs_${randomBase62(32)}`, workspaceId, lastUsedAt: at };
      all.set(session.id, session);
      own.set(session.id, session);
      return session;
    },
    use(id, workspaceId) {
      const at = now();
      closeIdle(at);
      const session = all.get(id);
      if (session?.workspaceId !== workspaceId) return undefined;
      touch(session, at);
      return session;
    },
    end(id, workspaceId) {
      closeIdle(now());
      const session = all.get(id);
      if (session?.workspaceId !== workspaceId) return false;
      remove(session);
      return true;
    },
    count(workspaceId) {
      closeIdle(now());
      return workspaceId === undefined ? all.size : (byWorkspace.get(workspaceId)?.size ?? 0);
    },
  };
}
