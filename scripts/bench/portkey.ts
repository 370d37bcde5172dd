/**
 * @module The peer in the benchmark: Portkey's AI gateway (`@portkey-ai/gateway` from npm), installed
 * on demand into a cache directory (BENCH_PORTKEY_DIR, default ~/.cache/service-bench/portkey), never a
 * dependency of the product. The install pins `@hono/node-server` 1.13.8 with npm `overrides`: with a
 * later one Portkey's streamed answers do not stream. Started from its bin with plain `node` (so the
 * process measured is Portkey's own, not npx's), headless (no log UI). It proxies to any
 * OpenAI-compatible host given per request (`portkeyHeaders`).
 *
 * When npm or the network is missing, `startPortkey` resolves to the reason instead of a process:
 * the benchmark prints it and leaves Portkey's rows out.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@service/testing/free-port';
import { type Listening, watchListening } from './processes.ts';

export const PORTKEY_VERSION = '1.15.2';
const NODE_SERVER_VERSION = '1.13.8';

export function portkeyDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.BENCH_PORTKEY_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'service-bench', 'portkey');
}

/** The headers that send a request through Portkey to the OpenAI-compatible server at `baseURL` (…/v1). */
export function portkeyHeaders(baseURL: string): Record<string, string> {
  return { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': baseURL, authorization: 'Bearer bench' };
}

const versionOf = (dir: string, name: string): string | undefined => {
  try {
    return (JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
};

const installed = (dir: string) => versionOf(dir, '@portkey-ai/gateway') === PORTKEY_VERSION && versionOf(dir, '@hono/node-server') === NODE_SERVER_VERSION;

/** npm's error code and the request that failed (`npm error code ECONNREFUSED / npm error FetchError: request to …`), or its last lines. */
function npmError(output: string): string {
  const lines = output.trim().split('\n');
  const telling = lines.filter((l) => /^npm error (code |FetchError|network|404)/.test(l));
  return (telling.length > 0 ? telling.slice(0, 2) : lines.slice(-3)).join(' / ');
}

/** Runs `npm install` in the cache directory unless the pinned versions are already there. Resolves to an error message, or null. */
async function install(dir: string, log: (line: string) => void, limitMs = 180_000): Promise<string | null> {
  if (installed(dir)) return null;
  mkdirSync(dir, { recursive: true });
  const manifest = {
    name: 'service-bench-portkey',
    private: true,
    description: "Portkey's gateway for `pnpm bench` (scripts/bench/portkey.ts); not part of the product.",
    dependencies: { '@portkey-ai/gateway': PORTKEY_VERSION },
    overrides: { '@hono/node-server': NODE_SERVER_VERSION },
  };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  log(`installing @portkey-ai/gateway ${PORTKEY_VERSION} into ${dir} (npm)`);
  const args = ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--omit=dev', '--fetch-retries=1', '--fetch-timeout=30000'];
  const outcome = await new Promise<string | null>((resolve) => {
    const child = spawn('npm', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (d: Buffer) => (output = (output + d.toString()).slice(0, 16_000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve(`npm could not run: ${err.message}`);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code === 0 ? null : `npm install ${signal ? `was stopped after ${limitMs / 1000} s` : `exited ${code}`}: ${npmError(output)}`);
    });
  });
  if (outcome) return outcome;
  return installed(dir) ? null : `npm install left other versions than @portkey-ai/gateway ${PORTKEY_VERSION} with @hono/node-server ${NODE_SERVER_VERSION}`;
}

/** Installs (when needed) and starts Portkey's gateway on a free loopback port; or the reason it cannot. */
export async function startPortkey(log: (line: string) => void): Promise<Listening | { unavailable: string }> {
  const dir = portkeyDir();
  const failed = await install(dir, log);
  if (failed) return { unavailable: failed };
  const bin = join(dir, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
  if (!existsSync(bin)) return { unavailable: `${bin} is missing` };
  const port = await freePort();
  const child = spawn(process.execPath, [bin, `--port=${port}`, '--headless'], { cwd: dir, env: { ...process.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    // Portkey prints its address with colour codes; readiness is its port answering.
    return await watchListening(child, `http://127.0.0.1:${port}`, `${bin} --port=${port}`, 30_000, async () => {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/`);
        await res.arrayBuffer();
        return true;
      } catch {
        return false;
      }
    });
  } catch (err) {
    return { unavailable: `Portkey did not start: ${(err as Error).message.slice(0, 500)}` };
  }
}
