#!/usr/bin/env node
/**
 * `npm start` and `npm test` on a machine with only the system's Node (18 or later) and npm.
 *
 *   npm start [-- <serve flags>]    set up if needed, `pnpm install`, then build and serve (`pnpm run start:server`)
 *   npm test  [-- <vitest args>]    set up if needed, `pnpm install`, then every check and suite (`pnpm run test:all`)
 *
 * Set-up: Node 24 LTS (the npm registry's `node-<os>-<cpu>@24`) and pnpm 12 (`npm install -g` under that Node) into
 * ~/.cache/service-node24, the same folder as the README's lines by hand, when they are not there yet. Nothing outside
 * that folder and the checkout changes, and no shell profile: every run finds the cache again, so a second terminal
 * needs nothing either.
 *
 * Run by pnpm on a Node the repository supports (`pnpm start`, `pnpm test`), it sets nothing up and installs
 * nothing: it only runs the real script. Arguments go to the real script's last command, as pnpm's own would;
 * the exit code (or the signal) of the real command is this one's. SIGTERM and SIGHUP are passed on; SIGINT too
 * when there is no terminal (Ctrl-C in a terminal reaches the whole foreground process group already, and a
 * second SIGINT would be the server's "stop now").
 *
 * SERVICE_BOOTSTRAP_ONLY=1 sets up and installs, then prints the command it would run with the Node and pnpm it
 * would run it with, and exits (scripts/check-fresh-setup.sh checks `npm test` this way).
 *
 * Plain JavaScript without dependencies, runnable by Node 18: it runs before anything else is installed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { constants, homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Each command of this script and the package.json script it ends in. */
const REAL_SCRIPTS = { start: 'start:server', test: 'test:all' };
const NODE_MAJOR = 24;
const PNPM_MAJOR = 12;
const CACHE = join(homedir(), '.cache', 'service-node24');
const HAND_SET_UP = 'README.md, "Set-up by hand"';

const HELP = `Usage: npm start [-- <serve flags>]   (or: node scripts/bootstrap.mjs start [flags])
       npm test  [-- <vitest args>]    (or: node scripts/bootstrap.mjs test [args])

With only the system's Node (18 or later) and npm: installs Node ${NODE_MAJOR} LTS and pnpm ${PNPM_MAJOR} into
~/.cache/service-node24 when they are not there (from the npm registry, once), runs \`pnpm install\`, then
  start   builds the server if its sources changed and serves it (\`pnpm run ${REAL_SCRIPTS.start}\`)
  test    every check and test suite (\`pnpm run ${REAL_SCRIPTS.test}\`)
Run by pnpm on Node 22.12+ (\`pnpm start\`, \`pnpm test\`) it only runs the real script.

SERVICE_BOOTSTRAP_ONLY=1   set up and install, print the command instead of running it`;

class SetupError extends Error {}

const say = (line) => process.stderr.write(`setup: ${line}\n`);
const tilde = (path) => (path.startsWith(homedir()) ? `~${path.slice(homedir().length)}` : path);

/** The major version a `--version` line names (`v24.11.0`, `12.21.0`), or 0. */
function majorOf(version) {
  const match = /^v?(\d+)\./.exec(String(version).trim());
  return match ? Number(match[1]) : 0;
}

/** Whether this Node runs the repository's tools: package.json's engines, `^22.12.0 || >=24.11.0` (24.x before .11 is let through). */
function nodeSupported(version = process.versions.node) {
  const [major, minor] = version.split('.').map(Number);
  return major >= 24 || (major === 22 && minor >= 12);
}

/** An executable named `name` in one of `path`'s folders. */
function which(name, path = process.env.PATH ?? '') {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      if (statSync(file).isFile()) return file;
    } catch {}
  }
  return undefined;
}

/** The environment for what this script starts: `bin` folders first on PATH, and none of the npm run's own variables (pnpm sets its own). */
function childEnv(binDirs) {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (
      /^npm_(lifecycle_|package_|command$|execpath$|node_execpath$|config_(user_agent|node_gyp|nodedir|prefix|global_prefix|local_prefix|npm_version)$)/i.test(
        key,
      )
    ) {
      delete env[key];
    }
  }
  env.PATH = [...binDirs, env.PATH ?? ''].filter(Boolean).join(delimiter);
  return env;
}

/** The npm registry package that holds this machine's Node. */
function nodePackage() {
  const os = { linux: 'linux', darwin: 'darwin' }[process.platform];
  const cpu = { x64: 'x64', arm64: 'arm64' }[process.arch];
  if (!os || !cpu) {
    throw new SetupError(
      `no Node ${NODE_MAJOR} package for ${process.platform}-${process.arch} in this set-up (linux and macOS on x64 or arm64). ` +
        `Install Node ${NODE_MAJOR} LTS and pnpm ${PNPM_MAJOR} yourself (https://nodejs.org, then \`npm install -g pnpm@${PNPM_MAJOR}\`), then run \`pnpm install && pnpm start\`.`,
    );
  }
  return `node-${os}-${cpu}`;
}

