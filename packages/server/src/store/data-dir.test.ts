/**
 * The embedded store's data directory is private to the service's user: after `service init` on a
 * real directory (where an earlier version left a world-writable file), the directory is 0700 and
 * nothing under it has a group or other permission bit.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliProcesses } from '@service/testing/cli-processes';

describe('the data directory', { timeout: 60_000 }, () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function modes(root: string): [string, number][] {
    const out: [string, number][] = [[root, statSync(root).mode & 0o777]];
    for (const name of readdirSync(root, { recursive: true }) as string[]) out.push([name, statSync(join(root, name)).mode & 0o777]);
    return out;
  }

  it('is 0700 and holds nothing readable or writable by group or others', async () => {
    dir = mkdtempSync(join(tmpdir(), 'data-dir-'));
    const data = join(dir, 'data');
    mkdirSync(join(data, 'pglite'), { recursive: true, mode: 0o777 });
    chmodSync(data, 0o777);
    writeFileSync(join(data, 'left-over'), 'x', { mode: 0o666 });
    chmodSync(join(data, 'left-over'), 0o666);
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'SECRET_KEY']) delete env[name];
    await cliProcesses(dir, env).run('init', '--json');

    const all = modes(data);
    expect(all.length).toBeGreaterThan(50);
    expect(all[0]).toEqual([data, 0o700]);
    expect(all.filter(([, mode]) => (mode & 0o077) !== 0)).toEqual([]);
  });
});
