/**
 * `service secret-key rotate` (in-process, embedded store): every secret at rest is re-sealed from
 * the key file to the new SECRET_KEY and opens to the same value, and the key file then holds the new
 * key (mode 0600); a second run changes nothing; a wrong old key stops the command with nothing changed.
 * The restart after it, with real processes: secret-key-rotate.http.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeFailure, runCli } from '../cli.ts';
import { createSecretBox } from '../domain/webhooks/secret-box.ts';
import { openStore } from '../store/open.ts';
import { seedDataDir } from '@service/testing/store';

const NEW_KEY = 'new-secret-key-of-at-least-32-characters-0001';

describe('service secret-key rotate', () => {
  let dir: string;
  const base: NodeJS.ProcessEnv = { ...process.env, WEBHOOK_ALLOW_HOSTS: '127.0.0.1' };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'SECRET_KEY', 'OLD_SECRET_KEY']) delete base[name];

  async function cli(env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number; out: string }> {
    let out = '';
    try {
      const code = await runCli([...args, '--data-dir', join(dir, 'data')], (line) => (out += `${line}\n`), env);
      return { code, out };
    } catch (err) {
      const { code, message } = describeFailure(err);
      return { code, out: message };
    }
  }

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'secret-key-rotate-'));
    seedDataDir(join(dir, 'data'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('re-seals webhook and TOTP secrets under the new key, once', { timeout: 120_000 }, async () => {
    const init = JSON.parse((await cli(base, 'init', '--json')).out) as { admin: { totpSecret: string } };
    const outbound = JSON.parse(
      (await cli(base, 'webhooks', 'outbound', 'create', '--url', 'https://127.0.0.1:9443/hook', '--events', 'run.completed', '--json')).out,
    ) as {
      id: string;
      secret: string;
    };
    // Rotated once: the replaced secret is kept, sealed, through its grace period, and is re-sealed too.
    const renewed = JSON.parse((await cli(base, 'webhooks', 'outbound', 'rotate-secret', outbound.id, '--json')).out) as { secret: string };
    const inbound = JSON.parse((await cli(base, 'webhooks', 'inbound', 'create', '--slug', 'crm-leads', '--agent', 'sales', '--json')).out) as {
      secret: string;
    };

    // A wrong old key: refused, nothing changed.
    const wrong = await cli({ ...base, SECRET_KEY: NEW_KEY, OLD_SECRET_KEY: 'not-the-key-in-use-but-32-characters-long' }, 'secret-key', 'rotate');
    expect(wrong.code).toBe(2);
    expect(wrong.out).toContain('opens under neither');

    // Without SECRET_KEY: a usage error.
    expect((await cli(base, 'secret-key', 'rotate')).code).toBe(2);

    const keyFile = join(dir, 'data', 'secret.key');
    const oldKey = readFileSync(keyFile, 'utf8').trim();
    const rotated = await cli({ ...base, SECRET_KEY: NEW_KEY }, 'secret-key', 'rotate', '--json');
    expect(rotated).toEqual({ code: 0, out: `${JSON.stringify({ resealed: 4, unchanged: 0, keyFileReplaced: true })}\n` });
    // The key file, which `serve` reads without SECRET_KEY, holds the new key, readable by its owner only.
    expect(readFileSync(keyFile, 'utf8')).toBe(`${NEW_KEY}\n`);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const again = await cli({ ...base, SECRET_KEY: NEW_KEY }, 'secret-key', 'rotate', '--json');
    expect(again).toEqual({ code: 0, out: `${JSON.stringify({ resealed: 0, unchanged: 4, keyFileReplaced: false })}\n` });
    // Interrupted after the store's commit, before the file was replaced: run again, the file is replaced.
    writeFileSync(keyFile, `${oldKey}\n`, { mode: 0o600 });
    const resumed = await cli({ ...base, SECRET_KEY: NEW_KEY }, 'secret-key', 'rotate');
    expect(resumed.code).toBe(0);
    expect(resumed.out).toContain('Re-sealed 0 secrets under the new key (4 already were). The key file');
    expect(readFileSync(keyFile, 'utf8')).toBe(`${NEW_KEY}\n`);

    // Every sealed value opens under the new key to the secret handed out at creation.
    const db = await openStore({ dataDir: join(dir, 'data', 'pglite') });
    try {
      const box = createSecretBox(NEW_KEY);
      const [dst] = await db.query<{ s: string; p: string }>(`SELECT secret_encrypted AS s, previous_secret_encrypted AS p FROM webhook_destinations`);
      const [hook] = await db.query<{ s: string }>(`SELECT secret_encrypted AS s FROM inbound_webhooks`);
      const [user] = await db.query<{ s: string }>(`SELECT totp_secret AS s FROM users`);
      expect(box.open(dst!.s)).toBe(renewed.secret);
      expect(box.open(dst!.p)).toBe(outbound.secret);
      expect(box.open(hook!.s)).toBe(inbound.secret);
      expect(box.open(user!.s)).toBe(init.admin.totpSecret);
    } finally {
      await db.close();
    }
  });
});
