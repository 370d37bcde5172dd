/**
 * @module The workspace's agent settings (plan, quota, paused agents) held in memory, so an
 * invocation reads no row for them; kept current by `AGENT_SETTINGS_CHANNEL` (store/workspace-cache.ts).
 */
import type { Db } from '../../store/db.ts';
import type { WorkspaceAgents } from './availability.ts';
import { AGENT_SETTINGS_CHANNEL, workspaceAgents } from './settings.ts';
import { settingsVersion } from './settings-version.ts';
import { createWorkspaceCache } from '../../store/workspace-cache.ts';

type Settings = WorkspaceAgents & { quotaStu: number };

export interface AgentSettingsCache {
  /** The workspace's settings: from memory while they are known current, else read (and kept). */
  read(workspaceId: string): Promise<Settings>;
}

export function createAgentSettingsCache(db: Db): AgentSettingsCache {
  return createWorkspaceCache({ db, channel: AGENT_SETTINGS_CHANNEL, version: settingsVersion, load: workspaceAgents });
}
