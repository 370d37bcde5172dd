/**
 * @module `pnpm mock` listens where it is told: `pnpm mock --port N` (and `PORT=N pnpm mock`) answers on
 * N. The test runs the `mock` script of package.json as pnpm does (its command line with the arguments
 * appended, `node_modules/.bin` on PATH), on a free loopback port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './support/prism.ts';

const ROOT = resolve(import.meta.dirname, '..');
const SCRIPT = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.mock!;

let child: ChildProcess | undefined;
afterEach(async () => {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child!.once('exit', done));
  // The whole process group: the shell, the wrapper and Prism.
  process.kill(-child.pid!, 'SIGTERM');
  await exited;
});

/** `pnpm mock <args>`: the script's command line in a shell, with the arguments appended. */
function pnpmMock(args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; output: () => string; exit: Promise<number | null> } {
  const path = `${resolve(ROOT, 'node_modules/.bin')}${delimiter}${process.env.PATH ?? ''}`;
  const started = spawn('sh', ['-c', `${SCRIPT} "$@"`, 'mock', ...args], {
    cwd: ROOT,
    env: { ...process.env, PATH: path, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  started.stdout!.on('data', (b: Buffer) => (output += b.toString()));
  started.stderr!.on('data', (b: Buffer) => (output += b.toString()));
  child = started;
  return { child: started, output: () => output, exit: new Promise((done) => started.once('exit', done)) };
}

async function answersOn(port: number, output: () => string, exit: Promise<number | null>): Promise<Response> {
  const deadline = Date.now() + 60_000;
  let exited = false;
  void exit.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`the mock exited:\n${output()}`);
    const res = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
    if (res) return res;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`nothing answered on ${port}:\n${output()}`);
}

describe('pnpm mock', { timeout: 90_000 }, () => {
  it('--port N: the mock answers on N', async () => {
    const port = await freePort();
    const mock = pnpmMock(['--port', String(port)]);
    const res = await answersOn(port, mock.output, mock.exit);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: expect.any(String) });
  });

  it('PORT=N: the mock answers on N', async () => {
    const port = await freePort();
    const mock = pnpmMock([], { PORT: String(port) });
    expect((await answersOn(port, mock.output, mock.exit)).status).toBe(200);
  });

  it('--help says how to choose the port and host, and exits 0', async () => {
    const mock = pnpmMock(['--help']);
    expect(await mock.exit).toBe(0);
    expect(mock.output()).toMatch(/--port/);
    expect(mock.output()).toMatch(/--host/);
    expect(mock.output()).toMatch(/PORT/);
  });
});
