/**
 * @module Benchmark of the rate limiter's cost: requests per second of a bare Hono app and of the
 * same app behind the in-memory limiter (per IP, then per IP + per workspace), measured in the
 * same run with `app.request` (no sockets), in interleaved rounds, median reported.
 *
 *   pnpm tsx scripts/bench/rate-limit.ts            (BENCH_REQUESTS=20000 BENCH_ROUNDS=7 by default)
 *
 * Traffic: 10 000 client addresses and 1 000 workspaces in turn, and a clock that moves 2 ms per
 * limiter hit, so every request is admitted (the measured path is the common one: count, set
 * the headers, pass).
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { byClientIp, PER_IP, PER_WORKSPACE, rateLimit } from '../../packages/server/src/middleware/rate-limit/index.ts';
import { createMemoryLimiter } from '../../packages/server/src/rate-limits/index.ts';
import { helpFromModuleComment } from './help.ts';

helpFromModuleComment(import.meta.url);

// hono is a dependency of packages/server, not of the workspace root: resolve it from there.
interface BenchApp {
  use(handler: unknown): unknown;
  get(path: string, handler: (c: { json(body: unknown, status: 200): Response }) => Response): unknown;
  request(path: string, init: RequestInit | undefined, env: unknown): Response | Promise<Response>;
}
const fromServer = createRequire(new URL('../../packages/server/package.json', import.meta.url));
const { Hono } = (await import(pathToFileURL(fromServer.resolve('hono')).href)) as { Hono: new () => BenchApp };

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CLIENTS = 10_000;
const WORKSPACES = 1_000;

const envs = Array.from({ length: CLIENTS }, (_, i) => ({
  incoming: { socket: { remoteAddress: `198.51.${Math.floor(i / 250)}.${i % 250}` } },
}));
const inits = Array.from({ length: WORKSPACES }, (_, i) => ({ headers: { 'x-workspace': `wksp_${i}` } }));

function build(limits: 'none' | 'ip' | 'ip+workspace'): BenchApp {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const limiter = createMemoryLimiter({ now: () => (now += 2) });
  const app = new Hono();
  if (limits !== 'none') app.use(rateLimit({ limiter, ...PER_IP, key: byClientIp() }));
  if (limits === 'ip+workspace') app.use(rateLimit({ limiter, ...PER_WORKSPACE, key: (c) => `wksp:${c.req.header('x-workspace') ?? 'none'}` }));
  app.get('/ok', (c) => c.json({ ok: true }, 200));
  return app;
}

async function round(app: BenchApp): Promise<number> {
  const started = process.hrtime.bigint();
  let refused = 0;
  for (let i = 0; i < REQUESTS; i += 1) {
    const res = await app.request('/ok', inits[i % WORKSPACES], envs[i % CLIENTS]);
    if (res.status !== 200) refused += 1;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (refused > 0) throw new Error(`${refused} requests refused: the benchmark must measure admitted requests`);
  return REQUESTS / seconds;
}

const variants = ['none', 'ip', 'ip+workspace'] as const;
const apps = Object.fromEntries(variants.map((v) => [v, build(v)])) as Record<(typeof variants)[number], BenchApp>;
const samples: Record<string, number[]> = { none: [], ip: [], 'ip+workspace': [] };
for (const v of variants) await round(apps[v]); // warm-up
for (let r = 0; r < ROUNDS; r += 1) {
  // Rotate the order so that drift (GC, other load) does not favour one variant.
  for (let k = 0; k < variants.length; k += 1) {
    const v = variants[(r + k) % variants.length]!;
    samples[v]!.push(await round(apps[v]));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const bare = median(samples.none!);
console.log(`command: pnpm tsx scripts/bench/rate-limit.ts (BENCH_REQUESTS=${REQUESTS} BENCH_ROUNDS=${ROUNDS})`);
console.log(`node ${process.version}, ${REQUESTS} requests x ${ROUNDS} rounds per variant, median requests/s:`);
for (const v of variants) {
  const rps = median(samples[v]!);
  console.log(`  ${v.padEnd(14)} ${rps.toFixed(0).padStart(8)} req/s   ratio to bare ${(rps / bare).toFixed(3)}`);
}
