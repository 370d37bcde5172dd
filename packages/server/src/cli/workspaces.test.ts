/**
 * Many workspaces in one deployment, over real HTTP with the real command line: the first `serve` on
 * an empty store initialises it (credentials written to a 0600 file; stdout is a pipe here, as in
 * production where it is the log, so the secrets are not printed), the operator
 * adds a second workspace while the server runs (`workspaces create --url`), both are served by the
 * one server and each key sees only its own runs, usage, keys and webhooks; `workspaces update`
 * raises a ceiling; with the server stopped the same commands work on the store directly.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../domain/sessions/totp.ts';
import { describeFailure, runCli } from '../cli.ts';
import { cliProcesses, type CliProcesses } from '@service/testing/cli-processes';
import { CREDENTIALS_FILE } from './first-start.ts';

interface Credentials {
  workspaceId: string;
  apiKey: string;
  admin: { email: string; password: string; totpSecret: string };
  operatorToken?: string;
}

describe('workspaces on one server', { timeout: 300_000 }, () => {
  let dir: string;
  let cli: CliProcesses;
  let server: Awaited<ReturnType<CliProcesses['serve']>>;
  let first: Credentials;
  let second: Credentials;
  const cliEnv: NodeJS.ProcessEnv = { ...process.env };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'workspaces-cli-'));
    for (const name of ['DATABASE_URL', 'DATA_DIR', 'PORT', 'REDIS_URL', 'OPERATOR_TOKEN', 'SERVICE_URL']) delete cliEnv[name];
    cli = cliProcesses(dir, cliEnv);
    server = await cli.serve();
  });
  afterAll(() => {
    cli?.killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = (key: string, path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers } });

  it('the first serve on an empty store initialises it: with stdout piped (a log), no secret is printed, only where the 0600 file is', async () => {
    const file = join(dir, 'data', CREDENTIALS_FILE);
    first = JSON.parse(readFileSync(file, 'utf8')) as Credentials;
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.operatorToken).toMatch(/^service_op_[0-9A-Za-z]{32}$/);
    const output = server.output();
    for (const secret of [first.apiKey, first.admin.password, first.admin.totpSecret, first.operatorToken!]) expect(output).not.toContain(secret);
    expect(output).toContain(file);
    expect(output).toContain(first.workspaceId);
    // It works at once: the printed key invokes an agent.
    const res = await call(first.apiKey, '/v1/inference', {
      method: 'POST',
      body: JSON.stringify({ alias: 'Prelude', agentSlug: 'sales', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(res.status).toBe(200);
  });

  it('`workspaces create` with SERVICE_URL and OPERATOR_TOKEN adds a workspace while the server runs; it prints what init prints', async () => {
    // The address and the token from the environment, as the README shows: no token on the command line.
    const operator = cliProcesses(dir, { ...cliEnv, SERVICE_URL: server.url, OPERATOR_TOKEN: first.operatorToken! });
    const out = await operator.run('workspaces', 'create', '--name', 'Second customer', '--admin-email', 'owner@second.example', '--plan', 'starter', '--json');
    second = JSON.parse(out) as Credentials;
    expect(Object.keys(second).sort()).toEqual(['admin', 'apiKey', 'workspaceId']);
    expect(Object.keys(second.admin).sort()).toEqual(['email', 'password', 'totpSecret']);
    expect(second.admin.email).toBe('owner@second.example');
    expect(second.workspaceId).not.toBe(first.workspaceId);
  });

  it('without --url the embedded store is locked by the server, and the error says what to do', async () => {
    await expect(cli.run('workspaces', 'list', '--json')).rejects.toThrow(/in use by `service serve`/);
  });

  it('each key sees only its own runs, usage, keys and webhooks', async () => {
    const ask = (key: string) =>
      call(key, '/v1/inference', {
        method: 'POST',
        body: JSON.stringify({ alias: 'Prelude', agentSlug: 'sales', messages: [{ role: 'user', content: 'Quarterly numbers' }] }),
      }).then(async (res) => ((await res.json()) as { runId: string }).runId);
    const secondRun = await ask(second.apiKey);
    const firstRuns = (await (await call(first.apiKey, '/runs')).json()) as { data: { id: string }[] };
    const secondRuns = (await (await call(second.apiKey, '/runs')).json()) as { data: { id: string }[] };
    expect(secondRuns.data.map((r) => r.id)).toEqual([secondRun]);
    expect(firstRuns.data.map((r) => r.id)).not.toContain(secondRun);
    expect((await call(first.apiKey, `/runs/${secondRun}`)).status).toBe(404);

    const usage = async (key: string) => (await (await call(key, '/usage/current')).json()) as { quotaStu: number; consumedStu: number };
    expect((await usage(second.apiKey)).quotaStu).toBe(2_000_000);
    expect((await usage(first.apiKey)).quotaStu).toBe(10_000_000);

    // Keys and webhooks, through each owner's session.
    const session = async (who: Credentials) => {
      const res = await fetch(`${server.url}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: who.admin.email, password: who.admin.password, totpCode: totpCode(who.admin.totpSecret, new Date()) }),
      });
      expect(res.status).toBe(200);
      const { csrfToken } = (await res.json()) as { csrfToken: string };
      return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrfToken };
    };
    const [one, two] = [await session(first), await session(second)];
    const admin = (s: { cookie: string; csrfToken: string }, method: string, path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: { cookie: s.cookie, 'x-csrf-token': s.csrfToken, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    expect((await admin(two, 'POST', '/inbound-webhooks', { slug: 'second-crm', agentSlug: 'sales' })).status).toBe(201);
    const keysOf = async (s: typeof one) => ((await (await admin(s, 'GET', '/api-keys')).json()) as { data: { id: string }[] }).data.map((k) => k.id);
    const hooksOf = async (s: typeof one) =>
      ((await (await admin(s, 'GET', '/inbound-webhooks')).json()) as { data: { slug: string }[] }).data.map((h) => h.slug);
    const [firstKeys, secondKeys] = [await keysOf(one), await keysOf(two)];
    expect(firstKeys.filter((id) => secondKeys.includes(id))).toEqual([]);
    expect(await hooksOf(two)).toEqual(['second-crm']);
    expect(await hooksOf(one)).toEqual([]);
    expect((await admin(one, 'DELETE', `/api-keys/${secondKeys[0]}`)).status).toBe(404);
  });

  it('`workspaces update --rpm` raises the ceiling the key sees; `workspaces list` shows every workspace', async () => {
    const token = first.operatorToken!;
    const updated = JSON.parse(
      await cli.run('workspaces', 'update', second.workspaceId, '--rpm', '5000', '--json', '--url', server.url, '--operator-token', token),
    );
    expect(updated).toMatchObject({ id: second.workspaceId, rpmLimit: 5000, plan: 'starter' });
    const list = JSON.parse(await cli.run('workspaces', 'list', '--json', '--url', server.url, '--operator-token', token)) as { data: { id: string }[] };
    expect(list.data.map((w) => w.id)).toEqual([first.workspaceId, second.workspaceId]);
    await expect(cli.run('workspaces', 'update', second.workspaceId, '--rpm', 'many', '--url', server.url, '--operator-token', token)).rejects.toThrow(
      /--rpm is not valid/,
    );
    await expect(cli.run('workspaces', 'list', '--url', server.url, '--operator-token', 'service_op_wrong')).rejects.toThrow(/401 not_authenticated/);
  });

  it('with the server stopped the commands work on the store directly; delete needs --yes', async () => {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
    const third = JSON.parse(
      await cli.run('workspaces', 'create', '--name', 'Third', '--admin-email', 'owner@third.example', '--pending-payment', '--json'),
    ) as Credentials;
    const list = JSON.parse(await cli.run('workspaces', 'list', '--json')) as { data: { id: string; payment: string }[] };
    expect(list.data.find((w) => w.id === third.workspaceId)?.payment).toBe('pending');
    await expect(cli.run('workspaces', 'delete', third.workspaceId)).rejects.toThrow(/--yes/);
    await cli.run('workspaces', 'delete', third.workspaceId, '--yes');
    expect((JSON.parse(await cli.run('workspaces', 'list', '--json')) as { data: unknown[] }).data).toHaveLength(2);
    await expect(cli.run('workspaces', 'delete', third.workspaceId, '--yes')).rejects.toThrow(/No workspace with this id/);
  });
});

describe('workspaces create without --admin-email', () => {
  it('exits 2 and says the owner email is required, before touching any store or server', async () => {
    // SERVICE_URL points nowhere: a command that went on would fail to connect instead.
    const env = { SERVICE_URL: 'http://127.0.0.1:1', OPERATOR_TOKEN: 'service_op_00000000000000000000000000000000' };
    const failure = await runCli(['workspaces', 'create', '--name', 'Acme'], () => {}, env).then(
      (code) => ({ code, message: 'ran' }),
      (err: unknown) => describeFailure(err),
    );
    expect(failure.code).toBe(2);
    expect(failure.message.split('\n')[0]).toBe("--admin-email is required: the email of the new workspace's owner.");
  });
});
