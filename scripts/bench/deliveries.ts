/**
 * `pnpm bench:deliveries [--events N] [--rounds R]`: outbound deliveries drained by the delivery
 * worker in process (no HTTP server of ours in the path), to a loopback HTTPS receiver, on the
 * embedded store and (with DATABASE_URL) on PostgreSQL. N events (default 1,000) are queued for one
 * destination, then the worker (`startWorker`, as `serve` runs it, woken once: its attempts by lane,
 * each on its own) drains them; prints deliveries per second and the CPU of this process (worker, store client and
 * receiver; PostgreSQL's own CPU is not in it) per delivery, for each round. BENCH_STORE=pglite or
 * postgres runs one store only.
 */
import { parseArgs } from 'node:util';
import { enqueueEvent } from '../../packages/server/src/domain/events/outbox.ts';
import { createDeliveryAgents } from '../../packages/server/src/domain/webhooks/delivery-agents.ts';
import { deliveredRecorder } from '../../packages/server/src/worker/deliveries.ts';
import { startWorker } from '../../packages/server/src/worker/index.ts';
import { createSelfSignedCertificate, startHttpsTestReceiver } from '@service/testing/https-receiver';
import { testBackends } from '@service/testing/store';
import { createTestApp } from '@service/testing/app';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(
    'Usage: pnpm bench:deliveries [--events N (default 1000)] [--rounds R (default 3)]\n\n' +
      'Outbound deliveries drained in process to a loopback HTTPS receiver, per store (the embedded one, and PostgreSQL\n' +
      'when DATABASE_URL is set; BENCH_STORE=pglite|postgres for one): deliveries/s and CPU ms per delivery.',
  );
  process.exit(0);
}
const EVENTS = Number(values.events);
const ROUNDS = Number(values.rounds);
if (!Number.isInteger(EVENTS) || EVENTS < 1 || !Number.isInteger(ROUNDS) || ROUNDS < 1) {
  console.error('--events and --rounds take whole numbers of at least 1.');
  process.exit(2);
}

const certificate = createSelfSignedCertificate();
const receiver = await startHttpsTestReceiver(certificate);

for (const backend of testBackends().filter((b) => !process.env.BENCH_STORE || b.name === process.env.BENCH_STORE)) {
  const store = await backend.open();
  const t = await createTestApp({ db: store.db, deps: { webhooks: { allowList: ['127.0.0.1'] } } });
  const admin = await t.login();
  const created = await t.app.request('/webhook-destinations', {
    method: 'POST',
    headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${receiver.origin}/hook`, events: ['run.completed'] }),
  });
  if (created.status !== 201) throw new Error(`destination: ${created.status} ${await created.text()}`);
  const deps = {
    db: store.db,
    clock: t.clock,
    secretBox: t.services.webhooks.secretBox,
    policy: { allowList: t.services.webhooks.allowList },
    ca: receiver.ca,
    // As the worker holds them (worker/index.ts): one pool of connections, one grouped recorder.
    agents: createDeliveryAgents(),
    recordDelivered: deliveredRecorder(store.db),
  };
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (let i = 0; i < EVENTS; i += 1) {
      await enqueueEvent(
        store.db,
        {
          tenantId: t.workspaceId,
          type: 'run.completed',
          data: { run_id: `run_${i}`, agent: 'sales', alias: 'Sonata', status: 'completed', usage: { input_tokens: 3, output_tokens: 5, stu: 24 } },
        },
        { now: t.clock.now() },
      );
    }
    const before = receiver.received.length;
    const cpu = process.cpuUsage();
    const started = performance.now();
    // Polls only when nothing wakes it (never, here): the worker claims again as its attempts end.
    const worker = startWorker({
      ...deps,
      pollMs: 3_600_000,
      logError: (error) => {
        console.error('The worker failed:', error);
        process.exit(1);
      },
    });
    while (receiver.received.length - before < EVENTS) await new Promise((resolve) => setTimeout(resolve, 2));
    await worker.stop();
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const delivered = receiver.received.length - before;
    console.log(
      `${backend.name} round ${round}: ${delivered} delivered in ${seconds.toFixed(2)} s = ${(delivered / seconds).toFixed(0)}/s, ` +
        `CPU ${((used.user + used.system) / 1000 / delivered).toFixed(2)} ms per delivery`,
    );
  }
  await t.close();
  await store.cleanup();
}
await receiver.close();
process.exit(0);
