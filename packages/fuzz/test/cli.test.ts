import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { API_KEY } from './fixtures/mini-app.ts';

const run = promisify(execFile);
const ROOT = new URL('..', import.meta.url).pathname;
const TSX = join(ROOT, 'node_modules/.bin/tsx');

async function cli(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(TSX, ['src/cli.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

const TARGET = ['--app', 'test/fixtures/mini-target.ts', '--contract', 'test/fixtures/mini.openapi.json', '--max-cases', '200'];

describe('service-fuzz CLI', () => {
  it('prints help', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--base-url URL');
    expect(r.stdout).toContain('SERVICE_API_KEY');
  });

  it('exits 2 on usage errors', async () => {
    expect((await cli([])).code).toBe(2);
    expect((await cli([...TARGET, '--report', 'html'])).code).toBe(2);
    expect((await cli([...TARGET, '--operation', 'noSuchOperation'])).code).toBe(2);
  });

  it('exits 0 on a correct server, printing the seed and progress', async () => {
    const r = await cli([...TARGET, '--seed', '99']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Seed: 99');
    expect(r.stderr).toMatch(/GET \/runs\.+ +\d+ cases {2}ok/);
    expect(r.stdout).toContain('0 distinct failures');
  });

  it('exits 1 on a broken server, with a curl reproduction that hides the key, and writes JUnit and a cassette', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fuzz-cli-'));
    const junit = join(dir, 'report.xml');
    const r = await cli([...TARGET, '--seed', '5', '--operation', 'listRuns', '--report', 'junit', '--output', junit], { MINI_APP_BUGS: 'server-error' });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('not_a_server_error');
    expect(r.stdout).toMatch(/curl -X GET .*'http:\/\/localhost\/runs\?/);
    expect(r.stdout).toContain('$SERVICE_API_KEY');
    expect(r.stdout).not.toContain(API_KEY);
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toContain('<testsuite name="schemathesis"');
    expect(xml).toMatch(/<testcase name="GET \/runs" classname="listRuns" time="[\d.]+">\s*<failure type="failure"/);

    const cassette = join(dir, 'cassette.yaml');
    const c = await cli([...TARGET, '--seed', '5', '--operation', 'listRuns', '--report', 'cassette', '--output', cassette], { MINI_APP_BUGS: 'server-error' });
    expect(c.code).toBe(1);
    const doc = parse(readFileSync(cassette, 'utf8')) as { http_interactions: Record<string, unknown>[] };
    expect(doc.http_interactions.length).toBeGreaterThan(10);
    const failed = doc.http_interactions.find((i) => i.status === 'FAILURE') as {
      request: { uri: string; method: string; headers: Record<string, string[]> };
      response: { status: { code: string } };
      checks: { name: string; status: string }[];
    };
    expect(failed.request.uri).toMatch(/^http:\/\/localhost\/runs/);
    expect(failed.request.headers.Authorization).toEqual(['Bearer $SERVICE_API_KEY']);
    expect(failed.response.status.code).toBe('500');
    expect(failed.checks).toContainEqual({ name: 'not_a_server_error', status: 'FAILURE', message: expect.stringContaining('500') });
  });
});
