/**
 * @module Test helper: the CLI on one data directory, for tests that kill a server and start it
 * again. `serve` is a real child process, `node` on the CLI itself (the test run's build, see
 * {@link cliCommand}), so a signal hits the server and not a wrapper. One-off commands (`init`,
 * `keys create`, …) that only prepare or inspect the data run in this process
 * ({@link runCommandLine}, the CLI minus the process), about a seventh of the CPU of a process of
 * their own; `runProcess` runs one as a real process where the process is what is tested.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { seedDataDir } from './store.ts';

// The server package: the CLI runs from its folder, as `pnpm service` would.
const SERVER_DIR = fileURLToPath(new URL('../../server/', import.meta.url));
const CLI = fileURLToPath(new URL('../../server/src/cli.ts', import.meta.url));

/** Where the test run's build of the CLI is (set by the test run's global setup). */
export const CLI_BUILD_ENV = 'SERVICE_TEST_CLI';

/**
 * The arguments to `node` that start the CLI for `command`: the test run's build when there is one
 * (plain `node`, as `pnpm start` runs it), else the sources through tsx (outside the test run, e.g. a
 * benchmark). A one-off command (anything but `serve`) runs WebAssembly with V8's baseline compiler
 * only (`--liftoff-only`): otherwise V8 recompiles the embedded store's hot functions in the
 * background and the process waits for that before it exits, about twice the command's CPU
 * (`keys list` on a seeded data directory: 4.7 s of CPU and 3.9 s → 2.2 s and 1.9 s). Behaviour is
 * the same; only the code's speed differs, and a long-running `serve` keeps the optimising tier.
 */
export function cliCommand(command: string | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  const built = env[CLI_BUILD_ENV];
  const flags = command === 'serve' ? [] : ['--liftoff-only'];
  return built ? [...flags, built] : [...flags, '--import', 'tsx', CLI];
}

export interface CliProcesses {
  /**
   * Runs a one-off command to its end in this process, as the CLI process would run it (its settings
   * from the given environment); throws with its stderr when it fails. Resolves with its stdout.
   */
  run(...args: string[]): Promise<string>;
  /** The same as a real process (`node` on the CLI). */
  runProcess(...args: string[]): string;
  /**
   * Starts `serve --port 0` (one process, `--workers 1`, unless `args` say otherwise); resolves with
   * the process, its URL and what it printed, once it listens.
   */
  serve(...args: string[]): Promise<{ child: ChildProcess; url: string; output: () => string }>;
  /** Kills (SIGKILL) every server still running. */
  killAll(): void;
}

export function cliProcesses(dir: string, env: NodeJS.ProcessEnv): CliProcesses {
  const children: ChildProcess[] = [];
  const dataDir = join(dir, 'data');
  // A migrated store from the test run's template, unless the test made its own data directory.
  let seeded = false;
  const seed = () => {
    if (!seeded) seedDataDir(dataDir);
    seeded = true;
  };
  return {
    async run(...args) {
      seed();
      const result = await runInProcess([...args, '--data-dir', dataDir], env);
      if (result.status !== 0) throw new Error(`service ${args.join(' ')} failed: ${result.stderr}`);
      return result.stdout;
    },
    runProcess(...args) {
      seed();
      const result = spawnSync(process.execPath, [...cliCommand(args[0]), ...args, '--data-dir', dataDir], { cwd: SERVER_DIR, env, encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`service ${args.join(' ')} failed: ${result.stderr}`);
      return result.stdout;
    },
    serve(...args) {
      seed();
      const options = args.length > 0 ? args : ['--workers', '1'];
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [...cliCommand('serve'), 'serve', '--port', '0', '--data-dir', dataDir, ...options], { cwd: SERVER_DIR, env });
        children.push(child);
        let output = '';
        child.stdout!.on('data', (d: Buffer) => {
          output += d.toString();
          const match = /Listening on (\S+)/.exec(output);
          if (match) resolve({ child, url: match[1]!, output: () => output });
        });
        child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
        child.once('exit', (code, signal) => reject(new Error(`serve exited (${code ?? signal}): ${output}`)));
      });
    },
    killAll() {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

export interface CommandResult {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs one command line of the CLI in this process: what the `service` process does with the same
 * arguments and environment, its output collected instead of written to the process's streams.
 */
export async function runInProcess(argv: string[], env: NodeJS.ProcessEnv): Promise<CommandResult> {
  const { runCommandLine } = await inProcessCli();
  let stdout = '';
  let stderr = '';
  const status = await runCommandLine(argv, env, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { status, stdout, stderr };
}

type CliModule = typeof import('../../server/src/cli.ts');
let cliModule: Promise<CliModule> | undefined;

/**
 * The CLI's module: the test run's build when there is one, the very file a spawned process runs, loaded by Node
 * itself (`vitest.config.ts` keeps `.test-build/` out of Vitest's transforms), in about a tenth of the CPU of
 * transforming the server's sources; else the sources. Loaded on first use: the test run's global setup imports this
 * module for CLI_BUILD_ENV only.
 */
function inProcessCli(env: NodeJS.ProcessEnv = process.env): Promise<CliModule> {
  const built = env[CLI_BUILD_ENV];
  cliModule ??= built ? (import(/* @vite-ignore */ pathToFileURL(built).href) as Promise<CliModule>) : import('../../server/src/cli.ts');
  return cliModule;
}

/**
 * Polls `condition` every `intervalMs` until it holds; throws naming `what` after `limitMs`. A
 * condition that calls the API should poll slowly enough to stay under the workspace's limit
 * (600 requests a minute).
 */
export async function until(condition: () => boolean | Promise<boolean>, what: string, limitMs = 60_000, intervalMs = 50): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * A call of a server's API with `apiKey` (read when called: a test's key is made in its set-up), each from another
 * forwarded address in `net` (`10.8`): with the server's `TRUST_PROXY=1` the per-IP limit is not what the test is about.
 */
export function spreadApi(apiKey: () => string, net: string): (url: string, path: string, init?: RequestInit) => Promise<Response> {
  let ip = 0;
  return (url, path, init = {}) => {
    ip += 1;
    return fetch(`${url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${apiKey()}`, 'content-type': 'application/json', 'x-forwarded-for': `${net}.${ip % 250}.${ip % 199}` },
    });
  };
}
