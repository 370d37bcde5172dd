/**
 * `service serve` tells the operator at start when the Redis of REDIS_URL does not answer, instead
 * of claiming the limits are shared and then answering 503 to every request.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliProcesses, type CliProcesses } from '@service/testing/cli-processes';

describe('serve with REDIS_URL', { timeout: 60_000 }, () => {
  let dir: string;
  let cli: CliProcesses;
  afterEach(() => {
    cli?.killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  function start(redisUrl: string) {
    dir = mkdtempSync(join(tmpdir(), 'serve-redis-'));
    const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: redisUrl };
    for (const name of ['DATABASE_URL', 'DATA_DIR', 'PORT']) delete env[name];
    cli = cliProcesses(dir, env);
    return cli.serve();
  }

  it('warns at start when Redis does not answer, and keeps failing closed', async () => {
    const server = await start('redis://127.0.0.1:1');
    expect(server.output()).toMatch(/WARNING: Redis \(REDIS_URL\) does not answer\. Rate-limited routes fail closed with 503/);
    const res = await fetch(`${server.url}/usage/current`, { headers: { authorization: 'Bearer service_sk_live_000000000000000000000000' } });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: 'service_unavailable' });
  });

  it.skipIf(!process.env.REDIS_URL)('says nothing of the kind when Redis answers', async () => {
    const server = await start(process.env.REDIS_URL!);
    expect(server.output()).toContain('Rate limits: shared through Redis (REDIS_URL).');
    expect(server.output()).not.toContain('WARNING: Redis');
  });
});
