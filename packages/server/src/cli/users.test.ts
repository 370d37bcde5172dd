/**
 * `service users reset-totp|reset-password --email E`, the operator's recovery of a workspace's last
 * owner, with the real command line and a real server: through the running server's operator API
 * (SERVICE_URL + OPERATOR_TOKEN), then on the store directly with the server stopped. Each prints a
 * single-use token that the owner redeems over HTTP, and ends the owner's sessions.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../domain/sessions/totp.ts';
import { cliProcesses, type CliProcesses } from '@service/testing/cli-processes';
import { CREDENTIALS_FILE } from './first-start.ts';

interface Credentials {
  admin: { email: string; password: string; totpSecret: string };
  operatorToken: string;
}

describe('users reset-totp and reset-password', { timeout: 600_000 }, () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let cli: CliProcesses;
  let server: Awaited<ReturnType<CliProcesses['serve']>>;
  let owner: Credentials['admin'];
  let operatorToken: string;
  /** TOTP steps already used by a login of the owner's (each code works once). */
  let step = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'users-cli-'));
    env = { ...process.env };
    for (const name of ['DATABASE_URL', 'DATA_DIR', 'PORT', 'REDIS_URL', 'OPERATOR_TOKEN', 'SERVICE_URL']) delete env[name];
    cli = cliProcesses(dir, env);
    server = await cli.serve();
    const credentials = JSON.parse(readFileSync(join(dir, 'data', CREDENTIALS_FILE), 'utf8')) as Credentials;
    owner = credentials.admin;
    operatorToken = credentials.operatorToken;
  }, 180_000);
  afterAll(() => {
    cli?.killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  /** Signs in with a code of a time step no successful login used yet (each code works once; the server accepts ±1 step). */
  async function login(password: string, totpSecret: string): Promise<Response> {
    let now = Math.floor(Date.now() / 30_000);
    if (step + 1 > now + 1) {
      await new Promise((resolve) => setTimeout(resolve, (now + 1) * 30_000 - Date.now() + 100));
      now += 1;
    }
    const use = Math.max(step + 1, now - 1);
    const res = await post('/auth/login', { email: owner.email, password, totpCode: totpCode(totpSecret, new Date(use * 30_000)) });
    if (res.status === 200) step = use;
    return res;
  }

  it('--help says what each does', async () => {
    expect(await cli.run('users', 'reset-totp', '--help')).toMatch(/Usage: service users reset-totp --email E/);
    expect(await cli.run('users', 'reset-password', '--help')).toMatch(/POST \/account-resets\/redeem/);
    expect(await cli.run('--help')).toMatch(/users reset-password\|reset-totp --email E/);
  });

  it('reset-totp through the operator API (SERVICE_URL, OPERATOR_TOKEN): the owner re-enrols; their sessions ended', async () => {
    const signedIn = await login(owner.password, owner.totpSecret);
    expect(signedIn.status).toBe(200);
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0]!;

    const viaUrl = cliProcesses(dir, { ...env, SERVICE_URL: server.url, OPERATOR_TOKEN: operatorToken });
    const out = await viaUrl.run('users', 'reset-totp', '--email', owner.email);
    const token = /Token: +(service_rst_[0-9A-Za-z]{32})/.exec(out)?.[1];
    expect(token, out).toBeDefined();
    expect(out).toContain('every session of the account has ended');
    expect((await fetch(`${server.url}/workspace/members`, { headers: { cookie } })).status).toBe(401);

    // The new secret first (202, the old one still in force), then its current code completes the reset.
    const setup = await post('/account-resets/redeem', { token, password: owner.password });
    expect(setup.status).toBe(202);
    const { totpSecret } = (await setup.json()) as { totpSecret: string };
    const redeemed = await post('/account-resets/redeem', { token, password: owner.password, totpCode: totpCode(totpSecret, new Date()) });
    expect(redeemed.status).toBe(200);
    expect(await redeemed.json()).toMatchObject({ reset: 'totp', totpSecret });
    expect((await login(owner.password, owner.totpSecret)).status).toBe(401);
    expect((await login(owner.password, totpSecret)).status).toBe(200);
    owner = { ...owner, totpSecret };

    await expect(viaUrl.run('users', 'reset-totp', '--email', 'nobody@example.com')).rejects.toThrow(/404 not_found: No account has this email/);
    await expect(cli.run('users', 'reset-totp', '--email', owner.email, '--url', server.url)).rejects.toThrow(/needs the operator token/);
  });

  it('reset-password on the store with the server stopped; the owner sets a new password', async () => {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
    const reset = JSON.parse(await cli.run('users', 'reset-password', '--email', owner.email, '--json')) as { token: string; reset: string; email: string };
    expect(reset).toMatchObject({ reset: 'password', email: owner.email });
    await expect(cli.run('users', 'reset-password', '--email', 'nobody@example.com')).rejects.toThrow(/No account has this email/);
    await expect(cli.run('users', 'reset-password')).rejects.toThrow(/--email/);

    server = await cli.serve();
    expect((await post('/account-resets/redeem', { token: reset.token, password: 'the owner has a new password' })).status).toBe(200);
    expect((await post('/account-resets/redeem', { token: reset.token, password: 'the owner has a new password' })).status).toBe(410);
    expect((await login('the owner has a new password', owner.totpSecret)).status).toBe(200);
  });
});
