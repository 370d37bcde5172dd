import { it } from 'vitest';
import { openStore } from './store/open.ts';
import { createTestApp } from './testing.ts';
it('probe', async () => {
  const real = await openStore(process.env.DATABASE_URL ? { databaseUrl: process.env.DATABASE_URL } : {});
  const log: string[] = [];
  let on = false;
  const wrap = (d: any, depth = 0): any => ({
    ...d,
    driver: d.driver,
    close: d.close?.bind(d),
    query: async (sql: string, p?: unknown[]) => {
      if (on) log.push(`${'  '.repeat(depth)}${sql.replace(/\s+/g, ' ').slice(0, 150)}`);
      return d.query(sql, p);
    },
    exec: (s: string) => d.exec(s),
    transaction: (fn: any) => {
      if (on) log.push(`${'  '.repeat(depth)}BEGIN`);
      return d.transaction((tx: any) => fn(wrap(tx, depth + 1)));
    },
  });
  const t = await createTestApp({ db: wrap(real) });
  const h = { Authorization: `Bearer ${t.apiKey}`, 'Content-Type': 'application/json' };
  for (const [name, path, init] of [
    ['usage', '/usage/current', { headers: h }],
    ['runs', '/runs?limit=20', { headers: h }],
    [
      'invoke',
      '/v1/inference',
      { method: 'POST', headers: h, body: JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Which invoices are overdue?' }] }) },
    ],
  ] as const) {
    await t.app.request(path, init as RequestInit); // warm
    on = true;
    log.length = 0;
    const r = await t.app.request(path, init as RequestInit);
    on = false;
    console.log(`== ${name} ${r.status} ${log.length} statements\n${log.join('\n')}`);
  }
}, 60000);
