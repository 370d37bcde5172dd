/**
 * Cross-instance cancel: two `service serve` processes on one PostgreSQL database. A stream hangs in
 * the engine on server A; `POST /runs/{id}/cancel` is answered by server B. The engine on A stops at
 * once through LISTEN/NOTIFY: the stream on A ends without waiting for the engine's hang limit (30 s,
 * which would end it with `timeout`) nor a lease renewal (RUN_LEASE_MS is 10 minutes here). Runs when
 * DATABASE_URL is set (CI), in a database of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBase62 } from '../../random.ts';
import { cliProcesses, type CliProcesses } from '@service/testing/cli-processes';
import { freshDatabase } from '@service/testing/store';

const DATABASE_URL = process.env.DATABASE_URL;

describe.skipIf(!DATABASE_URL)('cancel across two servers on PostgreSQL', () => {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let dir: string;
  let cli: CliProcesses;
  let apiKey: string;

  beforeAll(async () => {
    database = await freshDatabase(DATABASE_URL!, 'cancel');
    dir = mkdtempSync(join(tmpdir(), 'cancel-two-servers-'));
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url, RUN_LEASE_MS: '600000', SECRET_KEY: randomBase62(40) };
    for (const name of ['REDIS_URL', 'METRICS_PORT']) delete env[name];
    cli = cliProcesses(dir, env);
    apiKey = (JSON.parse(await cli.run('init', '--json')) as { apiKey: string }).apiKey;
  }, 60_000);

  afterAll(async () => {
    cli?.killAll();
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  });

  it('a cancel answered by server B stops the engine on server A', { timeout: 120_000 }, async () => {
    const [a, b] = await Promise.all([cli.serve(), cli.serve()]);
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const streamed = await fetch(`${a!.url}/v1/inference`, {
      method: 'POST',
      headers: { ...headers, accept: 'text/event-stream' },
      body: JSON.stringify({ alias: 'Sonata', agentSlug: 'sales', stream: true, messages: [{ role: 'user', content: '[[hang]] Draft a reply' }] }),
    });
    expect(streamed.status).toBe(200);
    const reader = streamed.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('delta')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const list = (await (await fetch(`${b!.url}/runs?status=in_progress`, { headers })).json()) as { data: { id: string }[] };
    expect(list.data).toHaveLength(1);
    const runId = list.data[0]!.id;

    const started = Date.now();
    const canceled = await fetch(`${b!.url}/runs/${runId}/cancel`, { method: 'POST', headers });
    expect(canceled.status).toBe(200);
    expect(((await canceled.json()) as { status: string }).status).toBe('canceled');

    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    // Ended by the cancel, not by the engine's 30-second hang limit (which ends it with `timeout`).
    expect(text).not.toContain('"timeout"');
    expect(Date.now() - started).toBeLessThan(25_000);
    const detail = (await (await fetch(`${a!.url}/runs/${runId}`, { headers })).json()) as { run: { status: string } };
    expect(detail.run.status).toBe('canceled');
  });
});
