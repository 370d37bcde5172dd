/**
 * @module `pnpm bench:concurrency`: sync invocations (`POST /v1/inference`, local engine) against `service serve` on a
 * fresh embedded store, at several connection counts, while a probe opens a new connection every 250 ms and times
 * `GET /healthz` on it: what a client arriving during load waits (the accept queue, the event loop). Prints, per
 * connection count, answers/s, 200s/s, non-2xx answers (admission's 503s), p50 and p99, and the probe's p50 and max.
 *
 *   pnpm bench:concurrency                                   # the compiled build, 5 s at 1, 10, 50 and 200 connections
 *   BENCH_CLI=path/to/cli.js BENCH_CONNECTIONS=10,200 BENCH_SECONDS=5 pnpm bench:concurrency
 *
 * `BENCH_CLI` measures another build (an older commit's, bundled where it finds packages/server's node_modules;
 * docs/performance.md shows how). Settings of the server (MAX_STORE_QUEUE, …) are taken from the environment.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildServer, isStale } from '../build-server.ts';
import { runLoad } from './load.ts';
import { COMPILED_CLI, spawnListening } from './processes.ts';
import { INVOCATION } from './probes.ts';
import { fmt } from './stats.ts';
import { helpFromModuleComment } from './help.ts';

helpFromModuleComment(import.meta.url);

const cliPath = process.env.BENCH_CLI ?? COMPILED_CLI;
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connectionCounts = (process.env.BENCH_CONNECTIONS ?? '1,10,50,200').split(',').map(Number);

if (!process.env.BENCH_CLI && isStale()) await buildServer();
const dir = mkdtempSync(join(tmpdir(), 'bench-concurrency-'));
const dataDir = join(dir, 'data');
const env: NodeJS.ProcessEnv = { ...process.env, TRUST_PROXY: '1' };
for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY', 'OPERATOR_TOKEN', 'METRICS_PORT', 'BENCH_CLI']) delete env[name];
const cli = (...args: string[]): string => {
  const result = spawnSync(process.execPath, [cliPath, ...args], { env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`service ${args[0]} failed: ${result.stderr}`);
  return result.stdout;
};
const init = JSON.parse(cli('init', '--json', '--data-dir', dataDir)) as { apiKey: string; workspaceId: string; operatorToken: string };
const server = await spawnListening(process.execPath, [cliPath, 'serve', '--port', '0', '--data-dir', dataDir], env);
cli('workspaces', 'update', init.workspaceId, '--rpm', '1000000', '--quota-stu', '1000000000000', '--url', server.url, '--operator-token', init.operatorToken);
const headers = { authorization: `Bearer ${init.apiKey}`, 'content-type': 'application/json' };
const body = JSON.stringify(INVOCATION);

/** Milliseconds to a `/healthz` answer on a new connection. */
function healthz(): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = get(`${server.url}/healthz`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - started));
    });
    req.on('error', () => resolve(Number.NaN));
  });
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))] ?? Number.NaN;

try {
  await runLoad({ url: `${server.url}/v1/inference`, method: 'POST', headers, body, connections: 8, seconds: 2 });
  process.stdout.write(`sync invocations, embedded store, ${cliPath}, ${seconds} s each\n`);
  for (const connections of connectionCounts) {
    const probes: Promise<number>[] = [];
    const timer = setInterval(() => probes.push(healthz()), 250);
    const result = await runLoad({ url: `${server.url}/v1/inference`, method: 'POST', headers, body, connections, seconds });
    clearInterval(timer);
    const waits = await Promise.all(probes);
    const ok = (result.requests - result.non2xx) / result.seconds;
    process.stdout.write(
      `c${connections}: ${fmt(result.rps, 1)} answers/s (${fmt(ok, 1)} 200s/s, ${result.non2xx} non-2xx of ${result.requests}), ` +
        `p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms; /healthz on a new connection: ` +
        `p50 ${percentile(waits, 0.5).toFixed(1)} ms, max ${Math.max(...waits).toFixed(1)} ms (n=${waits.length})\n`,
    );
  }
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
