/**
 * `users add|list`, `webhooks inbound|outbound …` and `approvals decide` through the operator API of a running
 * server on the embedded store (SERVICE_URL and OPERATOR_TOKEN): each change is seen at once over the API while
 * the server holds the store's lock, the secrets are in the create and rotate answers only, and the audit log
 * names the operator. Once the server stops, the same list commands on the store print what they printed over
 * the API, in `--json` and in text.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliProcesses, type CliProcesses } from '@service/testing/cli-processes';
import { totpCode } from '../domain/sessions/totp.ts';
import { signInboundBody } from '../domain/webhooks/inbound-signature.ts';
import { openStore } from '../store/open.ts';

interface Initialised {
  workspaceId: string;
  apiKey: string;
  operatorToken: string;
  admin: { email: string; password: string; totpSecret: string };
}

/**
 * The output without a destination's delivery failures, which the server's worker went on counting (nothing
 * listens at the receiver) until it stopped.
 */
function steady(output: string): string {
  return output
    .replace(/ {2}failures \d+$/gm, '  failures …')
    .replace(/"consecutiveFailures":\d+/g, '"consecutiveFailures":…')
    .replace(/"lastFailure":(null|\{[^{}]*\})/g, '"lastFailure":…');
}

const APPROVAL = 'apr_opcliAAAAAAAAAAAAAAA';
const OTHER_APPROVAL = 'apr_opcliBBBBBBBBBBBBBBB';
const UNKNOWN_WORKSPACE = 'wksp_AAAAAAAAAAAAAAAAAAAA';

