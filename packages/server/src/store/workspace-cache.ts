/**
 * @module A workspace's data held in memory, so an invocation reads no row for it: the agents' settings
 * (domain/agents/settings-cache.ts), the agents' definitions (domain/agents/definitions-cache.ts) and the offered integrations
 * (domain/integrations/tool-source.ts) are each one of these.
 *
 * Kept current the way the key cache is (domain/keys/invalidation.ts): every change notifies the
 * cache's channel with the workspace's id in the statement that makes it, and PostgreSQL hands the
 * notification to every instance's listener when it commits; this instance drops the workspace's
 * entry then. A change made in this process also drops every entry at once (its `version` moves),
 * before its writer returns. Entries are used only while the listener is up: while it is down or
 * reconnecting (news may be lost) every read goes to the store, and the cache starts empty when it is
 * back. The embedded store hears its own notifications in process.
 */
import type { Db } from './db.ts';

/** Entries beyond this drop the oldest first (a deployment with more active workspaces reads some). */
const MAX_ENTRIES = 10_000;

export interface WorkspaceCache<T> {
  /** The workspace's value: from memory while it is known current, else read (and kept). */
  read(workspaceId: string): Promise<T>;
}

export function createWorkspaceCache<T>(options: {
  db: Db;
  /** Notified with a workspace's id by every change (any instance). */
  channel: string;
  /** This process's count of its own changes (bumped by each writer after its statement). */
  version: () => number;
  load: (db: Db, workspaceId: string) => Promise<T>;
}): WorkspaceCache<T> {
  const { db, channel, version: currentVersion, load } = options;
  const entries = new Map<string, { value: T; version: number }>();
  /** The loads under way, by workspace, with the generation and version they began at. */
  const loading = new Map<string, { value: Promise<T>; generation: number; version: number }>();
  let listening = false;
  /** Bumped by every drop: a read that began before one is not kept. */
  let generation = 0;
  let subscribed: Promise<void> | undefined;
  const drop = (workspaceId?: string) => {
    generation += 1;
    if (workspaceId === undefined) entries.clear();
    else entries.delete(workspaceId);
  };
  const subscribe = () =>
    db
      .listen?.(channel, {
        message: (workspaceId) => drop(workspaceId),
        state: (up) => {
          listening = up;
          drop();
        },
      })
      .catch(() => {});
  return {
    async read(workspaceId) {
      // The first read waits for the listener (once), so what it reads can be kept.
      await (subscribed ??= subscribe() ?? Promise.resolve());
      const version = currentVersion();
      const entry = listening ? entries.get(workspaceId) : undefined;
      if (entry && entry.version === version) return entry.value;
      // Reads that find it missing together share one load, unless a change was heard since that load began.
      const shared = listening ? loading.get(workspaceId) : undefined;
      if (shared && shared.generation === generation && shared.version === version) return shared.value;
      const started = generation;
      const value = load(db, workspaceId).then((loaded) => {
        if (listening && started === generation && version === currentVersion()) {
          if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
          entries.set(workspaceId, { value: loaded, version });
        }
        return loaded;
      });
      loading.set(workspaceId, { value, generation: started, version });
      const forget = () => {
        if (loading.get(workspaceId)?.value === value) loading.delete(workspaceId);
      };
      value.then(forget, forget);
      return value;
    },
  };
}
