/**
 * @module The calls a workspace may have under way to its integrations at once, each on a connection of its own while
 * it runs (the sessions kept between calls hold none, mcp-client.ts): a fair share, so one workspace's slow connector
 * holds its own slots and never everyone's. A call that finds its workspace's slots taken waits for one until its own
 * deadline.
 */

export interface ConnectionSlots {
  /** A slot of `workspaceId`'s, and the function that gives it back; rejects when `signal` aborts first. */
  acquire(workspaceId: string, signal: AbortSignal): Promise<() => void>;
  /** Slots in use by `workspaceId` (tests, metrics). */
  inUse(workspaceId: string): number;
}

/** Connections per workspace at once (MCP_CONNECTIONS_PER_WORKSPACE). */
export const DEFAULT_CONNECTIONS_PER_WORKSPACE = 4;

export function createConnectionSlots(perWorkspace: number = DEFAULT_CONNECTIONS_PER_WORKSPACE): ConnectionSlots {
  const workspaces = new Map<string, { used: number; waiting: (() => void)[] }>();

  function release(workspaceId: string): void {
    const entry = workspaces.get(workspaceId);
    if (!entry) return;
    const next = entry.waiting.shift();
    if (next) {
      next(); // the slot passes straight to the next waiter
      return;
    }
    entry.used -= 1;
    if (entry.used === 0) workspaces.delete(workspaceId);
  }

  return {
    acquire(workspaceId, signal) {
      if (signal.aborted) return Promise.reject(signal.reason);
      let entry = workspaces.get(workspaceId);
      if (!entry) workspaces.set(workspaceId, (entry = { used: 0, waiting: [] }));
      const once = () => {
        let released = false;
        return () => {
          if (released) return;
          released = true;
          release(workspaceId);
        };
      };
      if (entry.used < perWorkspace) {
        entry.used += 1;
        return Promise.resolve(once());
      }
      const waiting = entry.waiting;
      return new Promise((resolve, reject) => {
        const grant = () => {
          signal.removeEventListener('abort', abort);
          resolve(once());
        };
        const abort = () => {
          const at = waiting.indexOf(grant);
          if (at !== -1) waiting.splice(at, 1);
          reject(signal.reason);
        };
        waiting.push(grant);
        signal.addEventListener('abort', abort, { once: true });
      });
    },
    inUse: (workspaceId) => workspaces.get(workspaceId)?.used ?? 0,
  };
}