describe('users, webhooks and approvals commands through the operator API of a running server', { timeout: 300_000 }, () => {
  let dir: string;
  let cli: CliProcesses;
  let operator: CliProcesses;
  let server: Awaited<ReturnType<CliProcesses['serve']>>;
  let first: Initialised;
  const cliEnv: NodeJS.ProcessEnv = { ...process.env, WEBHOOK_ALLOW_HOSTS: '127.0.0.1' };
  /** What the list commands printed over the API just before the server stopped, by command line. */
  const overApi = new Map<string, string>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'operator-webhooks-'));
    for (const name of ['DATABASE_URL', 'DATA_DIR', 'PORT', 'REDIS_URL', 'OPERATOR_TOKEN', 'SERVICE_URL', 'SECRET_KEY']) delete cliEnv[name];
    cli = cliProcesses(dir, cliEnv);
    first = JSON.parse(await cli.run('init', '--json')) as Initialised;
    // Two pending approvals of a run, written while no server holds the store.
    const db = await openStore({ dataDir: join(dir, 'data', 'pglite') });
    try {
      const now = new Date();
      await db.query(
        `INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, created_at, updated_at, window_hour, window_day)
         VALUES ('run_opcliAAAAAAAAAAAAAAA', $1, 'in_progress', 'finance', 'finance', 'Sonata', 'api', $2, $2, $2, $2)`,
        [first.workspaceId, now],
      );
      for (const id of [APPROVAL, OTHER_APPROVAL]) {
        await db.query(
          `INSERT INTO approvals (id, workspace_id, run_id, agent_slug, action, summary, expires_at, created_at)
           VALUES ($1, $2, 'run_opcliAAAAAAAAAAAAAAA', 'finance', 'payment.initiate', 'Pay', $3, $4)`,
          [id, first.workspaceId, new Date(now.getTime() + 3_600_000), now],
        );
      }
    } finally {
      await db.close();
    }
    server = await cli.serve();
    operator = cliProcesses(dir, { ...cliEnv, SERVICE_URL: server.url, OPERATOR_TOKEN: first.operatorToken });
  });
  afterAll(() => {
    cli?.killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const list = async (...args: string[]) => {
    const out = await operator.run(...args);
    overApi.set(args.join(' '), out);
    return out;
  };

  it('without an address the store is locked by the server; --help names --url', async () => {
    await expect(cli.run('users', 'list')).rejects.toThrow(/in use by `service serve`.*\n.*--url \(or SERVICE_URL\) and OPERATOR_TOKEN/);
    await expect(cli.run('webhooks', 'inbound', 'list')).rejects.toThrow(/in use by `service serve`/);
    await expect(cli.run('approvals', 'decide', APPROVAL, '--decision', 'approved')).rejects.toThrow(/in use by `service serve`/);
    for (const command of [
      ['users', 'add'],
      ['users', 'list'],
      ['webhooks', 'inbound', 'create'],
      ['webhooks', 'outbound', 'ping'],
      ['approvals', 'decide'],
    ]) {
      expect(await cli.run(...command, '--help')).toMatch(/--operator-token T/);
    }
    expect(await cli.run('webhooks', 'outbound', 'create', '--help')).toMatch(/SERVICE_URL and OPERATOR_TOKEN.*--url is the receiver's here/);
    // Without the operator token, the refusal names where the server's address came from: SERVICE_URL for outbound create.
    const tokenless = cliProcesses(dir, { ...cliEnv, SERVICE_URL: server.url });
    await expect(tokenless.run('webhooks', 'outbound', 'create', '--url', 'https://hooks.example.com/in', '--events', 'run.completed')).rejects.toThrow(
      /SERVICE_URL needs the operator token/,
    );
    await expect(tokenless.run('users', 'list', '--url', server.url)).rejects.toThrow(/--url needs the operator token/);
  });

  it('users add creates a user who signs in with the one-time password and TOTP secret; users list shows them', async () => {
    const added = JSON.parse(await operator.run('users', 'add', '--email', 'Dana@Northwind.example', '--role', 'member', '--json')) as {
      id: string;
      email: string;
      password: string;
      totpSecret: string;
    };
    expect(added).toEqual({
      id: expect.stringMatching(/^usr_/),
      email: 'dana@northwind.example',
      role: 'member',
      password: expect.stringMatching(/^[0-9A-Za-z]{24}$/),
      totpSecret: expect.stringMatching(/^[A-Z2-7]{32}$/),
    });
    const login = await post('/auth/login', JSON.stringify({ email: added.email, password: added.password, totpCode: totpCode(added.totpSecret, new Date()) }));
    expect(login.status).toBe(200);

    const text = await operator.run('users', 'add', '--email', 'lee@northwind.example', '--password', 'a long enough password', '--no-totp');
    expect(text).toMatch(
      /^usr_\S+ {2}lee@northwind\.example {2}admin\npassword: {4}a long enough password {3}\(shown once\)\ntotp secret: \(two-step verification off\)\n$/,
    );

    const listed = JSON.parse(await list('users', 'list', '--json')) as { data: unknown[] };
    expect(listed.data).toEqual([
      { id: expect.stringMatching(/^usr_/), email: first.admin.email, role: 'owner', twoFactorEnabled: true },
      { id: added.id, email: 'dana@northwind.example', role: 'member', twoFactorEnabled: true },
      { id: expect.stringMatching(/^usr_/), email: 'lee@northwind.example', role: 'admin', twoFactorEnabled: false },
    ]);
    expect(JSON.stringify(listed)).not.toContain(added.password);
    expect(await list('users', 'list')).toMatch(new RegExp(`^${added.id} {2}dana@northwind\\.example {2}member {2}totp on$`, 'm'));

    // The server's refusals, in one line; the flags are checked before any call.
    await expect(operator.run('users', 'add', '--email', 'dana@northwind.example')).rejects.toThrow(/answered 400 invalid_body: 'email' is already in use/);
    await expect(operator.run('users', 'list', '--workspace', UNKNOWN_WORKSPACE)).rejects.toThrow(/answered 404 not_found/);
    await expect(operator.run('users', 'add', '--email', 'kim@northwind.example', '--workspace', UNKNOWN_WORKSPACE)).rejects.toThrow(/answered 404 not_found/);
    await expect(operator.run('users', 'add', '--email', 'kim@northwind.example', '--password', 'short')).rejects.toThrow(/--password is not valid/);
    await expect(operator.run('users', 'add', '--email', 'kim@northwind.example', '--role', 'boss')).rejects.toThrow(
      /--role must be one of owner, admin, member/,
    );
  });

  it('webhooks inbound create, list, pause, resume and revoke change what the server accepts', async () => {
    const created = JSON.parse(await operator.run('webhooks', 'inbound', 'create', '--slug', 'crm-leads', '--agent', 'sales', '--rpm', '30', '--json')) as {
      slug: string;
      secret: string;
    };
    expect(created).toEqual({ slug: 'crm-leads', secret: expect.stringMatching(/^whsec_[0-9A-Za-z]{32}$/) });
    const event = JSON.stringify({ event: 'lead.created', id: 'lead_1', contact: { name: 'Dana' } });
    const signed = { 'X-SERVICE-Signature': signInboundBody(event, created.secret) };
    expect((await post('/webhooks/inbound/crm-leads', event, signed)).status).toBe(200);

    const listed = JSON.parse(await operator.run('webhooks', 'inbound', 'list', '--json')) as { data: unknown[] };
    expect(listed.data).toEqual([expect.objectContaining({ slug: 'crm-leads', agentSlug: 'sales', requestsPerMinute: 30, status: 'active' })]);
    expect(JSON.stringify(listed)).not.toContain(created.secret);

    expect((await operator.run('webhooks', 'inbound', 'pause', 'crm-leads')).trim()).toBe('crm-leads: paused');
    const paused = await post('/webhooks/inbound/crm-leads', event, signed);
    expect(paused.status).toBe(404);
    expect(await paused.json()).toMatchObject({ error: 'webhook_unavailable' });
    expect(JSON.parse(await operator.run('webhooks', 'inbound', 'resume', 'crm-leads', '--json'))).toMatchObject({ slug: 'crm-leads', status: 'active' });
    expect((await operator.run('webhooks', 'inbound', 'create', '--slug', 'retired-hook')).trim()).toMatch(/^retired-hook\nwhsec_\S+ {3}\(shown once\)$/);
    expect((await operator.run('webhooks', 'inbound', 'revoke', 'retired-hook')).trim()).toBe('retired-hook: revoked');
    expect(await list('webhooks', 'inbound', 'list')).toMatch(/^retired-hook {2}revoked {2}sha256 {2}agent orchestrator {2}60\/min$/m);
    await list('webhooks', 'inbound', 'list', '--json');

    await expect(operator.run('webhooks', 'inbound', 'create', '--slug', 'crm-leads')).rejects.toThrow(
      /answered 400 invalid_body: The slug 'crm-leads' is already taken/,
    );
    await expect(operator.run('webhooks', 'inbound', 'pause', 'no-such-hook')).rejects.toThrow(/answered 404 not_found/);
    await expect(operator.run('webhooks', 'inbound', 'list', '--workspace', UNKNOWN_WORKSPACE)).rejects.toThrow(/answered 404 not_found/);
    await expect(operator.run('webhooks', 'inbound', 'create', '--slug', 'x', '--algorithm', 'md5')).rejects.toThrow(
      /--algorithm must be one of sha256, sha512/,
    );
  });

  it('webhooks outbound create (the server from SERVICE_URL), list, rotate-secret, pause, resume, ping, test-event and replay', async () => {
    const created = JSON.parse(
      await operator.run('webhooks', 'outbound', 'create', '--url', 'https://127.0.0.1:9443/hook', '--events', 'run.completed,approval.decided', '--json'),
    ) as { id: string; secret: string };
    expect(created).toEqual({ id: expect.stringMatching(/^dst_/), secret: expect.stringMatching(/^whsec_[0-9A-Za-z]{32}$/) });
    const listed = JSON.parse(await operator.run('webhooks', 'outbound', 'list', '--json')) as { data: unknown[] };
    expect(listed.data).toEqual([
      expect.objectContaining({ id: created.id, url: 'https://127.0.0.1:9443/hook', events: ['run.completed', 'approval.decided'], status: 'active' }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    const rotated = JSON.parse(await operator.run('webhooks', 'outbound', 'rotate-secret', created.id, '--json')) as { id: string; secret: string };
    expect(rotated).toEqual({ id: created.id, secret: expect.stringMatching(/^whsec_/) });
    expect(rotated.secret).not.toBe(created.secret);
    expect((await operator.run('webhooks', 'outbound', 'pause', created.id)).trim()).toBe(`${created.id}: paused`);
    expect(JSON.parse(await operator.run('webhooks', 'outbound', 'resume', created.id, '--json'))).toMatchObject({ id: created.id, status: 'active' });
    expect(JSON.parse(await operator.run('webhooks', 'outbound', 'ping', created.id, '--json'))).toEqual({ eventIds: [expect.stringMatching(/^evt_/)] });
    expect(await operator.run('webhooks', 'outbound', 'test-event', created.id, '--type', 'run.failed')).toMatch(/^Queued: evt_\S+\n$/);
    // The test events the server's worker gave up on (nothing listens at the receiver), if any yet, queued again.
    expect((await operator.run('webhooks', 'outbound', 'replay', created.id)).trim()).toMatch(/^(Queued: evt_\S+(, evt_\S+)*|Nothing to replay\.)$/);
    expect(await list('webhooks', 'outbound', 'list')).toMatch(new RegExp(`^${created.id} {2}active {2}https://127\\.0\\.0\\.1:9443/hook`));
    await list('webhooks', 'outbound', 'list', '--json');

    await expect(operator.run('webhooks', 'outbound', 'create', '--url', 'https://10.0.0.8/h', '--events', 'run.completed')).rejects.toThrow(
      /answered 400 invalid_body/,
    );
    await expect(operator.run('webhooks', 'outbound', 'ping', 'dst_AAAAAAAAAAAAAAAAAAAA')).rejects.toThrow(/answered 404 not_found/);
    await expect(operator.run('webhooks', 'outbound', 'test-event', created.id, '--type', 'run.started')).rejects.toThrow(/--type must be one of/);
    await expect(operator.run('webhooks', 'outbound', 'list', '--workspace', UNKNOWN_WORKSPACE)).rejects.toThrow(/answered 404 not_found/);
  });

  it('approvals decide records the decision for the named owner or admin, or the first owner', async () => {
    const decided = JSON.parse(await operator.run('approvals', 'decide', APPROVAL, '--decision', 'rejected', '--by', 'lee@northwind.example', '--json')) as {
      decidedBy: string;
    };
    const users = JSON.parse(await operator.run('users', 'list', '--json')) as { data: { id: string; email: string }[] };
    const lee = users.data.find((u) => u.email === 'lee@northwind.example')!;
    const owner = users.data.find((u) => u.email === first.admin.email)!;
    expect(decided).toMatchObject({ id: APPROVAL, status: 'rejected', decidedBy: lee.id });
    expect((await operator.run('approvals', 'decide', OTHER_APPROVAL, '--decision', 'approved')).trim()).toBe(`${OTHER_APPROVAL}: approved by ${owner.id}`);
    await expect(operator.run('approvals', 'decide', APPROVAL, '--decision', 'approved')).rejects.toThrow(
      /answered 400 invalid_body: This approval is no longer pending/,
    );
    // dana is a member: no one to record an approval for.
    await expect(operator.run('approvals', 'decide', APPROVAL, '--decision', 'approved', '--by', 'dana@northwind.example')).rejects.toThrow(
      /answered 404 member_not_found/,
    );
    await expect(operator.run('approvals', 'decide', 'apr_AAAAAAAAAAAAAAAAAAAA', '--decision', 'approved')).rejects.toThrow(/answered 404 not_found/);
    await expect(operator.run('approvals', 'decide', APPROVAL, '--decision', 'maybe')).rejects.toThrow(/--decision must be one of approved, rejected/);
  });

  it('once the server stops, the store path prints what the operator API printed, and the audit log names the operator', async () => {
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.kill('SIGTERM');
    await exited;
    expect(overApi.size).toBe(6);
    for (const [command, printed] of overApi) {
      const again = await cli.run(...command.split(' '));
      expect({ command, printed: steady(again) }).toEqual({ command, printed: steady(printed) });
    }
    const db = await openStore({ dataDir: join(dir, 'data', 'pglite') });
    try {
      const actions = await db.query<{ action: string; actor_type: string }>(
        `SELECT DISTINCT action, actor_type FROM audit_events WHERE workspace_id = $1 AND (action LIKE 'inbound_webhook.%' OR action LIKE 'destination.%' OR action LIKE 'approval.%' OR action = 'member.added') ORDER BY action`,
        [first.workspaceId],
      );
      expect(actions.map((a) => a.action)).toEqual(
        expect.arrayContaining(['approval.decided', 'destination.created', 'destination.test_sent', 'inbound_webhook.revoked', 'member.added']),
      );
      expect(new Set(actions.map((a) => a.actor_type))).toEqual(new Set(['operator']));
    } finally {
      await db.close();
    }
  });
});
