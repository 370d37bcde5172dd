/**
 * @module `service keys create|list|revoke|rotate`: key management from the command line, on
 * the store directly (the server must not hold an embedded data directory meanwhile). Each change is in the workspace's
 * audit log, its actor the operator at the command line.
 */
import type { Clock } from '../clock.ts';
import { COMMAND_LINE } from '../domain/audit/index.ts';
import { createKeyService, type ApiKeyRecord } from '../domain/keys/index.ts';
import { listWorkspaces } from '../domain/workspaces/index.ts';
import type { Db } from '../store/db.ts';
import { UsageError } from './usage.ts';

/** The workspace named by --workspace, or the only one there is. */
export async function resolveWorkspace(db: Db, requested: string | undefined): Promise<string> {
  const workspaces = await listWorkspaces(db);
  if (requested) {
    if (!workspaces.some((w) => w.id === requested)) throw new UsageError(`No workspace ${requested}.`);
    return requested;
  }
  if (workspaces.length === 0) throw new UsageError('No workspace yet: run `service init` first.');
  if (workspaces.length > 1) {
    throw new UsageError(`Several workspaces exist (${workspaces.map((w) => w.id).join(', ')}): pass --workspace.`);
  }
  return workspaces[0]!.id;
}

export function keyCommands(db: Db, clock: Clock, workspaceId: string) {
  const keys = createKeyService({ db, clock });
  return {
    async create(name: string, scopes: string[], expiresInDays: number | undefined) {
      const key = await keys.create(workspaceId, { name, scopes, expiresInDays }, COMMAND_LINE);
      return { id: key.id, secret: key.secret, prefix: key.prefix, scopes: key.scopes, expiresAt: key.expiresAt };
    },
    list: () => keys.list(workspaceId),
    revoke: (id: string) => keys.revoke(workspaceId, id, COMMAND_LINE),
    async rotate(id: string) {
      const key = await keys.rotate(workspaceId, id, COMMAND_LINE);
      return { id: key.id, secret: key.secret, prefix: key.prefix, scopes: key.scopes, expiresAt: key.expiresAt, replaces: id };
    },
  };
}

/** One line per key, for people. */
export function formatKeys(keys: ApiKeyRecord[]): string {
  if (keys.length === 0) return 'No keys.';
  return keys.map((k) => `${k.id}  ${k.prefix}…  ${k.status.padEnd(7)}  expires ${k.expiresAt}  ${k.name}  [${k.scopes.join(', ')}]`).join('\n');
}
