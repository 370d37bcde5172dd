/**
 * `service serve --workers N`: N server processes behind one port (cli/cluster.ts), sharing the
 * store through PostgreSQL and the limits through Redis; refused on the embedded store; stopped
 * whole by SIGTERM. The PostgreSQL part runs when DATABASE_URL and REDIS_URL are set (CI), in a
 * database of its own.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBase62 } from '../random.ts';
import { cliCommand, cliProcesses, type CliProcesses } from '@service/testing/cli-processes';
import { freshDatabase } from '@service/testing/store';

const DATABASE_URL = process.env.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL;
const SERVER_DIR = fileURLToPath(new URL('../../', import.meta.url));

/** The processes whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        // The parent pid is the 4th field, after the command name in parentheses.
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('serve --workers on the embedded store', () => {
  it('refuses more than one worker, saying why, with exit code 2', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cluster-embedded-'));
    try {
      const env: NodeJS.ProcessEnv = { ...process.env };
      for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'WORKERS']) delete env[name];
      const result = spawnSync(process.execPath, [...cliCommand('serve'), 'serve', '--port', '0', '--workers', '2', '--data-dir', join(dir, 'data')], {
        cwd: SERVER_DIR,
        env,
        encoding: 'utf8',
      });
      expect(result.status).toBe(2);
      expect(result.stderr).toContain('--workers 2: the embedded store is one process. Set DATABASE_URL (PostgreSQL) and REDIS_URL to run several');
      expect(result.stdout).not.toContain('Listening on');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!DATABASE_URL || !REDIS_URL)('serve --workers 2 on PostgreSQL and Redis', () => {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let dir: string;
  let cli: CliProcesses;
  let apiKey: string;
  let workspaceId: string;

  beforeAll(async () => {
    database = await freshDatabase(DATABASE_URL!, 'cluster');
    dir = mkdtempSync(join(tmpdir(), 'cluster-'));
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url, REDIS_URL, TRUST_PROXY: '1', SECRET_KEY: randomBase62(40) };
    delete env.WORKERS;
    cli = cliProcesses(dir, env);
    ({ apiKey, workspaceId } = JSON.parse(await cli.run('init', '--json')) as { apiKey: string; workspaceId: string });
  }, 60_000);

  afterAll(async () => {
    cli?.killAll();
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  });

  it('serves from two processes on one port, shares the workspace limit, replaces a dead worker, and stops whole on SIGTERM', async () => {
    const server = await cli.serve('--workers', '2');
    // The primary forks two workers; the first prints the start-up lines, the primary the summary.
    const pid = server.child.pid!;
    await expect.poll(() => server.output(), { timeout: 30_000 }).toContain(`Workers: 2 server processes share ${server.url}`);
    const workers = childrenOf(pid);
    expect(workers).toHaveLength(2);
    expect(server.output().match(/Listening on /g)).toHaveLength(1);

    // The workspace's ceiling, lowered to 4 a minute, holds across both processes (Redis): eight
    // requests in turn meet 4 answers and 4 refusals, not 4 per process.
    await cli.run('workspaces', 'update', workspaceId, '--rpm', '4');
    const statuses: number[] = [];
    for (let i = 0; i < 8; i += 1) {
      const r = await fetch(`${server.url}/usage/current`, { headers: { authorization: `Bearer ${apiKey}`, 'x-forwarded-for': `10.77.${i}.1` } });
      statuses.push(r.status);
      await r.body?.cancel();
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(4);
    expect(statuses.filter((s) => s === 429)).toHaveLength(4);

    // A worker that dies is replaced; the port keeps answering meanwhile.
    process.kill(workers[1]!, 'SIGKILL');
    await expect.poll(() => server.output(), { timeout: 30_000 }).toMatch(/Worker [12] exited \(SIGKILL\); starting another\./);
    await expect.poll(() => childrenOf(pid).filter((p) => !workers.includes(p)).length, { timeout: 30_000 }).toBe(1);
    const healthy = await fetch(`${server.url}/healthz`);
    expect(healthy.status).toBe(200);
    const running = childrenOf(pid);

    server.child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => server.child.once('exit', (c) => resolve(c)));
    expect(code).toBe(0);
    for (const worker of [...workers, ...running]) expect(alive(worker)).toBe(false);
  }, 90_000);
});
