/**
 * The workspace commands against a running server on the embedded store, through its operator API: with
 * SERVICE_URL and OPERATOR_TOKEN, `keys create|list|rotate|revoke`, `kill-switch on|status|off`,
 * `agents pause|list|resume` and `plan set|show` change the served workspace while the server holds the store's lock, each change seen at
 * once over the API; without an address the same command is refused by the lock, and the refusal says to give
 * one; an address without the token is said plainly.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliProcesses, type CliProcesses } from '@service/testing/cli-processes';
import { CREDENTIALS_FILE } from './first-start.ts';

interface Credentials {
  workspaceId: string;
  apiKey: string;
  operatorToken: string;
}

describe('workspace commands through the operator API of a running server', { timeout: 300_000 }, () => {
  let dir: string;
  let cli: CliProcesses;
  let operator: CliProcesses;
  let server: Awaited<ReturnType<CliProcesses['serve']>>;
  let first: Credentials;
  const cliEnv: NodeJS.ProcessEnv = { ...process.env };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'operator-commands-'));
    for (const name of ['DATABASE_URL', 'DATA_DIR', 'PORT', 'REDIS_URL', 'OPERATOR_TOKEN', 'SERVICE_URL']) delete cliEnv[name];
    cli = cliProcesses(dir, cliEnv);
    server = await cli.serve();
    first = JSON.parse(readFileSync(join(dir, 'data', CREDENTIALS_FILE), 'utf8')) as Credentials;
    operator = cliProcesses(dir, { ...cliEnv, SERVICE_URL: server.url, OPERATOR_TOKEN: first.operatorToken });
  });
  afterAll(() => {
    cli?.killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  const withKey = (key: string, method: string, path: string, body?: unknown) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const ask = { alias: 'Prelude', agentSlug: 'sales', messages: [{ role: 'user', content: 'Hello' }] };

  it('without an address the store is locked by the server, and the refusal says to give --url and OPERATOR_TOKEN', async () => {
    await expect(cli.run('keys', 'list')).rejects.toThrow(/in use by `service serve`.*\n.*--url \(or SERVICE_URL\) and OPERATOR_TOKEN/);
    await expect(cli.run('kill-switch', 'status')).rejects.toThrow(/in use by `service serve`/);
  });

  it('an address without the operator token is refused plainly', async () => {
    await expect(cli.run('keys', 'list', '--url', server.url)).rejects.toThrow(/--url needs the operator token/);
    await expect(cli.run('plan', 'show', '--url', server.url)).rejects.toThrow(/--url needs the operator token/);
  });

  it('keys create, list, rotate and revoke change the served workspace', async () => {
    const created = JSON.parse(await operator.run('keys', 'create', '--name', 'reporting', '--scopes', 'usage:read', '--expires-in-days', '30', '--json')) as {
      id: string;
      secret: string;
      scopes: string[];
    };
    expect(Object.keys(created).sort()).toEqual(['expiresAt', 'id', 'prefix', 'scopes', 'secret']);
    expect(created.scopes).toEqual(['usage:read']);
    expect((await withKey(created.secret, 'GET', '/usage/current')).status).toBe(200);

    const listed = JSON.parse(await operator.run('keys', 'list', '--json')) as { data: { id: string; status: string }[] };
    expect(listed.data.map((k) => k.id)).toContain(created.id);
    expect(await operator.run('keys', 'list')).toContain(`${created.id}  `);

    const rotated = JSON.parse(await operator.run('keys', 'rotate', created.id, '--json')) as { id: string; secret: string; replaces: string };
    expect(rotated.replaces).toBe(created.id);
    expect((await withKey(created.secret, 'GET', '/usage/current')).status).toBe(401);
    expect((await withKey(rotated.secret, 'GET', '/usage/current')).status).toBe(200);

    expect(await operator.run('keys', 'revoke', rotated.id)).toMatch(new RegExp(`^Revoked ${rotated.id} \\(service_sk_`));
    expect((await withKey(rotated.secret, 'GET', '/usage/current')).status).toBe(401);
    // A key the workspace does not have: the server's answer, in one line.
    await expect(operator.run('keys', 'revoke', 'key_doesnotexist00000')).rejects.toThrow(/answered 404 not_found/);
  });

  it('kill-switch on refuses the workspace’s invocations, status shows it, off lets them through again', async () => {
    const on = JSON.parse(await operator.run('kill-switch', 'on', '--json')) as { manual: boolean; activeSince: string };
    expect(on.manual).toBe(true);
    const refused = await withKey(first.apiKey, 'POST', '/v1/inference', ask);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: 'kill_switch', kind: 'manual' });
    expect(await operator.run('kill-switch', 'status')).toMatch(new RegExp(`^manual {2}on since ${on.activeSince}\\nhour .* STU since `));
    const status = JSON.parse(await operator.run('kill-switch', 'status', '--json')) as { manual: { engaged: boolean } };
    expect(status.manual.engaged).toBe(true);
    expect((await operator.run('kill-switch', 'off')).trim()).toBe('Manual kill switch off.');
    expect((await withKey(first.apiKey, 'POST', '/v1/inference', ask)).status).toBe(200);
  });

  it('agents pause refuses the agent with the reason, list shows it, resume lets it through again', async () => {
    const paused = JSON.parse(await operator.run('agents', 'pause', 'sales', '--reason', 'Quarter close', '--json'));
    expect(paused).toEqual({ slug: 'sales', state: 'paused', reason: 'Quarter close' });
    const refused = await withKey(first.apiKey, 'POST', '/v1/inference', ask);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'agent_disabled', agentSlug: 'sales', reason: 'Quarter close' });
    const listed = JSON.parse(await operator.run('agents', 'list', '--json')) as {
      plan: string;
      data: { slug: string; state: string; reason: string | null }[];
    };
    expect(listed.data.find((a) => a.slug === 'sales')).toMatchObject({ state: 'paused', reason: 'Quarter close' });
    expect(await operator.run('agents', 'list')).toMatch(/^sales +\S+ +paused \(Quarter close\)$/m);
    expect((await operator.run('agents', 'resume', 'sales')).trim()).toBe('Resumed sales.');
    expect((await operator.run('agents', 'resume', 'sales')).trim()).toBe('sales was not paused.');
    expect((await withKey(first.apiKey, 'POST', '/v1/inference', ask)).status).toBe(200);
    await expect(operator.run('agents', 'pause', 'sales')).rejects.toThrow(/--reason is required/);
  });

  it('plan set changes the plan the server applies; plan show reads it back', async () => {
    expect((await operator.run('plan', 'set', 'starter')).trim()).toBe('Plan set to starter.');
    const shown = JSON.parse(await operator.run('plan', 'show', '--json')) as { name: string; quotaStu: number };
    expect(shown).toMatchObject({ name: 'starter', quotaStu: 2_000_000 });
    const usage = (await (await withKey(first.apiKey, 'GET', '/usage/current')).json()) as { quotaStu: number };
    expect(usage.quotaStu).toBe(2_000_000);
    // legal is not an agent of the starter plan.
    expect((await withKey(first.apiKey, 'POST', '/v1/inference', { ...ask, agentSlug: 'legal' })).status).toBe(403);
    await operator.run('plan', 'set', 'growth');
    expect((await operator.run('plan', 'show')).trim()).toMatch(/^growth: agents /);
  });
});
