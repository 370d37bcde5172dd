/**
 * @module `tsx scripts/bench-money-path.ts [--seconds 5] [--concurrency 1,10] [--stores pglite,postgres]`:
 * synchronous invocations per second through the app in process (no HTTP, the `local` engine), on
 * the embedded store and, with DATABASE_URL, on PostgreSQL (a fresh schema), with the store
 * statements one invocation runs. Short on purpose: it compares the money path before and after a
 * change, on the same machine in the same minute; `pnpm bench` is the benchmark of record.
 */
import { readFileSync } from 'node:fs';
import { createTestApp } from '../packages/testing/src/app.ts';
import type { Db } from '../packages/server/src/store/db.ts';
import { countingDb, storeTestBackends } from '../packages/testing/src/store.ts';

if (process.argv.includes('--help')) {
  console.log(`tsx scripts/bench-money-path.ts [options]
  --seconds N          seconds per concurrency level (5)
  --concurrency a,b,c  invocations in flight at once, one level after another (1,10)
  --stores a,b         pglite (in this thread, as the tests run it), pglite-worker (in a worker thread,
                       as \`service serve\` runs it), postgres (needs DATABASE_URL) (pglite,postgres)
  --statements         print the statements of one invocation
Per level: invocations/s, CPU of the whole process per invocation (on PostgreSQL also that of the
database's backends serving DATABASE_URL's database, read from /proc: give the benchmark a database of
its own), statements per invocation at that level (fewer than the lone invocation's when closes were
batched).`);
  process.exit(0);
}

const argument = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1]! : fallback;
};
const seconds = Number(argument('seconds', '5'));
const levels = argument('concurrency', '1,10').split(',').map(Number);
const stores = argument('stores', 'pglite,postgres').split(',');

/** CPU ms used so far by the PostgreSQL backends of DATABASE_URL's database (the server on this machine). */
async function databaseCpuMs(db: Db): Promise<Map<number, number>> {
  const rows = await db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`);
  const used = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      used.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1000) / 100);
    } catch {
      // Ended meanwhile.
    }
  }
  return used;
}
const spent = (before: Map<number, number>, after: Map<number, number>) => [...after].reduce((sum, [pid, ms]) => sum + ms - (before.get(pid) ?? 0), 0);

for (const backend of storeTestBackends().filter((b) => stores.includes(b.name))) {
  const store = await backend.open();
  const admin = backend.name === 'postgres' ? store.db : undefined;
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
    counted.statements.length = 0;
    const cpu = process.cpuUsage();
    const database = admin && (await databaseCpuMs(admin));
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
    const databaseMs = admin && database ? spent(database, await databaseCpuMs(admin)) : undefined;
    console.log(
      `${backend.name.padEnd(13)} c${String(concurrency).padEnd(3)} ${(done / elapsed).toFixed(1).padStart(7)} invocations/s` +
        `  ${((used.user + used.system) / 1000 / done).toFixed(2)} ms CPU each` +
        (databaseMs === undefined ? '' : ` + ${(databaseMs / done).toFixed(2)} ms in PostgreSQL`) +
        `  ${(counted.statements.length / done).toFixed(2)} statements each` +
        `  (alone: ${statements.length} statements, ${statements.filter((s) => s === 'BEGIN').length} transactions)`,
    );
  }
  if (process.argv.includes('--statements')) console.log(statements.map((s) => `  ${s.slice(0, 110)}`).join('\n'));
  await t.close();
  await store.cleanup();
}
process.exit(0);
