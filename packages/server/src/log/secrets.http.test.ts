/**
 * No secret reaches the log: the real server (`service serve`, embedded PGlite) runs with
 * LOG_LEVEL=debug while an admin signs in, creates an API key, an MCP token, an inbound webhook and a
 * webhook destination, and callers send wrong credentials. Every secret created or sent (API keys,
 * password, TOTP secret and code, session cookie, CSRF token, webhook secrets, MCP token, a forged
 * signature) is then looked for in everything the process wrote: none may appear.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../domain/sessions/totp.ts';
import { cliProcesses, type CliProcesses } from '@service/testing/cli-processes';

describe('logs at debug level carry no secret', () => {
  let dir: string;
  let cli: CliProcesses;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'log-secrets-'));
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY', 'METRICS_PORT']) delete env[name];
    Object.assign(env, { LOG_LEVEL: 'debug', WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
    cli = cliProcesses(dir, env);
  }, 60_000);

  afterAll(() => {
    cli?.killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes one JSON line per request, with none of the secrets', { timeout: 120_000 }, async () => {
    const init = JSON.parse(await cli.run('init', '--json')) as { apiKey: string; admin: { email: string; password: string; totpSecret: string } };
    const server = await cli.serve();
    const secrets: Record<string, string> = {
      apiKey: init.apiKey,
      password: init.admin.password,
      totpSecret: init.admin.totpSecret,
    };
    const call = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
      fetch(`${server.url}${path}`, { ...init, headers: { 'content-type': 'application/json', ...init.headers } });

    // A wrong password first (sent in the body), then the real sign-in.
    secrets.wrongPassword = 'Wr0ng-Passw0rd-Nobody-Uses-42';
    expect(
      (await call('/auth/login', { method: 'POST', body: JSON.stringify({ email: init.admin.email, password: secrets.wrongPassword, totpCode: '000000' }) }))
        .status,
    ).toBe(401);
    const code = totpCode(init.admin.totpSecret, new Date());
    const login = await call('/auth/login', {
      method: 'POST',
      body: JSON.stringify({ email: init.admin.email, password: init.admin.password, totpCode: code }),
    });
    expect(login.status).toBe(200);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    secrets.sessionCookie = cookie.split('=')[1]!;
    secrets.csrfToken = ((await login.json()) as { csrfToken: string }).csrfToken;
    const admin = { cookie, 'x-csrf-token': secrets.csrfToken };

    const key = await call('/api-keys', { method: 'POST', headers: admin, body: JSON.stringify({ name: 'ci', scopes: ['usage:read'], expiresInDays: 30 }) });
    expect(key.status).toBe(201);
    secrets.createdKey = ((await key.json()) as { secret: string }).secret;

    const mcp = await call('/v1/mcp/tenant/tokens', { method: 'POST', headers: { authorization: `Bearer ${init.apiKey}` } });
    expect(mcp.status).toBe(201);
    secrets.mcpToken = ((await mcp.json()) as { token: string }).token;

    const hook = await call('/inbound-webhooks', {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ slug: 'crm-leads', agentSlug: 'sales', alias: 'Sonata', algorithm: 'sha256', timestampRequired: true }),
    });
    expect(hook.status).toBe(201);
    secrets.inboundSecret = ((await hook.json()) as { secret: string }).secret;

    const destination = await call('/webhook-destinations', {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ url: 'https://127.0.0.1:9/hook', events: ['run.completed'] }),
    });
    expect(destination.status).toBe(201);
    secrets.destinationSecret = ((await destination.json()) as { secret: string }).secret;

    // Wrong credentials of every kind: a forged key, a forged signature.
    secrets.forgedKey = 'service_sk_live_ForgedKeyNobodyHas000001';
    expect((await call('/v1/agents', { headers: { authorization: `Bearer ${secrets.forgedKey}` } })).status).toBe(401);
    secrets.forgedSignature = `${'f'.repeat(63)}e`;
    const forged = await call('/webhooks/inbound/crm-leads', {
      method: 'POST',
      headers: { 'x-service-signature': secrets.forgedSignature, 'x-service-event-id': 'evt-1', 'x-service-timestamp': String(Math.floor(Date.now() / 1000)) },
      body: JSON.stringify({ lead: 1 }),
    });
    expect(forged.status).toBe(401);

    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
    const output = server.output();

    // The log is there: one JSON line per request, with its operationId, status and request id.
    const lines = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const requests = lines.filter((line) => line.msg === 'request');
    expect(requests.map((line) => line.operationId)).toEqual(
      expect.arrayContaining(['login', 'createApiKey', 'createMcpToken', 'createInboundWebhook', 'createWebhookDestination', 'listAgents']),
    );
    expect(requests.find((line) => line.operationId === 'createApiKey')).toMatchObject({
      level: 'info',
      status: 201,
      requestId: expect.stringMatching(/^req_/),
      workspaceId: expect.stringMatching(/^wksp_/),
      clientIp: '127.0.0.1',
      durationMs: expect.any(Number),
      time: expect.any(String),
    });

    for (const [name, secret] of Object.entries(secrets)) {
      expect(secret.length, name).toBeGreaterThan(5);
      expect(output.includes(secret), `${name} appears in the log`).toBe(false);
    }
    expect(output.includes(code), 'the TOTP code appears in the log').toBe(false);
  });
});
