/**
 * @module The key that seals secrets at rest (webhook signing secrets, TOTP secrets). `SECRET_KEY`
 * when set; otherwise, with the embedded store only, a random key kept in `<data dir>/secret.key`
 * (mode 0600), created on first use. With PostgreSQL several instances and commands share the store,
 * so they must share one key: a key file would be one machine's, and what it sealed could not be
 * opened by an instance started with SECRET_KEY (a login then failed). There SECRET_KEY is required,
 * and every command that seals or opens a secret calls this before it opens the store.
 *
 * `service secret-key rotate` replaces the key file's key with the new one (`replaceKeyFile`), so the
 * embedded store started without SECRET_KEY afterwards opens what the rotation sealed.
 */
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, type ServerConfig } from '../config.ts';
import { randomBase62 } from '../random.ts';
import { errnoOf } from '../caught.ts';

/** The one line a command prints (exit 2) when DATABASE_URL is set without SECRET_KEY. */
const SECRET_KEY_REQUIRED =
  'DATABASE_URL is set, so SECRET_KEY must be too: set SECRET_KEY to one key of at least 32 characters, the same on every instance and command that uses this DATABASE_URL (generate one with `openssl rand -base64 48`).';

export async function resolveSecretKey(config: ServerConfig): Promise<string> {
  if (config.secretKey) {
    if (config.secretKey.length < 32) throw new ConfigError('SECRET_KEY must be at least 32 characters.');
    return config.secretKey;
  }
  if (config.databaseUrl) throw new ConfigError(SECRET_KEY_REQUIRED);
  const file = keyFilePath(config.dataDir);
  const existing = await readKeyFile(config.dataDir);
  if (existing !== undefined) return existing;
  await mkdir(config.dataDir, { recursive: true });
  const key = randomBase62(48);
  // 'wx': never overwrite a key another process wrote first; read theirs instead.
  try {
    await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    if (errnoOf(error) === 'EEXIST') return (await readFile(file, 'utf8')).trim();
    throw error;
  }
}

/** The embedded store's key file: `<data dir>/secret.key`. */
export function keyFilePath(dataDir: string): string {
  return join(dataDir, 'secret.key');
}

/** The key in the data directory's key file, or undefined when there is none. */
export async function readKeyFile(dataDir: string): Promise<string | undefined> {
  try {
    return (await readFile(keyFilePath(dataDir), 'utf8')).trim();
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Puts `key` in the data directory's key file, atomically: written to a new file beside it (mode 0600),
 * flushed to disk, then renamed over it, and the directory flushed; a crash leaves the old key or the
 * new one, never a part of either.
 */
export async function replaceKeyFile(dataDir: string, key: string): Promise<void> {
  const temp = join(dataDir, `.secret.key.${process.pid}.${randomBase62(8)}`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(`${key}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, keyFilePath(dataDir));
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  // The rename itself is durable once the directory is flushed (where a directory can be opened for it).
  const dir = await open(dataDir, 'r').catch(() => undefined);
  try {
    await dir?.sync();
  } catch {
    // A file system that cannot flush a directory: the rename is still atomic.
  } finally {
    await dir?.close();
  }
}
