/**
 * @module The key that seals webhook signing secrets at rest. `SECRET_KEY` when set (required with
 * PostgreSQL, where several instances must share it); otherwise, for the embedded store, a random
 * key kept beside the data in `<data dir>/secret.key` (mode 0600), created on first use.
 */
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, type ServerConfig } from '../config.ts';
import { randomBase62 } from '../random.ts';

export async function resolveSecretKey(config: ServerConfig): Promise<string> {
  if (config.secretKey) {
    if (config.secretKey.length < 32) throw new ConfigError('SECRET_KEY must be at least 32 characters.');
    return config.secretKey;
  }
  if (config.databaseUrl) {
    throw new ConfigError('SECRET_KEY is required with DATABASE_URL (every instance must seal webhook secrets with the same key).');
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