/** How to run npm: the npm running this script when there is one, else the one on PATH; undefined when there is none. */
function npmCommand() {
  const execpath = process.env.npm_execpath;
  if (execpath && /npm-cli\.c?js$/.test(execpath) && existsSync(execpath)) return { cli: execpath };
  const onPath = which('npm');
  if (!onPath) return undefined;
  const real = realpathSync(onPath);
  return /\.c?js$/.test(real) ? { cli: real } : { bin: onPath };
}

/**
 * Runs npm with `args` (under the Node `node`, default this one), its output shown as it comes with `http` lines as
 * progress. Rejects with a SetupError naming `what` and the likely cause when npm fails.
 */
function runNpm(args, what, { node = process.execPath, binDirs = [] } = {}) {
  const npm = npmCommand();
  if (!npm) {
    throw new SetupError(
      `npm is not on PATH. This set-up installs Node ${NODE_MAJOR} and pnpm ${PNPM_MAJOR} with npm: install Node.js 18 or later with npm ` +
        `(for example \`apt-get install nodejs npm\`), or set them up by hand (${HAND_SET_UP}).`,
    );
  }
  const [command, prefix] = npm.cli ? [node, [npm.cli]] : [npm.bin, []];
  const started = Date.now();
  const ticker = setInterval(() => say(`… still installing ${what} (${Math.round((Date.now() - started) / 1000)} s)`), 10_000);
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...prefix, ...args, '--loglevel=http'], { stdio: ['ignore', 'inherit', 'pipe'], env: childEnv(binDirs) });
    let output = '';
    child.stderr.on('data', (chunk) => {
      process.stderr.write(chunk);
      output = (output + chunk).slice(-20_000);
    });
    child.on('error', (err) => {
      clearInterval(ticker);
      reject(new SetupError(`could not start npm (${err.message}).`));
    });
    child.on('close', (code, signal) => {
      clearInterval(ticker);
      if (code === 0) return resolve(Date.now() - started);
      const offline = /E(NOTFOUND|AI_AGAIN|CONNREFUSED|CONNRESET|TIMEDOUT|NETUNREACH|HOSTUNREACH)|network|socket hang up/i.test(output);
      const cause = offline
        ? "the npm registry could not be reached: this first run downloads from it, so it needs the network (or a registry or proxy set in npm's config: `npm config get registry`)."
        : "see npm's output above.";
      reject(
        new SetupError(
          `installing ${what} failed (npm ${signal ?? `exited with ${code}`}): ${cause} Run the command again once that is fixed, or set up by hand (${HAND_SET_UP}).`,
        ),
      );
    });
  });
}

