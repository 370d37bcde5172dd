/**
 * @module The key that seals webhook signing secrets at rest. `SECRET_KEY` when set; otherwise a
 * random key kept in `<data dir>/secret.key` (mode 0600), created on first use. With PostgreSQL
 * several instances must share one key, so there `SECRET_KEY` should be set: without it each
 * machine would have its own key file and could not open the others' secrets (`serve` warns).
 */
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, type ServerConfig } from '../config.ts';
import { randomBase62 } from '../random.ts';

/** The warning `serve` prints when instances sharing PostgreSQL may not share the key. */
export const SHARED_KEY_WARNING =
  'Warning: SECRET_KEY is not set; webhook secrets are sealed with the key file in the data directory. Set the same SECRET_KEY on every instance that shares DATABASE_URL.';

export async function resolveSecretKey(config: ServerConfig): Promise<string> {
  if (config.secretKey) {
    if (config.secretKey.length < 32) throw new ConfigError('SECRET_KEY must be at least 32 characters.');
    return config.secretKey;
  }
  const file = join(config.dataDir, 'secret.key');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(config.dataDir, { recursive: true });
  const key = randomBase62(48);
  // 'wx': never overwrite a key another process wrote first; read theirs instead.
  try {
    await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return (await readFile(file, 'utf8')).trim();
    throw error;
  }
}
