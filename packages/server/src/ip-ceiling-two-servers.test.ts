/**
 * The raised per-address ceiling on two real servers sharing PostgreSQL and Redis: the operator raises
 * a workspace to 5,000 requests a minute per address (`service workspaces update --ip-rpm 5000 --rpm
 * 5000`, on the shared store while both servers run); its key then makes 150 requests from one address,
 * alternating servers, all admitted and counted in one shared window (the last answer's
 * `X-RateLimit-Remaining` is 5000 − 150), while anonymous and failed-auth requests from that address
 * are refused at the default 60. Runs when DATABASE_URL and REDIS_URL are set, in a database of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBase62 } from './random.ts';
import { cliProcesses, type CliProcesses } from '@service/testing/cli-processes';
import { freshDatabase } from '@service/testing/store';

const DATABASE_URL = process.env.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL;

describe.skipIf(!DATABASE_URL || !REDIS_URL)('a raised per-address ceiling across two servers on PostgreSQL and Redis', { timeout: 300_000 }, () => {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let dir: string;
  let cli: CliProcesses;
  let credentials: { workspaceId: string; apiKey: string };

  beforeAll(async () => {
    database = await freshDatabase(DATABASE_URL!, 'ipceiling');
    dir = mkdtempSync(join(tmpdir(), 'ip-ceiling-two-servers-'));
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url, REDIS_URL, TRUST_PROXY: '1', SECRET_KEY: randomBase62(40) };
    for (const name of ['OPERATOR_TOKEN', 'SERVICE_URL']) delete env[name];
    cli = cliProcesses(dir, env);
    credentials = JSON.parse(await cli.run('init', '--json')) as { workspaceId: string; apiKey: string };
  }, 180_000);

  afterAll(async () => {
    cli?.killAll();
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  });

  it('the raised workspace uses its 5,000/min from one address on both servers; anonymous and failed-auth traffic keeps 60', async () => {
    const servers = await Promise.all([cli.serve(), cli.serve()]);
    const updated = JSON.parse(await cli.run('workspaces', 'update', credentials.workspaceId, '--ip-rpm', '5000', '--rpm', '5000', '--json')) as Record<
      string,
      unknown
    >;
    expect(updated).toMatchObject({ ipRpmLimit: 5000, rpmLimit: 5000 });

    const address = `10.${Math.floor(Math.random() * 200)}.${Math.floor(Math.random() * 200)}.9`;
    const get = (i: number, authorization?: string) =>
      fetch(`${servers[i % 2]!.url}/usage/current`, { headers: { 'x-forwarded-for': address, ...(authorization ? { authorization } : {}) } });

    const REQUESTS = 150;
    let last: Response | undefined;
    for (let i = 0; i < REQUESTS; i++) {
      last = await get(i, `Bearer ${credentials.apiKey}`);
      expect(last.status, `request ${i + 1}`).toBe(200);
      await last.arrayBuffer();
    }
    expect(last!.headers.get('x-ratelimit-limit')).toBe('5000');
    // One window for both servers: every request of either counted once.
    expect(last!.headers.get('x-ratelimit-remaining')).toBe(String(5000 - REQUESTS));

    for (const [i, authorization] of [
      [0, undefined],
      [1, `Bearer service_sk_live_${'x'.repeat(40)}`],
    ] as const) {
      const refused = await get(i, authorization);
      expect(refused.status, authorization ?? 'anonymous').toBe(429);
      expect(refused.headers.get('x-ratelimit-limit')).toBe('60');
      expect(await refused.json()).toMatchObject({ error: 'rate_limit_exceeded' });
    }
  });
});
