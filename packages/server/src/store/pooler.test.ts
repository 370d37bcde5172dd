/**
 * The service behind a real PgBouncer in transaction mode (pool_mode = transaction) on loopback, over the real CLI
 * and real HTTP, in a database of its own:
 * - without DATABASE_LISTEN_URL, `service serve` refuses to start (exit 2) with a line naming the cause (a pooler in
 *   transaction mode, where LISTEN does not work) and the fix (DATABASE_LISTEN_URL or session mode), and without
 *   the password or the pooler's address;
 * - with DATABASE_LISTEN_URL reaching PostgreSQL directly, it serves: concurrent invocations all answer 200, and a
 *   key revoked by the CLI through the pooler is refused at once by the server, whose LISTEN connection heard it;
 * - the store's named statements (prepared once per connection) are sent unnamed through the pooler, where a
 *   statement prepared on one server session is unknown to, or already on, the next.
 * Runs when DATABASE_URL is set and /usr/sbin/pgbouncer is installed (Debian's `pgbouncer` package; CI installs it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliProcesses } from '@service/testing/cli-processes';
import { PGBOUNCER, type Pgbouncer, pgbouncerInstalled, startPgbouncer } from '@service/testing/pgbouncer';
import { freshDatabase } from '@service/testing/store';
import { randomBase62 } from '../random.ts';
import { openStore } from './open.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const skipped = !DATABASE_URL ? 'DATABASE_URL is not set' : !pgbouncerInstalled() ? `${PGBOUNCER} is absent (apt-get install pgbouncer)` : undefined;

describe.skipIf(skipped !== undefined)(`behind PgBouncer in transaction mode${skipped ? ` (skipped: ${skipped})` : ''}`, { timeout: 120_000 }, () => {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let bouncer: Pgbouncer | undefined;
  let dir: string;
  let pooled: string;
  let apiKey: string;
  const password = `pw-${randomBase62(12)}`;
  const env: NodeJS.ProcessEnv = { ...process.env };

  beforeAll(async () => {
    database = await freshDatabase(DATABASE_URL!, 'pooler');
    bouncer = await startPgbouncer(database.url, 'transaction');
    // A password in the URL, as operators write it: PgBouncer trusts the client, and the password must appear nowhere.
    const url = new URL(bouncer.via(database.url));
    url.password = password;
    pooled = url.toString();
    dir = mkdtempSync(join(tmpdir(), 'pooler-'));
    for (const name of ['DATABASE_LISTEN_URL', 'REDIS_URL', 'SERVICE_URL', 'OPERATOR_TOKEN', 'DATA_DIR', 'PORT']) delete env[name];
    env.DATABASE_URL = pooled;
    env.SECRET_KEY = randomBase62(40);
    // Initialised through the pooler (a one-off command needs no LISTEN), before any server starts.
    apiKey = (JSON.parse(await cliProcesses(dir, env).run('init', '--json')) as { apiKey: string }).apiKey;
  }, 60_000);

  afterAll(async () => {
    await bouncer?.stop();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serve without DATABASE_LISTEN_URL refuses to start, naming the cause and the fix', async () => {
    const cli = cliProcesses(dir, env);
    try {
      const failure = await cli.serve().then(
        () => undefined,
        (err: Error) => err.message,
      );
      expect(failure).toBeDefined();
      expect(failure).toMatch(/^serve exited \(2\)/);
      expect(failure).toContain('DATABASE_URL reaches PostgreSQL through a pooler in transaction mode');
      expect(failure).toContain('LISTEN does not work there');
      expect(failure).toContain('Set DATABASE_LISTEN_URL to a connection string that reaches the same database directly');
      expect(failure).toContain('run the pooler in session mode');
      expect(failure).not.toContain(password);
      expect(failure).not.toContain(String(bouncer!.port));
      expect(failure).not.toContain('127.0.0.1');
      expect(failure).not.toContain('Listening on');
    } finally {
      cli.killAll();
    }
  });

  it('serve with DATABASE_LISTEN_URL answers concurrent invocations and hears a revoke made through the pooler', async () => {
    const cli = cliProcesses(dir, { ...env, DATABASE_LISTEN_URL: database!.url });
    try {
      const server = await cli.serve();
      expect(server.output()).toContain('LISTEN on DATABASE_LISTEN_URL, statements not prepared by name');
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          fetch(`${server.url}/v1/inference`, {
            method: 'POST',
            headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: `Which invoices are overdue? (${i})` }] }),
          }),
        ),
      );
      const bodies = await Promise.all(answers.map(async (res) => ({ status: res.status, body: (await res.json()) as { runId?: string; error?: string } })));
      for (const { status, body } of bodies) {
        expect(status).toBe(200);
        expect(body.runId).toMatch(/^run_/);
      }

      const key = JSON.parse(await cli.run('keys', 'create', '--name', 'pooled', '--scopes', 'usage:read', '--json')) as { id: string; secret: string };
      const usage = () => fetch(`${server.url}/usage/current`, { headers: { authorization: `Bearer ${key.secret}` } });
      // Verified once: the server now answers this key from its cache, until its LISTEN connection hears otherwise.
      expect((await usage()).status).toBe(200);
      expect((await usage()).status).toBe(200);
      await cli.run('keys', 'revoke', key.id);
      const refused = await usage();
      expect(refused.status).toBe(401);
      expect(refused.headers.get('content-type')).toContain('application/json');
      expect(await refused.json()).toMatchObject({ error: 'api_key_not_found' });
    } finally {
      cli.killAll();
    }
  });

  it('named statements are sent unnamed through the pooler when LISTEN goes elsewhere', async () => {
    const db = await openStore({ databaseUrl: pooled, databaseListenUrl: database!.url, poolSize: 10 });
    try {
      const rows = await Promise.all(
        Array.from({ length: 200 }, (_, i) => db.query<{ n: number }>('SELECT $1::int AS n, pg_sleep(0.001)', [i], { name: 'pooler_check' })),
      );
      expect(rows.map((r) => r[0]!.n)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    } finally {
      await db.close();
    }
  });
});
