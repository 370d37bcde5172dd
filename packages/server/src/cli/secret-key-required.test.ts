/**
 * With PostgreSQL (DATABASE_URL) every instance and command must share one SECRET_KEY: a key file in
 * one machine's data directory would seal secrets the other instances cannot open. So every command
 * that seals or opens a secret refuses to run without SECRET_KEY, before it touches the store: exit 2
 * and one line that says what to set. (DATABASE_URL points at a port nobody listens on: a command that
 * reached the store first would fail differently.)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeFailure, runCli } from '../cli.ts';
import { cliCommand } from '@service/testing/cli-processes';

const SERVER_DIR = fileURLToPath(new URL('../../', import.meta.url));
const UNREACHABLE = 'postgres://postgres@127.0.0.1:1/nothing';
const EXPECTED = /^DATABASE_URL is set, so SECRET_KEY must be too: .*SECRET_KEY.*every instance/;

describe('SECRET_KEY is required with DATABASE_URL', () => {
  let dir: string;
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: UNREACHABLE };
  for (const name of ['REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY', 'OLD_SECRET_KEY', 'SERVICE_URL', 'OPERATOR_TOKEN']) delete env[name];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'secret-key-required-'));
    env.DATA_DIR = join(dir, 'data');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('init exits 2 with one line naming SECRET_KEY, and writes no key file', () => {
    const result = spawnSync(process.execPath, [...cliCommand('init'), 'init'], { cwd: SERVER_DIR, env, encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(EXPECTED);
    expect(existsSync(join(dir, 'data', 'secret.key'))).toBe(false);
  });

  it.each([
    [['serve', '--port', '0']],
    [['users', 'add', '--email', 'someone@example.com']],
    [['workspaces', 'create', '--name', 'Acme', '--admin-email', 'owner@acme.example']],
    [['webhooks', 'inbound', 'create', '--slug', 'crm-leads', '--agent', 'sales']],
    [['webhooks', 'outbound', 'create', '--url', 'https://hooks.example/x', '--events', 'run.completed']],
  ])('%j refuses the same way', async (args) => {
    const failure = await runCli(args, () => {}, env).then(
      (code) => ({ code, message: 'ran' }),
      (err: unknown) => describeFailure(err),
    );
    expect(failure.code).toBe(2);
    expect(failure.message).toMatch(EXPECTED);
    expect(failure.message.split('\n')).toHaveLength(1);
  });
});
