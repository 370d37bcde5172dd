/**
 * @module The data-directory lock. Embedded PGlite is one process's database: two processes
 * writing the same directory would corrupt it. Whoever opens the directory (the server, or a CLI
 * command) first creates `service.lock` exclusively; anyone else is told who holds it.
 * A lock left by a process that no longer exists is taken over.
 */
import { rmSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock, type Clock } from '../clock.ts';
import { errnoOf } from '../caught.ts';

interface LockOwner {
  pid: number;
  command: string;
  since: string;
}

export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
  constructor(
    readonly dataDir: string,
    readonly owner: LockOwner,
  ) {
    super(
      `The data directory ${dataDir} is in use by \`service ${owner.command}\` (pid ${owner.pid}, since ${owner.since}).\n` +
        'Embedded PGlite allows one process at a time, so nothing was changed. ' +
        (owner.command === 'serve'
          ? 'Stop the server first (Ctrl-C), or go through its operator API: give --url (or SERVICE_URL) and OPERATOR_TOKEN ' +
            '(keys, kill-switch, plan, agents, workspaces, users, webhooks and approvals take them).'
          : 'Wait for that command to finish.') +
        '\nWith PostgreSQL (DATABASE_URL) the server and the CLI can run side by side.',
    );
  }
}

interface DataDirLock {
  release(): Promise<void>;
}

export async function lockDataDir(dataDir: string, command: string, clock: Clock = systemClock): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, 'service.lock');
  const owner: LockOwner = { pid: process.pid, command, since: clock.now().toISOString() };
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      await writeFile(file, `${JSON.stringify(owner)}\n`, { flag: 'wx' });
      let released = false;
      const releaseSync = () => {
        if (!released) rmSyncQuiet(file);
      };
      process.once('exit', releaseSync);
      return {
        async release() {
          if (released) return;
          released = true;
          process.off('exit', releaseSync);
          await rm(file, { force: true });
        },
      };
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST') throw err;
      const holder = await readOwner(file);
      if (holder && isAlive(holder.pid)) throw new DataDirLockedError(dataDir, holder);
      // The holder is gone (crash, kill -9): its lock is stale.
      await rm(file, { force: true });
    }
  }
  throw new Error(`Could not lock ${dataDir}`);
}

async function readOwner(file: string): Promise<LockOwner | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as LockOwner;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return errnoOf(err) === 'EPERM';
  }
}

function rmSyncQuiet(file: string): void {
  try {
    // Synchronous on purpose: this runs in the 'exit' handler, where nothing async completes.
    rmSync(file, { force: true });
  } catch {
    // Nothing more can be done at exit; the next start treats the lock as stale.
  }
}
