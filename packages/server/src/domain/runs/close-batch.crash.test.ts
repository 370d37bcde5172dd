/**
 * An answered invocation is durable when closes are committed together (close-batch.ts): the real
 * server (`service serve`, embedded PGlite in its worker thread, in a temporary data directory) is
 * killed with SIGKILL while 24 clients invoke it without pause, so that closes wait behind each
 * other and go to the store in batches. Every run answered `200` before the kill is, in the store
 * opened afterwards, `completed` with its steps, its ledger line and its event, and the period's
 * consumption is exactly the ledger's. The process is `node --import tsx cli.ts` itself, so SIGKILL
 * hits the server and not a wrapper.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../store/open.ts';
import { cliProcesses, until, type CliProcesses } from '@service/testing/cli-processes';

const CLIENTS = 24;

describe('kill -9 while closes are batched: every answered run is in the store', () => {
  let dir: string;
  let apiKey: string;
  let cli: CliProcesses;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'close-batch-crash-'));
    const env = { ...process.env };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY']) delete env[name];
    // A receiver on a closed loopback port: its deliveries fail and wait for their next attempt.
    Object.assign(env, { TRUST_PROXY: '1', WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
    cli = cliProcesses(dir, env);
    const init = JSON.parse(await cli.run('init', '--json')) as { apiKey: string; workspaceId: string };
    apiKey = init.apiKey;
    // The workspace's ceiling out of the way (600 a minute by default): the load is the point here.
    await cli.run('workspaces', 'update', init.workspaceId, '--rpm', '1000000');
    // The outbox writes an event some destination takes: one takes run.completed.
    await cli.run('webhooks', 'outbound', 'create', '--url', 'https://127.0.0.1:9/hook', '--events', 'run.completed');
  }, 60_000);

  afterAll(() => {
    cli?.killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('each run answered 200 before the kill is completed, with its steps, ledger line and event', async () => {
    const server = await cli.serve();
    const answered: string[] = [];
    let stop = false;
    let sent = 0;
    const client = async (c: number) => {
      while (!stop) {
        sent += 1;
        const res = await fetch(`${server.url}/v1/inference`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-forwarded-for': `10.8.${c}.${sent % 250}` },
          body: JSON.stringify({ alias: 'Prelude', agentSlug: 'sales', maxTokens: 64, messages: [{ role: 'user', content: `Follow up with lead ${sent}` }] }),
        }).catch(() => undefined);
        if (!res) return;
        if (res.status === 200) answered.push(((await res.json()) as { runId: string }).runId);
        else await res.body?.cancel();
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
    await until(() => answered.length >= 150, '150 answered invocations', 120_000);
    server.child.kill('SIGKILL');
    await new Promise((resolve) => server.child.once('exit', resolve));
    stop = true;
    await Promise.all(clients);
    expect(server.child.signalCode).toBe('SIGKILL');

    const db = await openStore({ dataDir: join(dir, 'data', 'pglite') });
    try {
      const runs = await db.query<{ id: string; status: string; steps: number; ledger: number; events: number }>(
        `SELECT r.id, r.status,
                (SELECT count(*)::int FROM run_steps s WHERE s.run_id = r.id) AS steps,
                (SELECT count(*)::int FROM usage_ledger l WHERE l.run_id = r.id AND l.stu = r.stu) AS ledger,
                (SELECT count(*)::int FROM outbox_events e WHERE e.type = 'run.completed' AND e.data->>'run_id' = r.id) AS events
           FROM runs r WHERE r.id = ANY ($1::text[])`,
        [answered],
      );
      expect(runs).toHaveLength(answered.length);
      for (const run of runs) {
        expect(run).toMatchObject({ status: 'completed', ledger: 1, events: 1 });
        expect(run.steps).toBeGreaterThan(0);
      }
      // Nothing charged without its ledger line, nor the reverse: the batches committed whole or not at all.
      const [ledger] = await db.query<{ stu: number }>(`SELECT coalesce(sum(stu), 0)::float8 AS stu FROM usage_ledger`);
      const [period] = await db.query<{ consumed: number }>(`SELECT sum(consumed_stu)::float8 AS consumed FROM usage_periods`);
      const [closed] = await db.query<{ stu: number }>(`SELECT coalesce(sum(stu), 0)::float8 AS stu FROM runs WHERE status <> 'in_progress'`);
      expect(Number(period!.consumed)).toBe(Number(ledger!.stu));
      expect(Number(closed!.stu)).toBe(Number(ledger!.stu));
    } finally {
      await db.close();
    }
  }, 300_000);
});
