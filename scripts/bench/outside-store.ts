/**
 * @module The CPU an invocation costs outside the store, in process: sync invocations (`POST /v1/inference`,
 * local engine) one after another through the app (`app.request`, no sockets) on the embedded store, with the
 * request log on (the production destination: run with stdout sent to /dev/null) and the limits on. Each round
 * is sampled with the inspector's CPU profiler (100 µs); PGlite's share of the busy samples (its WebAssembly and
 * its JS) is taken out of the process's CPU time (`process.cpuUsage`).
 *
 *   pnpm tsx scripts/bench/outside-store.ts > /dev/null            (BENCH_INVOCATIONS=1000 BENCH_ROUNDS=5)
 *   REDIS_URL=redis://127.0.0.1:6379/3 pnpm tsx scripts/bench/outside-store.ts > /dev/null   (the Redis limiter)
 *   BENCH_SHOW_OTHER=1 …                                           (unclassified code by file instead of "other JS")
 *   BENCH_OPERATION=read …                                         (authenticated reads, GET /v1/usage, instead)
 *
 * Figures go to stderr: per round, CPU ms per invocation in all and outside the store; the median of the
 * rounds; then the mean CPU ms per invocation by area of the code (self time).
 */
import { createTestApp } from '../../packages/testing/src/app.ts';
import { openMemoryStore } from '../../packages/testing/src/store.ts';
import { createLogger } from '../../packages/server/src/log/index.ts';
import { connectRedis, createRedisLimiter } from '../../packages/server/src/rate-limits/index.ts';
import { Session } from 'node:inspector/promises';
import { helpFromModuleComment } from './help.ts';

helpFromModuleComment(import.meta.url);

const AREAS: [RegExp, string][] = [
  [/@electric-sql\/pglite|^wasm:/, 'store (PGlite)'],
  [/packages\/server\/src\/redact\//, 'src/redact'],
  [/middleware\/redact\//, 'middleware/redact'],
  [/packages\/server\/src\/random\.ts/, 'random.ts'],
  [/packages\/server\/src\/(log|middleware\/observe)\//, 'request log (ours)'],
  [/node_modules\/.*(pino|sonic-boom|@pinojs)/, 'pino'],
  [/gpt-tokenizer/, 'gpt-tokenizer'],
  [/packages\/server\/src\/vocabulary\//, 'src/vocabulary'],
  [/packages\/server\/src\/engine\//, 'src/engine'],
  [/packages\/server\/src\/(rate-limits|middleware\/rate-limit)\//, 'rate limits'],
  [/ioredis|redis-parser/, 'ioredis'],
  [/packages\/server\/src\/domain\//, 'src/domain'],
  [/packages\/server\/src\/store\//, 'src/store'],
  [/packages\/server\/src\/middleware\//, 'src/middleware (other)'],
  [/packages\/server\/src\//, 'src (other)'],
  [/node_modules\/.*hono/, 'hono'],
  [/node_modules\/zod/, 'zod'],
  [/^node:/, 'node: internals'],
];

const INVOCATIONS = Number(process.env.BENCH_INVOCATIONS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const redisUrl = process.env.REDIS_URL;
const redis = redisUrl ? connectRedis(redisUrl) : undefined;
const db = await openMemoryStore();
const t = await createTestApp({
  db,
  deps: {
    logger: createLogger(),
    ...(redis ? { limiter: createRedisLimiter({ redis, prefix: `bench:${process.pid}:` }) } : {}),
  },
});
// Every invocation admitted: the workspace's ceiling raised (before the key cache reads it), and the per-IP
// limit sees 62,500 socket addresses in turn.
await db.query(`UPDATE workspaces SET rpm_limit = 1000000 WHERE id = $1`, [t.workspaceId]);
await t.services.keys.ready();
const body = JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are more than 60 days overdue?' }] });

const READ = process.env.BENCH_OPERATION === 'read';

async function invoke(i: number): Promise<void> {
  const res = await t.app.request(
    READ ? '/v1/usage' : '/v1/inference',
    READ
      ? { headers: { authorization: `Bearer ${t.apiKey}` } }
      : { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' }, body },
    { incoming: { socket: { remoteAddress: `198.51.${Math.floor(i / 250) % 250}.${i % 250}` } } },
  );
  if (res.status !== 200) throw new Error(`${READ ? 'read' : 'invocation'} answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

for (let i = 0; i < 200; i += 1) await invoke(i); // warm-up
let address = 200;
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
const outside: number[] = [];
const shares = new Map<string, number>();
for (let round = 0; round < ROUNDS; round += 1) {
  await session.post('Profiler.start');
  const cpu = process.cpuUsage();
  for (let i = 0; i < INVOCATIONS; i += 1) await invoke(address++);
  const used = process.cpuUsage(cpu);
  const { profile } = await session.post('Profiler.stop');
  const byArea = selfTimeByArea(profile);
  const busy = [...byArea].filter(([area]) => area !== 'idle').reduce((sum, [, us]) => sum + us, 0);
  const totalMs = (used.user + used.system) / 1000 / INVOCATIONS;
  const outsideMs = (totalMs * (busy - (byArea.get('store (PGlite)') ?? 0))) / busy;
  outside.push(outsideMs);
  for (const [area, us] of byArea) if (area !== 'idle') shares.set(area, (shares.get(area) ?? 0) + (totalMs * us) / busy / ROUNDS);
  process.stderr.write(`round ${round + 1}: ${totalMs.toFixed(3)} ms CPU per invocation, ${outsideMs.toFixed(3)} ms outside the store\n`);
}
outside.sort((a, b) => a - b);
process.stderr.write(
  `median outside the store: ${outside[Math.floor(outside.length / 2)]!.toFixed(3)} ms CPU per invocation (${ROUNDS} rounds of ${INVOCATIONS})\n`,
);
process.stderr.write('mean CPU ms per invocation by area (self time, sampled):\n');
for (const [area, ms] of [...shares].sort((a, b) => b[1] - a[1])) process.stderr.write(`  ${area.padEnd(34)} ${ms.toFixed(3)}\n`);
session.disconnect();
await t.close();
await db.close();
redis?.disconnect();

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

/** Microseconds of self time per area of the code. */
function selfTimeByArea(profile: { nodes: ProfileNode[]; samples?: number[]; timeDeltas?: number[] }): Map<string, number> {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const out = new Map<string, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i += 1) {
    const area = areaOf(nodes.get(samples[i]!)!.callFrame);
    out.set(area, (out.get(area) ?? 0) + (deltas[i + 1] ?? 0));
  }
  return out;
}

function areaOf(frame: { functionName: string; url: string }): string {
  if (frame.functionName === '(idle)') return 'idle';
  if (frame.functionName === '(garbage collector)') return 'garbage collector';
  if (frame.functionName === '(program)') return '(program)';
  // PGlite's WebAssembly and its calls out to JavaScript and the file system are the store's.
  if (/^(wasm-to-js|js-to-wasm)$/.test(frame.functionName)) return 'store (PGlite)';
  for (const [pattern, area] of AREAS) if (pattern.test(frame.url)) return area;
  if (process.env.BENCH_SHOW_OTHER && frame.url) return `other: ${frame.url.replace(/^.*node_modules\//, '')}`;
  return frame.url ? 'other JS' : `native: ${frame.functionName}`;
}
