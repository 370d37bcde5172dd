/**
 * @module What one model call of the `openai-compatible` engine costs in CPU, per transport of its `openai` client:
 * the engine's calls (`createOpenAICompatibleEngine(…).stream`, one after another) to the benchmark's loopback model
 * server (upstream-server.ts, its instant model: 20 fragments and a usage block), in its own process, so the figure is
 * this process's own work (the client, the transport, the engine), user + system CPU by `process.cpuUsage()`.
 *
 *   pnpm exec tsx scripts/bench/engine-call.ts
 *   BENCH_CALLS=2000 BENCH_ROUNDS=3                       (the defaults)
 *   BENCH_TRANSPORTS=global-fetch,pool-request            (all three by default)
 *
 * Transports, rounds interleaved, each answered in one piece (`stream: false`) and streamed:
 *   global-fetch   Node's global `fetch`, what the `openai` package uses when given none;
 *   undici-fetch   the `undici` package's `fetch`, on a kept-alive `Pool` of the server's origin;
 *   pool-request   the engine's transport (engine/openai-compatible/transport.ts): `Pool.request` behind a small fetch.
 * Also the request's token count (`countRequestTokens`, its texts already counted once), which the engine makes only
 * when the server reports no usage. Figures (ms of CPU per call, and per round) go to stderr.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createOpenAICompatibleEngine } from '../../packages/server/src/engine/openai-compatible/index.ts';
import { createTransport, type Transport } from '../../packages/server/src/engine/openai-compatible/transport.ts';
import type { EngineRequest } from '../../packages/server/src/engine/engine.ts';
import { countRequestTokens } from '../../packages/server/src/engine/model-input.ts';
import { loadTokenizer } from '../../packages/server/src/engine/tokens.ts';
import { helpFromModuleComment } from './help.ts';
import { ROOT, startUpstream } from './processes.ts';

helpFromModuleComment(import.meta.url);

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const say = (line: string) => process.stderr.write(`${line}\n`);

// The server's own undici (the scripts have no dependency of their own on it): its Pool and its fetch.
interface Undici {
  Pool: new (origin: string) => { destroy(): Promise<void> };
  fetch(input: string, init: object): Promise<Response>;
}
const undici = createRequire(join(ROOT, 'packages/server/package.json'))('undici') as Undici;

const upstream = await startUpstream({ firstMs: 300, rate: 40, seconds: 1 });
const baseURL = `${upstream.url}/v1`;

const all: Record<string, () => Transport> = {
  'global-fetch': () => ({ fetch: globalThis.fetch, close: async () => {} }),
  'undici-fetch': () => {
    const pool = new undici.Pool(new URL(baseURL).origin);
    const fetch = (input: string | URL | Request, init?: RequestInit) => undici.fetch(String(input), { ...init, dispatcher: pool });
    return { fetch: fetch as typeof globalThis.fetch, close: () => pool.destroy() };
  },
  'pool-request': () => createTransport(baseURL),
};
const only = process.env.BENCH_TRANSPORTS?.split(',');
const transports = Object.fromEntries(Object.entries(all).filter(([name]) => !only || only.includes(name)));

const request = (stream: boolean): EngineRequest => ({
  alias: 'Symphony',
  agentSlug: 'sales',
  instructions: 'You are the Sales agent. Answer briefly.',
  messages: [{ role: 'user', content: 'Draft a follow-up for the lead from yesterday’s call.' }],
  maxTokens: 200,
  stream,
});

/** CPU ms per call over `CALLS` calls, after a warm-up. */
async function measure(transport: Transport, stream: boolean): Promise<number> {
  const engine = createOpenAICompatibleEngine({ baseURL, apiKey: 'bench', models: { Symphony: 'bench-instant' } }, transport);
  const call = async () => {
    let text = '';
    for await (const event of engine.stream(request(stream))) if (event.type === 'text') text += event.delta;
    if (!text.includes('tok20.')) throw new Error(`incomplete answer: ${text}`);
  };
  for (let i = 0; i < Math.min(200, CALLS); i += 1) await call();
  const start = process.cpuUsage();
  for (let i = 0; i < CALLS; i += 1) await call();
  const used = process.cpuUsage(start);
  await engine.close?.();
  return (used.user + used.system) / 1000 / CALLS;
}

async function measureCount(): Promise<number> {
  const input = request(false);
  await countRequestTokens(input);
  const start = process.cpuUsage();
  for (let i = 0; i < CALLS; i += 1) await countRequestTokens(input);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / CALLS;
}

loadTokenizer();
const results = new Map<string, number[]>();
const keep = (name: string, ms: number) => results.set(name, [...(results.get(name) ?? []), ms]);
try {
  say(`${CALLS} calls per measure, ${ROUNDS} rounds after a warm-up round; ms of CPU per call`);
  // A first round whose figures are dropped: each path's code is compiled by the JIT before it is measured.
  for (const transport of Object.values(transports)) for (const stream of [false, true]) await measure(transport(), stream);
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const [name, transport] of Object.entries(transports)) {
      for (const stream of [false, true]) {
        const ms = await measure(transport(), stream);
        keep(`${name} ${stream ? 'streamed' : 'sync'}`, ms);
        say(`round ${round}  ${name.padEnd(13)} ${(stream ? 'streamed' : 'sync').padEnd(9)} ${ms.toFixed(3)}`);
      }
    }
    const ms = await measureCount();
    keep('countRequestTokens', ms);
    say(`round ${round}  countRequestTokens      ${ms.toFixed(4)}`);
  }
  say('');
  for (const [name, values] of results) {
    const sorted = [...values].sort((a, b) => a - b);
    say(`${name.padEnd(24)} median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(3)}  (${values.map((v) => v.toFixed(3)).join(', ')})`);
  }
} finally {
  await upstream.stop();
}
