/**
 * @module `service keys create|list|revoke|rotate`: key management from the command line, on the store
 * directly (the server must not hold an embedded data directory meanwhile), or with `--url` through the
 * running server's operator API (cli/operator-api.ts). Each change is in the workspace's audit log, its
 * actor the operator (at the command line, or their token).
 */
import type { Clock } from '../clock.ts';
import { COMMAND_LINE } from '../domain/audit/index.ts';
import { createKeyService, type ApiKeyRecord, type IssuedKey } from '../domain/keys/index.ts';
import { listWorkspaces } from '../domain/workspaces/index.ts';
import type { Db } from '../store/db.ts';
import { type OperatorApi, workspacePath } from './operator-api.ts';
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

/** What the `keys` commands do, on the store or through the operator API. */
export interface KeyCommands {
  create(name: string, scopes: string[], expiresInDays: number | undefined): Promise<NewKey>;
  list(): Promise<ApiKeyRecord[]>;
  revoke(id: string): Promise<ApiKeyRecord>;
  rotate(id: string): Promise<NewKey & { replaces: string }>;
}

/** What `keys create|rotate` print of a new key. */
type NewKey = Pick<IssuedKey, 'id' | 'secret' | 'prefix' | 'scopes' | 'expiresAt'>;

function newKey(key: IssuedKey): NewKey {
  return { id: key.id, secret: key.secret, prefix: key.prefix, scopes: key.scopes, expiresAt: key.expiresAt };
}

export function keyCommands(db: Db, clock: Clock, workspaceId: string): KeyCommands {
  const keys = createKeyService({ db, clock });
  return {
    create: async (name, scopes, expiresInDays) => newKey(await keys.create(workspaceId, { name, scopes, expiresInDays }, COMMAND_LINE)),
    list: () => keys.list(workspaceId),
    revoke: (id) => keys.revoke(workspaceId, id, COMMAND_LINE),
    rotate: async (id) => ({ ...newKey(await keys.rotate(workspaceId, id, COMMAND_LINE)), replaces: id }),
  };
}

/** The same through a running server's operator API (`/operator/workspaces/{id}/api-keys`). */
export function operatorKeyCommands(api: OperatorApi, workspaceId: string): KeyCommands {
  const keys = workspacePath(workspaceId, 'api-keys');
  return {
    create: async (name, scopes, expiresInDays) =>
      newKey(await api.call<IssuedKey>('POST', keys, { name, scopes, ...(expiresInDays === undefined ? {} : { expiresInDays }) })),
    list: async () => (await api.call<{ data: ApiKeyRecord[] }>('GET', keys)).data,
    revoke: (id) => api.call<ApiKeyRecord>('DELETE', `${keys}/${encodeURIComponent(id)}`),
    rotate: async (id) => ({ ...newKey(await api.call<IssuedKey>('POST', `${keys}/${encodeURIComponent(id)}/rotate`)), replaces: id }),
  };
}

/** One line per key, for people. */
export function formatKeys(keys: ApiKeyRecord[]): string {
  if (keys.length === 0) return 'No keys.';
  return keys.map((k) => `${k.id}  ${k.prefix}…  ${k.status.padEnd(7)}  expires ${k.expiresAt}  ${k.name}  [${k.scopes.join(', ')}]`).join('\n');
}
