/**
 * @module How long one large valid invocation holds the server for everyone else: the real
 * `service serve` (embedded store, temporary data directory) answers a poller on
 * `GET /usage/current` every 10 ms while one invocation near the 4 MiB body cap is sent. Prints the
 * poller's latency (p50, p99, max) alone and during the large invocation, over loopback.
 *
 *   pnpm bench:stall              (BENCH_STALL_MB=3.9 by default)
 *
 * BENCH_STALL_TEXT chooses the messages' text: `prose` (default, spaced words), `no-spaces` (one
 * run without whitespace, the tokenizer's worst case), `no-break-spaces`; BENCH_STALL_CHARS the
 * characters per message (default 480,000); BENCH_STALL_STREAM=1 streams the answer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliProcesses } from '@service/testing/cli-processes';
import { helpFromModuleComment } from './help.ts';

helpFromModuleComment(import.meta.url);

const megabytes = Number(process.env.BENCH_STALL_MB ?? '3.9');
const dir = mkdtempSync(join(tmpdir(), 'bench-stall-'));
const env: NodeJS.ProcessEnv = { ...process.env, TRUST_PROXY: '1' };
for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY']) delete env[name];
const cli = cliProcesses(dir, env);

try {
  const { apiKey } = JSON.parse(await cli.run('init', '--json')) as { apiKey: string };
  const { url } = await cli.serve();
  let n = 0;
  const poll = async (): Promise<number> => {
    const started = performance.now();
    const res = await fetch(`${url}/usage/current`, { headers: { authorization: `Bearer ${apiKey}`, 'x-forwarded-for': `10.${(n += 1) % 250}.0.1` } });
    await res.arrayBuffer();
    return performance.now() - started;
  };
  const pollWhile = async (running: () => boolean): Promise<number[]> => {
    const samples: number[] = [];
    while (running()) {
      samples.push(await poll());
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return samples;
  };

  // Warm up, then the poller alone for 2 s.
  for (let i = 0; i < 20; i += 1) await poll();
  const aloneUntil = performance.now() + 2_000;
  const alone = await pollWhile(() => performance.now() < aloneUntil);

  // Messages of at most 500,000 characters, Prelude so the per-run kill switch lets the run through.
  const perMessage = Number(process.env.BENCH_STALL_CHARS ?? '480000');
  const kind = process.env.BENCH_STALL_TEXT ?? 'prose';
  const text =
    kind === 'no-spaces'
      ? 'x'.repeat(perMessage)
      : kind === 'no-break-spaces'
        ? `${'\u00a0'.repeat(perMessage - 2)}hi`
        : 'pipeline review for next quarter '.repeat(perMessage / 33);
  const count = Math.max(1, Math.floor((megabytes * 1024 * 1024) / (perMessage + 40)));
  const body = JSON.stringify({
    alias: 'Prelude',
    agentSlug: 'sales',
    maxTokens: 200,
    stream: process.env.BENCH_STALL_STREAM === '1',
    messages: Array.from({ length: count }, () => ({ role: 'user', content: text })),
  });
  let done = false;
  const started = performance.now();
  const invocation = fetch(`${url}/v1/inference`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-forwarded-for': '10.255.0.1' },
    body,
  }).then(async (res) => {
    await res.arrayBuffer();
    done = true;
    return { status: res.status, ms: performance.now() - started };
  });
  const during = await pollWhile(() => !done);
  const answer = await invocation;

  const stats = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    return `n=${sorted.length} p50=${at(0.5).toFixed(1)} ms p99=${at(0.99).toFixed(1)} ms max=${sorted.at(-1)!.toFixed(1)} ms`;
  };
  console.log(
    `large invocation (${kind}): ${(Buffer.byteLength(body) / 1024 / 1024).toFixed(2)} MiB, ${count} messages of ${perMessage} characters -> ${answer.status} in ${answer.ms.toFixed(0)} ms`,
  );
  console.log(`poller alone:     ${stats(alone)}`);
  console.log(`poller during it: ${stats(during)}`);
} finally {
  cli.killAll();
  rmSync(dir, { recursive: true, force: true });
}
