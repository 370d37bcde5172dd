/**
 * @module The embedded store's data directory holds secrets (hashes, sealed secrets, the key file,
 * run content): only the service's own user may read or write it. The directory is 0700 and what
 * is in it loses every group and other permission. PGlite sets the mode of its files itself
 * (0666, whatever the umask), so the CLI calls this after opening the store and again after
 * closing it; in between, the 0700 directory keeps everyone else out of new files.
 */
import { chmod, lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';

export async function restrictDataDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // Files this process creates itself (the key file, the lock) get no group or other bits.
  process.umask(0o077);
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop()!;
    const info = await lstat(current);
    if (info.isSymbolicLink()) continue;
    if ((info.mode & 0o077) !== 0) await chmod(current, info.mode & 0o700);
    if (info.isDirectory()) for (const name of await readdir(current)) pending.push(join(current, name));
  }
}
