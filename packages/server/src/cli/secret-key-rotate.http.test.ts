/**
 * `service secret-key rotate` on the embedded store, then a restart, as a new user would do it: the store
 * initialised with the key file (no SECRET_KEY), the key rotated (a real process), the server started again
 * without SECRET_KEY, and with it. Each time the admin signs in and `/readyz` says ready, with the sealed
 * secrets checked. Before the rotation replaced the key file, the restart without SECRET_KEY read the old key
 * from it: sign-ins answered `503` while `/readyz` said ready. Real processes, real HTTP.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../domain/sessions/totp.ts';
import { cliProcesses, type CliProcesses } from '@service/testing/cli-processes';

const NEW_KEY = 'the-new-key-after-rotation-at-least-32-chars-01';

describe('secret-key rotate on the embedded store, then a restart', () => {
  let dir: string;
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY', 'OLD_SECRET_KEY', 'METRICS_PORT', 'LOG_LEVEL', 'LOG_FORMAT'])
    delete env[name];
  const running: CliProcesses[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'secret-key-rotate-http-'));
  });
  afterAll(() => {
    for (const cli of running) cli.killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Starts the server with `serverEnv`, checks readiness and a sign-in, and stops it. `step` moves the two-step
   * code's time (each code works once: a second sign-in takes the next one, which the server accepts for drift).
   */
  async function signInAfterStart(serverEnv: NodeJS.ProcessEnv, admin: { email: string; password: string; totpSecret: string }, step = 0): Promise<void> {
    const cli = cliProcesses(dir, serverEnv);
    running.push(cli);
    const server = await cli.serve();
    try {
      expect(server.output()).not.toContain('WARNING: A secret stored sealed cannot be opened');
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { store: 'ok', redis: 'not_configured', secrets: 'ok', admission: 'ok' } });
      const res = await fetch(`${server.url}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: admin.email, password: admin.password, totpCode: totpCode(admin.totpSecret, new Date(Date.now() + step * 30_000)) }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('set-cookie')).toBeTruthy();
    } finally {
      cli.killAll();
      const { child } = server;
      await new Promise((resolve) => (child.exitCode === null && child.signalCode === null ? child.once('exit', resolve) : resolve(undefined)));
    }
  }

  it('signs in after the restart, with the key file or with SECRET_KEY', { timeout: 240_000 }, async () => {
    const init = JSON.parse(await cliProcesses(dir, env).run('init', '--json')) as { admin: { email: string; password: string; totpSecret: string } };
    const keyFile = join(dir, 'data', 'secret.key');
    expect(readFileSync(keyFile, 'utf8').trim()).not.toBe(NEW_KEY);

    const rotated = cliProcesses(dir, { ...env, SECRET_KEY: NEW_KEY }).runProcess('secret-key', 'rotate', '--json');
    expect(JSON.parse(rotated)).toEqual({ resealed: 1, unchanged: 0, keyFileReplaced: true });
    expect(readFileSync(keyFile, 'utf8')).toBe(`${NEW_KEY}\n`);

    // Started again as before the rotation (the key file), and as the rotation's help says (SECRET_KEY).
    await signInAfterStart(env, init.admin);
    await signInAfterStart({ ...env, SECRET_KEY: NEW_KEY }, init.admin, 1);
  });
});