/** The version in an installed package's package.json, or undefined. */
function installedVersion(packageDir) {
  try {
    return JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** Node 24 and pnpm 12 in the cache, installed there when missing. Resolves with the `bin` folder that holds both. */
async function cachedTools() {
  const pkg = nodePackage();
  const nodeHome = join(CACHE, 'node_modules', pkg);
  const bin = join(nodeHome, 'bin');
  const node = join(bin, 'node');
  const nodeVersion = () => (existsSync(node) ? (spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout ?? '') : '');
  if (majorOf(nodeVersion()) !== NODE_MAJOR) {
    say(`installing Node ${NODE_MAJOR} LTS into ${tilde(CACHE)} (npm package ${pkg}@${NODE_MAJOR})`);
    const ms = await runNpm(
      ['install', '--prefix', CACHE, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `${pkg}@${NODE_MAJOR}`],
      `Node ${NODE_MAJOR}`,
    );
    if (majorOf(nodeVersion()) !== NODE_MAJOR) throw new SetupError(`npm installed ${pkg}@${NODE_MAJOR}, but ${node} does not answer as Node ${NODE_MAJOR}.`);
    say(`Node ${nodeVersion().trim()} installed in ${(ms / 1000).toFixed(1)} s`);
  }
  const pnpmPackage = join(nodeHome, 'lib', 'node_modules', 'pnpm');
  if (majorOf(installedVersion(pnpmPackage)) !== PNPM_MAJOR || !existsSync(join(bin, 'pnpm'))) {
    say(`installing pnpm ${PNPM_MAJOR} beside it (npm install -g pnpm@${PNPM_MAJOR}, under Node ${NODE_MAJOR})`);
    // npm under the new Node, which is first on PATH for pnpm's install scripts; `--prefix` is that Node's own, so pnpm lands in its bin folder.
    const ms = await runNpm(
      ['install', '-g', '--prefix', nodeHome, '--allow-scripts=pnpm', '--no-audit', '--no-fund', `pnpm@${PNPM_MAJOR}`],
      `pnpm ${PNPM_MAJOR}`,
      { node, binDirs: [bin] },
    );
    if (!existsSync(join(bin, 'pnpm'))) throw new SetupError(`npm installed pnpm@${PNPM_MAJOR}, but ${join(bin, 'pnpm')} is missing.`);
    say(`pnpm ${installedVersion(pnpmPackage)} installed in ${(ms / 1000).toFixed(1)} s`);
  }
  return bin;
}

/** The `bin` folders to put first on PATH: none when this Node is 24+ and a pnpm 12+ is on PATH already, else the cache's. */
async function toolFolders() {
  if (majorOf(process.versions.node) >= NODE_MAJOR) {
    const pnpm = which('pnpm');
    const version = pnpm ? spawnSync(pnpm, ['--version'], { encoding: 'utf8' }).stdout : '';
    if (majorOf(version) >= PNPM_MAJOR) return [];
  }
  return [await cachedTools()];
}

/** `args` quoted for a POSIX shell. */
function shellQuote(args) {
  return args.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** Runs `command` through the shell with `env`, passing signals on, and ends this process as it ends. */
function runAndExit(command, env) {
  const child = spawn(command, { shell: true, stdio: 'inherit', env, cwd: ROOT });
  const relay = (signal) => {
    // Ctrl-C in a terminal has reached the child already (same process group).
    if (signal === 'SIGINT' && process.stdin.isTTY) return;
    child.kill(signal);
  };
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const signal of signals) process.on(signal, relay);
  child.on('error', (err) => {
    say(`could not start \`${command}\`: ${err.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    for (const name of signals) process.off(name, relay);
    if (signal === null) process.exit(code ?? 1);
    // End the same way, so whoever started this sees the signal; the exit code says it if the signal is ignored here.
    process.kill(process.pid, signal);
    setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 100);
  });
}

/** The package.json script `name`, with `args` added to its last command as `pnpm run` adds them. */
function realCommand(name, args) {
  const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts ?? {};
  const script = scripts[name];
  if (!script) throw new SetupError(`package.json has no script "${name}".`);
  return args.length > 0 ? `${script} ${shellQuote(args)}` : script;
}

async function main(argv) {
  const [command, ...args] = argv;
  if (command === undefined || command === '--help' || command === '-h') {
    process.stdout.write(`${HELP}\n`);
    return command === undefined ? 2 : 0;
  }
  const script = REAL_SCRIPTS[command];
  if (!script) {
    process.stderr.write(`bootstrap: unknown command "${command}" (start or test)\n\n${HELP}\n`);
    return 2;
  }
  const only = process.env.SERVICE_BOOTSTRAP_ONLY === '1';
  const byPnpm = (process.env.npm_config_user_agent ?? '').startsWith('pnpm/');
  if (byPnpm && nodeSupported() && !only) {
    // `pnpm start` / `pnpm test`: pnpm and its PATH are there already.
    runAndExit(realCommand(script, args), process.env);
    return undefined;
  }
  if (majorOf(process.versions.node) < 18) throw new SetupError(`this set-up needs Node 18 or later to start from; this is ${process.version}.`);
  const bins = await toolFolders();
  // The checkout's own tools (tsx, vitest, …) as `pnpm run` puts them on PATH.
  const env = childEnv([...bins, join(ROOT, 'node_modules', '.bin')]);
  say('pnpm install');
  const install = spawnSync('pnpm', ['install'], { stdio: 'inherit', env, cwd: ROOT });
  if (install.error) throw new SetupError(`could not start pnpm (${install.error.message}).`);
  if (install.status !== 0) throw new SetupError(`\`pnpm install\` failed (exit ${install.status ?? install.signal}); see its output above.`);
  const real = realCommand(script, args);
  if (only) {
    const versions = spawnSync('node --version && pnpm --version', { shell: true, encoding: 'utf8', env, cwd: ROOT });
    const [node, pnpm] = (versions.stdout ?? '').trim().split('\n');
    process.stdout.write(`would run: ${real}\nwith: node ${node}, pnpm ${pnpm}\n`);
    return versions.status === 0 ? 0 : 1;
  }
  say(`${real}   (node ${spawnSync('node', ['--version'], { encoding: 'utf8', env }).stdout.trim()})`);
  runAndExit(real, env);
  return undefined;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exit(code);
  },
  (err) => {
    if (!(err instanceof SetupError)) throw err;
    say(err.message);
    process.exit(1);
  },
);
