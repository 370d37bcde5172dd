/**
 * @module The workspace's agent settings (plan, quota, paused agents) held in memory, so an
 * invocation reads no row for them.
 *
 * Kept current the way the key cache is (domain/keys/invalidation.ts): every change notifies
 * `AGENT_SETTINGS_CHANNEL` with the workspace's id in the statement that makes it, and PostgreSQL
 * hands the notification to every instance's listener when it commits; this instance drops the
 * workspace's entry then. A change made in this process also drops every entry at once
 * (settings-version.ts), before its writer returns. Entries are used only while the listener is up:
 * while it is down or reconnecting (news may be lost) every read goes to the store, and the cache
 * starts empty when it is back. The embedded store hears its own notifications in process.
 */
import type { Db } from '../../store/db.ts';
import type { WorkspaceAgents } from './availability.ts';
import { AGENT_SETTINGS_CHANNEL, workspaceAgents } from './settings.ts';
import { settingsVersion } from './settings-version.ts';

type Settings = WorkspaceAgents & { quotaStu: number };

/** Entries beyond this drop the oldest first (a deployment with more active workspaces reads some). */
const MAX_ENTRIES = 10_000;

export interface AgentSettingsCache {
  /** The workspace's settings: from memory while they are known current, else read (and kept). */
  read(workspaceId: string): Promise<Settings>;
}

export function createAgentSettingsCache(db: Db): AgentSettingsCache {
  const entries = new Map<string, { settings: Settings; version: number }>();
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
      .listen?.(AGENT_SETTINGS_CHANNEL, {
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
      const version = settingsVersion();
      const entry = listening ? entries.get(workspaceId) : undefined;
      if (entry && entry.version === version) return entry.settings;
      const started = generation;
      const settings = await workspaceAgents(db, workspaceId);
      if (listening && started === generation && version === settingsVersion()) {
        if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
        entries.set(workspaceId, { settings, version });
      }
      return settings;
    },
  };
}
