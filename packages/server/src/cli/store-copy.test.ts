/**
 * `service store copy --to <postgres URL>` over the real command line and real servers: a store the
 * embedded server filled (runs with their events, keys, an inbound webhook, a destination, audit entries)
 * is refused while that server runs, copied once it stopped into a fresh PostgreSQL database, and a server
 * on that database serves it: the same API key, the runs, the inbound webhook's signing secret, a sign-in
 * with the owner's TOTP, the audit log. A second copy into the same database is refused with nothing
 * written. Runs when DATABASE_URL is set (CI).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliProcesses, type CliProcesses, runInProcess } from '@service/testing/cli-processes';
import { freshDatabase } from '@service/testing/store';
import pg from 'pg';
import { signInboundBody } from '../domain/webhooks/inbound-signature.ts';
import { totpCode } from '../domain/sessions/totp.ts';
import { keyFilePath } from '../runtime/secret-key.ts';
import { CREDENTIALS_FILE } from './first-start.ts';

const DATABASE_URL = process.env.DATABASE_URL;

interface Credentials {
  workspaceId: string;
  apiKey: string;
  admin: { email: string; password: string; totpSecret: string };
}

describe.skipIf(!DATABASE_URL)('service store copy', { timeout: 300_000 }, () => {
  let dir: string;
  let cli: CliProcesses;
  let first: Credentials;
  let target: Awaited<ReturnType<typeof freshDatabase>>;
  const cliEnv: NodeJS.ProcessEnv = { ...process.env };
  const created = { runs: [] as string[], inboundSecret: '', keyId: '' };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'store-copy-'));
    for (const name of ['DATABASE_URL', 'DATA_DIR', 'PORT', 'REDIS_URL', 'OPERATOR_TOKEN', 'SERVICE_URL', 'SECRET_KEY']) delete cliEnv[name];
    // The destination below is on this machine.
    cliEnv.WEBHOOK_ALLOW_HOSTS = '127.0.0.1';
    cli = cliProcesses(dir, cliEnv);
    // A database of its own beside DATABASE_URL's, named after it.
    target = await freshDatabase(DATABASE_URL!, `${new URL(DATABASE_URL!).pathname.slice(1)}_copy`);
  });
  afterAll(async () => {
    cli?.killAll();
    await target?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const copy = (...args: string[]) => runInProcess(['store', 'copy', ...args, '--data-dir', join(dir, 'data')], cliEnv);

  /** Signs in with the TOTP code of `at` (each code is accepted once: a second sign-in takes the next step's, within the drift allowed). */
  async function session(base: string, who: Credentials, at = new Date()) {
    const res = await fetch(`${base}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: who.admin.email, password: who.admin.password, totpCode: totpCode(who.admin.totpSecret, at) }),
    });
    expect(res.status).toBe(200);
    const { csrfToken } = (await res.json()) as { csrfToken: string };
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
    return (method: string, path: string, body?: unknown) =>
      fetch(`${base}${path}`, {
        method,
        headers: { cookie, 'x-csrf-token': csrfToken, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
  }

  const inbound = (base: string, secret: string, eventId: string) => {
    const body = JSON.stringify({ lead: eventId });
    return fetch(`${base}/webhooks/inbound/crm-leads`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-signature': signInboundBody(body, secret),
        'x-service-event-id': eventId,
        'x-service-timestamp': String(Math.floor(Date.now() / 1000)),
      },
      body,
    });
  };

  it('is refused while the embedded server runs (the store is locked), after that server filled the store', async () => {
    const server = await cli.serve();
    try {
      await fill(server.url);
      const refused = await copy('--to', target.url);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toMatch(/in use by `service serve`/);
      expect(refused.stdout).toBe('');
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('exit', resolve));
    }
  });

  async function fill(url: string) {
    const server = { url };
    first = JSON.parse(readFileSync(join(dir, 'data', CREDENTIALS_FILE), 'utf8')) as Credentials;
    for (const content of ['Quarterly numbers', 'Pipeline review']) {
      const res = await fetch(`${server.url}/v1/inference`, {
        method: 'POST',
        headers: { authorization: `Bearer ${first.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ alias: 'Prelude', agentSlug: 'sales', messages: [{ role: 'user', content }] }),
      });
      expect(res.status).toBe(200);
      created.runs.push(((await res.json()) as { runId: string }).runId);
    }
    const admin = await session(server.url, first);
    const key = await admin('POST', '/api-keys', { name: 'reporting', scopes: ['usage:read'], expiresInDays: 30 });
    expect(key.status).toBe(201);
    created.keyId = ((await key.json()) as { id: string }).id;
    const hook = await admin('POST', '/inbound-webhooks', {
      slug: 'crm-leads',
      agentSlug: 'sales',
      alias: 'Sonata',
      algorithm: 'sha256',
      timestampRequired: true,
    });
    expect(hook.status).toBe(201);
    created.inboundSecret = ((await hook.json()) as { secret: string }).secret;
    expect((await inbound(server.url, created.inboundSecret, 'evt-before')).status).toBe(200);
    const destination = await admin('POST', '/webhook-destinations', { url: 'https://127.0.0.1:9/hook', events: ['run.completed'] });
    expect(destination.status).toBe(201);
  }

  it('copies every table into the fresh database, prints each table’s rows and where the key is, never the key', async () => {
    const result = await copy('--to', target.url);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const counts = Object.fromEntries([...result.stdout.matchAll(/^ {2}([a-z_]+) +(\d+) +(\d+)$/gm)].map((m) => [m[1]!, [Number(m[2]), Number(m[3])]]));
    expect(counts.runs).toEqual([3, 3]); // two invocations and the inbound event's run
    expect(counts.workspaces).toEqual([1, 1]);
    expect(counts.api_keys).toEqual([2, 2]);
    expect(counts.inbound_webhooks).toEqual([1, 1]);
    expect(counts.webhook_destinations).toEqual([1, 1]);
    expect(counts.audit_events![0]).toBeGreaterThan(0);
    expect(counts.run_events![0]).toBeGreaterThan(0);
    for (const [source, copied] of Object.values(counts)) expect(copied).toBe(source);
    // The sequences stand where the store's did: the next run's number follows the copied ones.
    expect(await inTarget<boolean>('SELECT last_value >= (SELECT max(seq) FROM runs) FROM runs_seq_seq')).toBe(true);
    const keyFile = keyFilePath(join(dir, 'data'));
    const key = readFileSync(keyFile, 'utf8').trim();
    expect(result.stdout).toContain(`SECRET_KEY set to the key in ${keyFile}`);
    expect(result.stdout).not.toContain(key);
    // The target's password never appears: only its host and database.
    expect(result.stdout).toContain(`to postgres://${new URL(target.url).host}${new URL(target.url).pathname}`);
  });

  it('a server on the copy serves the same key, the runs, the webhook secret, the owner’s TOTP and the audit log', async () => {
    const onPostgres = cliProcesses(mkdtempSync(join(dir, 'pg-')), {
      ...cliEnv,
      DATABASE_URL: target.url,
      SECRET_KEY: readFileSync(keyFilePath(join(dir, 'data')), 'utf8').trim(),
    });
    const server = await onPostgres.serve();
    expect(server.output()).toContain('PostgreSQL');
    try {
      await servesTheCopy(server.url);
    } finally {
      onPostgres.killAll();
    }
  });

  async function servesTheCopy(url: string) {
    const server = { url };
    const runs = await fetch(`${server.url}/runs`, { headers: { authorization: `Bearer ${first.apiKey}` } });
    expect(runs.status).toBe(200);
    const listed = ((await runs.json()) as { data: { id: string }[] }).data.map((r) => r.id);
    for (const id of created.runs) expect(listed).toContain(id);
    expect(listed).toHaveLength(3);

    // The inbound webhook's secret, sealed in the embedded store, opens on PostgreSQL: a signed event is accepted.
    expect((await inbound(server.url, created.inboundSecret, 'evt-after')).status).toBe(200);
    expect((await inbound(server.url, `${created.inboundSecret}x`, 'evt-forged')).status).toBe(401);

    const admin = await session(server.url, first, new Date(Date.now() + 30_000));
    const audit = await admin('GET', '/audit-events');
    expect(audit.status).toBe(200);
    const entries = ((await audit.json()) as { data: { action: string; target: { id: string } | null }[] }).data;
    expect(entries.some((e) => e.action === 'key.created' && e.target?.id === created.keyId)).toBe(true);
    // The sequence of runs continues after the copied ones: a new run is listed first.
    const next = await fetch(`${server.url}/v1/inference`, {
      method: 'POST',
      headers: { authorization: `Bearer ${first.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Prelude', agentSlug: 'sales', messages: [{ role: 'user', content: 'After the move' }] }),
    });
    expect(next.status).toBe(200);
    const newest = ((await (await fetch(`${server.url}/runs`, { headers: { authorization: `Bearer ${first.apiKey}` } })).json()) as { data: { id: string }[] })
      .data[0]!.id;
    expect(newest).toBe(((await next.json()) as { runId: string }).runId);
  }

  /** One value read from the target database. */
  async function inTarget<T>(sql: string): Promise<T> {
    const client = new pg.Client({ connectionString: target.url });
    await client.connect();
    try {
      return Object.values((await client.query(sql)).rows[0] as object)[0] as T;
    } finally {
      await client.end();
    }
  }

  it('refuses a target that holds rows, and writes nothing', async () => {
    const count = () => inTarget<number>('SELECT count(*)::int FROM runs');
    const before = await count();
    const result = await copy('--to', target.url);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^The target database is not empty \(rows in [a-z_]+, .* more\); nothing was written\./);
    expect(result.stdout).toBe('');
    expect(await count()).toBe(before);
  });

  it('says what is wrong with --to', async () => {
    expect((await copy()).stderr).toMatch(/^--to is required/);
    expect((await copy('--to', 'mysql://host/db')).stderr).toMatch(/^--to must be a postgres:\/\/ URL/);
    const unreachable = await copy('--to', 'postgres://nobody:secret-password@127.0.0.1:1/none');
    expect(unreachable.status).toBe(2);
    expect(unreachable.stderr).toMatch(/^Could not connect to postgres:\/\/127\.0\.0\.1:1\/none/);
    expect(unreachable.stderr).not.toContain('secret-password');
  });
});
