/**
 * @module `tsx scripts/bench-money-path.ts [--seconds 5] [--concurrency 1,10]`: synchronous
 * invocations per second through the app in process (no HTTP, the `local` engine), on the embedded
 * store and, with DATABASE_URL, on PostgreSQL (a fresh schema), with the store statements one
 * invocation runs. Short on purpose: it compares the money path before and after a change, on the
 * same machine in the same minute; `pnpm bench` is the benchmark of record.
 */
import { createTestApp } from '../packages/testing/src/app.ts';
import { countingDb, testBackends } from '../packages/testing/src/store.ts';

const argument = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1]! : fallback;
};
const seconds = Number(argument('seconds', '5'));
const levels = argument('concurrency', '1,10').split(',').map(Number);

for (const backend of testBackends()) {
  const store = await backend.open();
  const counted = countingDb(store.db);
  // Spending and rate limits out of the way: this measures the path, not a refusal.
  const limiter = { hit: async (_key: string, limit: number) => ({ allowed: true, limit, remaining: limit, resetAt: 0, retryAfterSec: 0 }) };
  const t = await createTestApp({ db: counted.db, deps: { limiter, killSwitchLimits: { run: 1e12, hour: 1e12, day: 1e12 } } });
  await t.services.keys.ready();
  const headers = { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' };
  let sent = 0;
  const invoke = async () => {
    sent += 1;
    const res = await t.app.request('/v1/inference', {
      method: 'POST',
      headers,
      body: JSON.stringify({ alias: 'Prelude', agentSlug: 'sales', maxTokens: 64, messages: [{ role: 'user', content: `Follow up with lead ${sent}` }] }),
    });
    if (res.status !== 200) throw new Error(`invocation answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  };
  await invoke();
  counted.statements.length = 0;
  await invoke();
  const statements = [...counted.statements];
  for (const concurrency of levels) {
    let done = 0;
    const until = performance.now() + seconds * 1000;
    const cpu = process.cpuUsage();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < until) {
          await invoke();
          done += 1;
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    console.log(
      `${backend.name.padEnd(8)} c${String(concurrency).padEnd(3)} ${(done / elapsed).toFixed(1).padStart(7)} invocations/s` +
        `  ${((used.user + used.system) / 1000 / done).toFixed(2)} ms CPU each  ${statements.length} statements (${statements.filter((s) => s === 'BEGIN').length} transactions)`,
    );
  }
  if (process.argv.includes('--statements')) console.log(statements.map((s) => `  ${s.slice(0, 110)}`).join('\n'));
  await t.close();
  await store.cleanup();
}
process.exit(0);
