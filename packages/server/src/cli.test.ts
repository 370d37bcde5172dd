/**
 * @module The command line as a user runs it: a real data directory, real HTTP and HTTPS on loopback
 * (a self-signed certificate made with openssl at test time). `init`, `serve` and the failures whose
 * exit code and stderr are checked are real processes; the other commands run in this process
 * (`runInProcess`: what the process runs, on the same arguments and environment, output collected).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from './domain/sessions/totp.ts';
import { seedDataDir } from '@service/testing/store';
import { cliCommand, runInProcess } from '@service/testing/cli-processes';
import { createSelfSignedCertificate } from '@service/testing/https-receiver';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to completion, from `cwd`, without DATABASE_URL (the embedded store). */
function cli(cwd: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...cliCommand(args[0]), ...args], { cwd, env: embeddedEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** The same command in this process, on `<cwd>/data` (DATA_DIR: the default `./data` is relative to the process's folder). */
async function inProcess(cwd: string, ...args: string[]): Promise<Run> {
  const { status, stdout, stderr } = await runInProcess(args, { ...embeddedEnv(), DATA_DIR: join(cwd, 'data') });
  return { code: status, stdout, stderr };
}

function embeddedEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  delete env.DATA_DIR;
  delete env.PORT;
  return env;
}

interface Served {
  child: ChildProcessWithoutNullStreams;
  url: string;
  output: () => string;
  stop(): Promise<number>;
}

/** Starts `serve` and waits for its "Listening on" line. */
function serve(cwd: string, ...args: string[]): Promise<Served> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...cliCommand('serve'), 'serve', '--port', '0', '--host', '127.0.0.1', ...args], { cwd, env: embeddedEnv() });
    let output = '';
    const onData = (d: Buffer) => {
      output += d.toString();
      const match = /Listening on (\S+)/.exec(output);
      if (match) {
        resolve({
          child,
          url: match[1]!,
          output: () => output,
          stop: () =>
            new Promise((done) => {
              child.once('close', (code) => done(code ?? -1));
              child.kill('SIGTERM');
            }),
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('close', (code) => reject(new Error(`serve exited with ${code}: ${output}`)));
  });
}

// Each CLI run starts a process and opens the embedded store (seconds each): generous limits.
describe('service CLI on the embedded store', { timeout: 180_000 }, () => {
  let cwd: string;
  let init: { workspaceId: string; apiKey: string; admin: { email: string; password: string; totpSecret: string } };

  beforeAll(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'service-cli-'));
    seedDataDir(join(cwd, 'data'));
    const run = await cli(cwd, 'init', '--json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    init = JSON.parse(run.stdout) as typeof init;
  }, 180_000);
  afterAll(() => {
    rmSync(cwd, { recursive: true, force: true });
  });

  it('init --json prints the workspace, a full key and the admin with a TOTP secret, in ./data', () => {
    expect(init).toEqual({
      workspaceId: expect.stringMatching(/^wksp_[0-9A-Za-z]{16,32}$/),
      apiKey: expect.stringMatching(/^service_sk_live_[0-9A-Za-z]{24}$/),
      admin: {
        email: 'admin@example.com',
        password: expect.stringMatching(/^[0-9A-Za-z]{24}$/),
        totpSecret: expect.stringMatching(/^[A-Z2-7]{32}$/),
      },
      operatorToken: expect.stringMatching(/^service_op_[0-9A-Za-z]{32}$/),
    });
    // The default data directory is relative to where the command runs.
    expect(readFileSync(join(cwd, 'data', 'pglite', 'PG_VERSION'), 'utf8').trim()).toMatch(/^\d+$/);
  });

  it('refuses a second init', async () => {
    const run = await cli(cwd, 'init', '--json');
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(`Already initialised (workspace ${init.workspaceId})`);
    expect(run.stdout).toBe('');
  });

  it('creates, lists, rotates and revokes keys', async () => {
    const created = await inProcess(cwd, 'keys', 'create', '--name', 'CRM', '--scopes', 'usage:read,tenant:read', '--expires-in-days', '30', '--json');
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout) as Record<string, unknown>;
    expect(Object.keys(key).sort()).toEqual(['expiresAt', 'id', 'prefix', 'scopes', 'secret']);
    expect(key).toMatchObject({ scopes: ['usage:read', 'tenant:read'], secret: expect.stringMatching(/^service_sk_live_/) });
    expect(new Date(key.expiresAt as string).getTime() - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const rotated = await inProcess(cwd, 'keys', 'rotate', key.id as string, '--json');
    expect(rotated.code).toBe(0);
    const fresh = JSON.parse(rotated.stdout) as Record<string, unknown>;
    expect(fresh).toMatchObject({ replaces: key.id, scopes: ['usage:read', 'tenant:read'] });

    const revoked = await inProcess(cwd, 'keys', 'revoke', fresh.id as string, '--json');
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ id: fresh.id, status: 'revoked' });

    const listed = await inProcess(cwd, 'keys', 'list', '--json');
    const data = (JSON.parse(listed.stdout) as { data: { id: string; status: string }[] }).data;
    expect(data.map((k) => [k.id, k.status])).toEqual([
      [fresh.id, 'revoked'],
      [key.id, 'revoked'],
      [expect.any(String), 'active'],
    ]);
    for (const secret of [key.secret, fresh.secret, init.apiKey]) expect(listed.stdout).not.toContain(secret as string);
  });

  it('explains bad input without a stack trace', async () => {
    const bad = await cli(cwd, 'keys', 'create', '--name', 'x', '--scopes', '*:*');
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toBe("invalid_body: 'scopes[0]': the full wildcard is never issued");
    const missing = await inProcess(cwd, 'keys', 'create', '--scopes', 'usage:read');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--name is required.');
    const unknown = await inProcess(cwd, 'keys', 'frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown command: keys frobnicate');
  });

  it('adds and lists users, and prints the TOTP code of a secret', async () => {
    const added = await inProcess(cwd, 'users', 'add', '--email', 'Member@Example.com', '--role', 'member', '--json');
    expect(added.code).toBe(0);
    const user = JSON.parse(added.stdout) as { id: string; email: string; role: string; password: string; totpSecret: string };
    expect(user).toEqual({
      id: expect.stringMatching(/^usr_/),
      email: 'member@example.com',
      role: 'member',
      password: expect.stringMatching(/^[0-9A-Za-z]{24}$/),
      totpSecret: expect.stringMatching(/^[A-Z2-7]{32}$/),
    });
    const again = await inProcess(cwd, 'users', 'add', '--email', 'member@example.com');
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe("invalid_body: 'email' is already in use");
    const listed = await inProcess(cwd, 'users', 'list', '--json');
    expect(JSON.parse(listed.stdout)).toEqual({
      data: [
        { id: expect.any(String), email: 'admin@example.com', role: 'owner', twoFactorEnabled: true },
        { id: user.id, email: 'member@example.com', role: 'member', twoFactorEnabled: true },
      ],
    });
    const before = Date.now();
    const code = await inProcess(cwd, 'totp', user.totpSecret);
    const near = [before - 30_000, before, Date.now(), Date.now() + 30_000].map((ms) => totpCode(user.totpSecret, new Date(ms)));
    expect(code.code).toBe(0);
    expect(near).toContain(code.stdout.trim());
  });

  it('gives --help on every command', async () => {
    const commands = ['init', 'users add', 'users list', 'totp', 'keys create', 'keys list', 'keys revoke', 'keys rotate', 'serve'];
    const runs = await Promise.all(commands.map((command) => inProcess(cwd, ...command.split(' '), '--help')));
    runs.forEach((run, i) => {
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`Usage: service ${commands[i]} `);
    });
    const main = await inProcess(cwd, '--help');
    expect(main.code).toBe(0);
    for (const command of commands) expect(main.stdout).toContain(command);
  });

  it('serves plain HTTP, says so, and a key from init and the admin work over the network', async () => {
    const server = await serve(cwd);
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.output()).toContain('plain HTTP, no TLS');

      const token = await fetch(`${server.url}/v1/mcp/tenant/tokens`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${init.apiKey}` },
      });
      expect(token.status).toBe(201);
      expect(token.headers.get('x-request-id')).toMatch(/^req_/);
      expect(token.headers.get('x-ratelimit-limit')).toBe('60');
      expect(await token.json()).toMatchObject({ tokenType: 'Bearer', scopes: ['mcp:tenant'] });

      const login = await fetch(`${server.url}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          email: init.admin.email,
          password: init.admin.password,
          totpCode: totpCode(init.admin.totpSecret, new Date()),
        }),
      });
      expect(login.status).toBe(200);
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const { csrfToken } = (await login.json()) as { csrfToken: string };
      const created = await fetch(`${server.url}/v1/api-keys`, {
        method: 'POST',
        headers: { Cookie: cookie, 'X-CSRF-Token': csrfToken, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'over http', scopes: ['departments:read'] }),
      });
      expect(created.status).toBe(201);

      const missing = await fetch(`${server.url}/no/such/route`);
      expect(missing.status).toBe(404);
      expect(missing.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      expect(await missing.json()).toEqual({ error: 'not_found', message: 'No such route.' });

      // While the server holds the embedded store, the CLI says so and changes nothing.
      const locked = await cli(cwd, 'keys', 'create', '--name', 'blocked', '--scopes', 'usage:read');
      expect(locked.code).toBe(1);
      expect(locked.stderr).toContain('is in use by `service serve`');
      expect(locked.stderr).toContain('nothing was changed');
      expect(locked.stdout).toBe('');
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // After the server stops, the store is intact and the key created over HTTP is there.
    const listed = await inProcess(cwd, 'keys', 'list', '--json');
    expect(listed.code).toBe(0);
    const names = (JSON.parse(listed.stdout) as { data: { name: string }[] }).data.map((k) => k.name);
    expect(names).toContain('over http');
    expect(names).not.toContain('blocked');
  });

  it('takes over a lock left by a process that no longer exists', async () => {
    writeFileSync(join(cwd, 'data', 'service.lock'), JSON.stringify({ pid: 2 ** 22 + 12345, command: 'serve', since: 'then' }));
    const run = await inProcess(cwd, 'keys', 'list');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('First key (init)');
  });

  it('serves HTTPS with TLS 1.2 at least when given a certificate', async () => {
    const cert = join(cwd, 'cert.pem');
    const key = join(cwd, 'key.pem');
    const certificate = createSelfSignedCertificate();
    writeFileSync(cert, certificate.cert);
    writeFileSync(key, certificate.key);
    const server = await serve(cwd, '--tls-cert', cert, '--tls-key', key);
    try {
      expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(server.output()).toContain('HTTPS, TLS 1.2 minimum');
      const ca = readFileSync(cert);
      const answer = await new Promise<{ status: number; protocol: string; body: string }>((resolve, reject) => {
        const req = httpsRequest(`${server.url}/api-keys`, { ca }, (res) => {
          const protocol = (res.socket as import('node:tls').TLSSocket).getProtocol() ?? '';
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, protocol, body }));
        });
        req.on('error', reject);
        req.end();
      });
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.body)).toEqual({ error: 'not_authenticated', message: 'Sign in first.' });
      expect(['TLSv1.2', 'TLSv1.3']).toContain(answer.protocol);

      const { port } = new URL(server.url);
      const old = await new Promise<string>((resolve) => {
        const socket = tlsConnect({
          host: '127.0.0.1',
          port: Number(port),
          ca,
          minVersion: 'TLSv1',
          maxVersion: 'TLSv1.1',
          ciphers: 'DEFAULT@SECLEVEL=0',
        });
        socket.once('secureConnect', () => {
          resolve(`connected with ${socket.getProtocol()}`);
          socket.destroy();
        });
        socket.once('error', (err) => resolve(`refused: ${err.message}`));
      });
      expect(old).toMatch(/^refused/);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
