/**
 * @module Starts the Prism mock on a free loopback port for a test, and stops it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

export interface Prism {
  baseUrl: string;
  stop(): Promise<void>;
}

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Start Prism and wait until it listens. `args` are Prism's own: `['mock', 'generated/openapi.yaml']`, or
 * `['proxy', 'generated/openapi.yaml', upstreamUrl, '--errors']`.
 */
export async function startPrism(args: string[]): Promise<Prism> {
  const port = await freePort();
  const bin = resolve(ROOT, 'node_modules/.bin/prism');
  const child = spawn(bin, [...args, '--host', '127.0.0.1', '--port', String(port)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (b: Buffer) => (log += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (log += b.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitUntilListening(child, () => log, port);
  return {
    baseUrl,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

async function waitUntilListening(child: ChildProcess, log: () => string, port: number): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`prism exited early:\n${log()}`);
    if (/Prism is listening/.test(log())) return;
    await new Promise((r) => setTimeout(r, 150));
  }
  child.kill('SIGKILL');
  throw new Error(`prism did not listen on ${port} in time:\n${log()}`);
}

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? done(address.port) : fail(new Error('no port'))));
    });
  });
}
