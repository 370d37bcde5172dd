/**
 * @module What one step of the agent loop costs: sync invocations (`POST /v1/inference`, alias Symphony served by
 * `openai-compatible`) through the app in process (`app.request`, no sockets to the service, no request log), one
 * after another, on a fresh embedded store (or a schema of DATABASE_URL with BENCH_STORE=postgres). The model is a
 * loopback Chat Completions server that asks for the connected CRM server's read-only tool (`crm.lookup_contact`, an
 * MCP server over Streamable HTTP on loopback, through the official SDK's client) until the conversation holds
 * `k` results, then answers; so an invocation with `k` steps makes k + 1 model calls and k tool calls.
 *
 *   pnpm exec tsx scripts/bench/loop-step.ts              k = 0, 1 and 3, rounds interleaved
 *   BENCH_INVOCATIONS=300 BENCH_ROUNDS=3                  (the defaults)
 *
 * Reported per k: the process's CPU per invocation (user + system), and the added CPU per step against k = 0, with
 * the model calls' and tool calls' wall time. The loopback model and the MCP server run in this process too, so the
 * figure per step includes their own work (a model call's answer, a tool call's handling): an upper bound on what the
 * service adds. Figures go to stderr.
 */
import { startCrmServer } from '../../packages/testing/src/mcp-servers.ts';
import { scripted, startFakeChatServer } from '../../packages/testing/src/fake-chat-server.ts';
import { createAgentTestApp } from '../../packages/testing/src/agent-app.ts';
import { testBackends } from '../../packages/testing/src/store.ts';
import { helpFromModuleComment } from './help.ts';

helpFromModuleComment(import.meta.url);

const N = Number(process.env.BENCH_INVOCATIONS ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const STEPS = [0, 1, 3];
const TOOL = 'crm.lookup_contact';
const say = (line: string) => process.stderr.write(`${line}\n`);

const backend = testBackends().find((b) => b.name === (process.env.BENCH_STORE ?? 'pglite'));
if (!backend) throw new Error('BENCH_STORE=postgres needs DATABASE_URL');
const store = await backend.open();
const fake = await startFakeChatServer();
const crm = await startCrmServer();
const { t } = await createAgentTestApp({ db: store.db, model: fake, mcp: crm, integration: 'crm' });
await store.db.query(`UPDATE workspaces SET rpm_limit = 1000000 WHERE id = $1`, [t.workspaceId]);
const key = await t.keyWith('orchestrator:invoke');

// The model: a tool call until the conversation holds `steps` tool results, then the answer.
let steps = 0;
let modelMs = 0;
const usage = { prompt_tokens: 60, completion_tokens: 12 };
fake.handle = (request, res) => {
  const messages = (request.body.messages ?? []) as { role: string }[];
  const results = messages.filter((m) => m.role === 'tool').length;
  const answer =
    results < steps
      ? { toolCalls: [{ id: `call_${results}`, name: TOOL, arguments: { query: 'Northwind' } }], usage }
      : { content: 'Northwind owes 1,200 EUR, due on the 30th.', usage };
  const began = performance.now();
  scripted([answer])(request, res);
  modelMs += performance.now() - began;
};

let address = 0;
async function invoke(): Promise<void> {
  const i = address++;
  const res = await t.app.request(
    '/v1/inference',
    {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Symphony', agentSlug: 'finance', messages: [{ role: 'user', content: 'How much does Northwind owe us?' }] }),
    },
    { incoming: { socket: { remoteAddress: `198.51.${Math.floor(i / 250) % 250}.${i % 250}` } } },
  );
  if (res.status !== 200) throw new Error(`invocation answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

async function round(k: number): Promise<{ cpu: number; wall: number }> {
  steps = k;
  for (let i = 0; i < 20; i += 1) await invoke();
  const calls = crm.calls.length;
  const began = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < N; i += 1) await invoke();
  const used = process.cpuUsage(cpu);
  if (crm.calls.length - calls !== k * N) throw new Error(`expected ${k * N} tool calls, the CRM server got ${crm.calls.length - calls}`);
  return { cpu: (used.user + used.system) / 1000 / N, wall: (performance.now() - began) / N };
}

const fmt = (ms: number) => ms.toFixed(3).padStart(7);
const byK = new Map<number, { cpu: number; wall: number }[]>();
for (let r = 1; r <= ROUNDS; r += 1) {
  for (const k of STEPS) {
    const row = await round(k);
    byK.set(k, [...(byK.get(k) ?? []), row]);
    say(`round ${r} k=${k}: CPU ${fmt(row.cpu)} ms/invocation, wall ${fmt(row.wall)} ms/invocation`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base = median(byK.get(0)!.map((x) => x.cpu));
say(`median over ${ROUNDS} rounds of ${N} invocations (${backend.name}):`);
for (const k of STEPS) {
  const cpu = median(byK.get(k)!.map((x) => x.cpu));
  const wall = median(byK.get(k)!.map((x) => x.wall));
  say(`  k=${k}: CPU ${fmt(cpu)} ms, wall ${fmt(wall)} ms per invocation${k > 0 ? `; added CPU per step ${fmt((cpu - base) / k)} ms` : ''}`);
}
say(`the loopback model's handler took ${fmt(modelMs / Math.max(1, fake.requests.length))} ms a call on average`);
await t.close();
await fake.stop();
await crm.close();
await store.cleanup();
