/**
 * @module The key that seals secrets at rest (webhook signing secrets, TOTP secrets). `SECRET_KEY`
 * when set; otherwise, with the embedded store only, a random key kept in `<data dir>/secret.key`
 * (mode 0600), created on first use. With PostgreSQL several instances and commands share the store,
 * so they must share one key: a key file would be one machine's, and what it sealed could not be
 * opened by an instance started with SECRET_KEY (a login then failed). There SECRET_KEY is required,
 * and every command that seals or opens a secret calls this before it opens the store.
 */
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, type ServerConfig } from '../config.ts';
import { randomBase62 } from '../random.ts';

/** The one line a command prints (exit 2) when DATABASE_URL is set without SECRET_KEY. */
const SECRET_KEY_REQUIRED =
  'DATABASE_URL is set, so SECRET_KEY must be too: set SECRET_KEY to one key of at least 32 characters, the same on every instance and command that uses this DATABASE_URL (generate one with `openssl rand -base64 48`).';

export async function resolveSecretKey(config: ServerConfig): Promise<string> {
  if (config.secretKey) {
    if (config.secretKey.length < 32) throw new ConfigError('SECRET_KEY must be at least 32 characters.');
    return config.secretKey;
  }
  if (config.databaseUrl) throw new ConfigError(SECRET_KEY_REQUIRED);
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
