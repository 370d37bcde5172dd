/**
 * @module Test helper: the real server over HTTP, started the way an operator does (`service init --json`,
 * then `service serve`) on a fresh embedded data directory and a loopback port (fixed, or 0 for a free one); `cli` runs another
 * command on the same directory while the server is stopped (PGlite allows one process at a time). The
 * server is a real process; the one-off commands run in this process (`runInProcess`: the CLI minus the
 * process, on the same arguments and environment).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { seedDataDir } from '@service/testing/store';
import { cliCommand, runInProcess } from '@service/testing/cli-processes';

const ROOT = resolve(import.meta.dirname, '../../../..');

export interface InitOutput {
  workspaceId: string;
  apiKey: string;
  admin: { email: string; password: string; totpSecret: string };
}

export interface LiveServer {
  /** With port 0, the port the server chose at its first start (a restart asks for the same one). */
  url: string;
  init: InitOutput;
  dataDir: string;
  /** Runs a CLI command on the data directory (stop the server first); returns its stdout. */
  cli(...args: string[]): Promise<string>;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops the server and removes its data directory. */
  dispose(): Promise<void>;
}

export async function startLiveServer(options: {
  port: number;
  env?: Record<string, string>;
  setup?: (cli: LiveServer['cli']) => Promise<unknown>;
}): Promise<LiveServer> {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-live-'));
  const dataDir = join(dir, 'data');
  seedDataDir(dataDir);
  // The server runs on its own embedded store, whatever DATABASE_URL / REDIS_URL the suite runs with.
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY']) delete env[name];
  const cli = async (...args: string[]) => {
    const result = await runInProcess([...args, '--data-dir', dataDir], env);
    if (result.status !== 0) throw new Error(`service ${args.join(' ')} failed: ${result.stderr}`);
    return result.stdout;
  };
  const init = JSON.parse(await cli('init', '--json')) as InitOutput;
  await options.setup?.(cli);
  let child: ChildProcess | undefined;
  let port = options.port;
  const server: LiveServer = {
    url: `http://127.0.0.1:${options.port}`,
    init,
    dataDir,
    cli,
    start: () =>
      new Promise((done, fail) => {
        const started = spawn(process.execPath, [...cliCommand('serve'), 'serve', '--host', '127.0.0.1', '--port', String(port), '--data-dir', dataDir], {
          cwd: ROOT,
          env,
        });
        child = started;
        let output = '';
        const onData = (chunk: Buffer) => {
          output += chunk.toString();
          const listening = /Listening on (https?:\/\/[^\s]+?:(\d+))/.exec(output);
          if (listening) {
            port = Number(listening[2]);
            server.url = `http://127.0.0.1:${port}`;
            done();
          }
        };
        started.stdout!.on('data', onData);
        started.stderr!.on('data', onData);
        started.once('exit', (code, signal) => fail(new Error(`serve exited (${code ?? signal}): ${output}`)));
      }),
    stop: async () => {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((done) => running.once('exit', done));
      running.kill('SIGTERM');
      await exited;
    },
    dispose: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
