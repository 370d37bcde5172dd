/**
 * `npm start` / `npm test`'s set-up step (scripts/bootstrap.mjs), run as a process on a copy of itself beside a
 * fixture package.json whose real scripts report what they got: run by pnpm it only runs the real script (arguments
 * through, exit code and signal back, SIGTERM passed on, nothing printed); run by npm without pnpm, a machine without
 * npm or without the registry gets one clear line and exit 1. The download itself is scripts/check-fresh-setup.sh's.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

/** What the fixture's scripts do, picked by FIXTURE_MODE. */
const REAL = `node -e "
const mode = process.env.FIXTURE_MODE;
if (mode === 'args') { console.log(JSON.stringify(process.argv.slice(1))); process.exit(0); }
if (mode === 'exit') process.exit(7);
if (mode === 'signal') process.kill(process.pid, 'SIGKILL');
if (mode === 'serve') { process.on('SIGTERM', () => { console.log('stopping'); process.exit(0); }); console.log('ready'); setInterval(() => {}, 1000); }
" --`;

let dir: string;
let bootstrap: string;
/** Every bootstrap started, each in its own process group, so that none (nor its real command) outlives a failed test. */
const started: ChildProcess[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bootstrap-'));
  mkdirSync(join(dir, 'scripts'));
  bootstrap = join(dir, 'scripts', 'bootstrap.mjs');
  copyFileSync(join(ROOT, 'scripts', 'bootstrap.mjs'), bootstrap);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'fixture', private: true, scripts: { 'start:server': `exec ${REAL}`, 'test:all': REAL } }));
});

afterAll(() => {
  for (const child of started) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {}
  }
  rmSync(dir, { recursive: true, force: true });
});

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts the bootstrap with `args` and `env` (on top of a PATH and HOME of the test's choosing). */
function start(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; ended: Promise<Ended>; output: () => string } {
  const child = spawn(process.execPath, [bootstrap, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  started.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const ended = new Promise<Ended>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, ended, output: () => stdout };
}

/** The environment pnpm gives a script: its user agent, the test's PATH and HOME. */
function byPnpm(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, npm_config_user_agent: 'pnpm/12.21.0 npm/? node/v24 linux x64', ...extra };
}

describe('run by pnpm on Node 24', () => {
  it('runs the real script with the arguments as given, printing nothing of its own', async () => {
    const { ended } = start(['test', 'plain', 'two words', "it's", '$HOME', '--flag=a b'], byPnpm({ FIXTURE_MODE: 'args' }));
    const { code, stdout, stderr } = await ended;
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual(['plain', 'two words', "it's", '$HOME', '--flag=a b']);
  });

  it("ends with the real command's exit code", async () => {
    const { code, stderr } = await start(['test'], byPnpm({ FIXTURE_MODE: 'exit' })).ended;
    expect(stderr).toBe('');
    expect(code).toBe(7);
  });

  it('ends by the signal that ended the real command', async () => {
    // `start:server` execs its last command, as the real one does, so no shell stands between (a shell would exit 137).
    const { code, signal } = await start(['start'], byPnpm({ FIXTURE_MODE: 'signal' })).ended;
    expect(code).toBe(null);
    expect(signal).toBe('SIGKILL');
  });

  it('passes SIGTERM on to a serving command, which stops cleanly (exit 0)', async () => {
    const run = start(['start'], byPnpm({ FIXTURE_MODE: 'serve' }));
    await expect.poll(run.output, { timeout: 10_000 }).toContain('ready');
    run.child.kill('SIGTERM');
    const { code, signal, stdout } = await run.ended;
    expect(stdout).toBe('ready\nstopping\n');
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  });
});

describe('run by npm without pnpm, on an empty HOME', () => {
  let home: string;
  let bin: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'bootstrap-home-'));
    bin = join(home, 'bin');
    mkdirSync(bin);
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('says that npm is missing, and exits 1 without running anything', async () => {
    const { code, stdout, stderr } = await start(['start'], { PATH: bin, HOME: home, FIXTURE_MODE: 'args' }).ended;
    expect(stdout).toBe('');
    expect(stderr).toContain('setup: npm is not on PATH.');
    expect(stderr).toContain('README.md, "Set-up by hand"');
    expect(code).toBe(1);
  });

  it('says that the npm registry could not be reached, and exits 1', { timeout: 60_000 }, async () => {
    // The machine's npm (the system's, which the two commands start from) alone on PATH, pointed at a port that refuses connections.
    symlinkSync(process.execPath, join(bin, 'node'));
    symlinkSync(realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim()), join(bin, 'npm'));
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const env = { PATH: bin, HOME: home, npm_config_registry: `http://127.0.0.1:${closed}/`, npm_config_fetch_retries: '0', FIXTURE_MODE: 'args' };
    const { code, stdout, stderr } = await start(['test'], env).ended;
    expect(stdout).toBe('');
    expect(stderr).toContain('setup: installing Node 24 LTS into ~/.cache/service-node24');
    expect(stderr).toContain('setup: installing Node 24 failed (npm exited with 1): the npm registry could not be reached');
    expect(code).toBe(1);
  });
});
