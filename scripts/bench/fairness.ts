/**
 * @module The fairness scenario: two workspaces of one server over real HTTP. Workspace B sends sync
 * invocations at a modest rate (open loop, {@link MODEST_RATE}/s, each from its own forwarded address) and pings its
 * one webhook destination at 1/s (fairness-deliveries.ts), first alone, then while workspace A floods: A's ceiling
 * raised (`workspaces update --rpm`), many concurrent sync invocations from the load generator, slow bodies on A's
 * inbound slug from one address (each connection sends the headers and a few bytes, then one byte a second; reopened
 * a second after the server answers or closes it), and slow receivers (five destinations of A whose receiver answers
 * after 9 s, kept busy with pings from before the flood starts). Reported: B's success rate and p50/p99 alone and
 * flooded, the p99 as a ratio of the alone p99 measured in the same run, how many of B's requests went out on a
 * connection its client opened for them and the p99 of the others, B's deliveries (arrived within the half plus
 * a grace, and p50/p99 from the ping's answer to the receiver) alone and flooded with their p99 ratio, what A got,
 * what the slow bodies got, and what A's slow receivers got.
 */
import { spawn, spawnSync } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestCertificate } from '@service/testing/https-receiver';
import {
  DELIVERY_GRACE_MS,
  DELIVERY_RATE,
  type DeliveryRun,
  type FairnessDeliveries,
  SLOW_DESTINATIONS,
  SLOW_RECEIVER_MS,
  type SlowReceivers,
  setUpDeliveries,
} from './fairness-deliveries.ts';
import { runLoad, type LoadResult } from './load.ts';
import { INVOCATION } from './probes.ts';
import { COMPILED_CLI, ROOT, type ServiceUnderTest, type StoreKind } from './processes.ts';
import { fmt, percentile } from './stats.ts';

/** B's requests per second: under the default workspace ceiling (600 a minute) with room to spare. */
export const MODEST_RATE = 5;

export interface ModestRun {
  sent: number;
  /** Answers 2xx. */
  ok: number;
  successRate: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers by status (`error` for a failed connection). */
  statuses: Record<string, number>;
  /**
   * Requests that were the first on their connection (B's client opened it for them: its kept-alive ones were busy
   * or closed), and the p99 of the others, the requests sent on a connection that had carried one before. A new
   * connection waits for the server to accept it and read its first request behind whatever else arrived then.
   */
  newConnections: number;
  p99ReusedMs: number;
}

export interface FairnessResult {
  store: StoreKind;
  seconds: number;
  modestRate: number;
  alone: ModestRun;
  flooded: ModestRun;
  /** B's p99 while A floods over B's p99 alone. */
  p99Ratio: number;
  flood: { connections: number; slowBodies: number; load: LoadResult };
  /**
   * Connection attempts the machine's kernel dropped because a listener's accept queue was full, during the flooded
   * half (`TcpExt: ListenOverflows` of /proc/net/netstat, every listener of the machine; absent elsewhere than Linux).
   * Each is a client retrying its connection a second later.
   */
  listenOverflows?: number;
  /** What the slow-body connections got: answers by status, and connections closed without an answer. */
  slowBodies: { opened: number; answered: Record<string, number>; closedWithoutAnswer: number };
  /** B's deliveries alone and while A floods (its flooded p99 over its alone p99), and what A's slow receivers got. */
  deliveries: { rate: number; graceMs: number; alone: DeliveryRun; flooded: DeliveryRun; p99Ratio: number; slowReceivers: SlowReceivers };
}

export interface FairnessOptions {
  seconds: number;
  floodConnections: number;
  slowBodies: number;
  /** Pings of A queued per slow destination beyond those its receiver holds. */
  slowBacklog: number;
}

/** `certificate` is the loopback receivers' (the server trusts it). */
export async function runFairness(
  service: ServiceUnderTest,
  certificate: TestCertificate,
  options: FairnessOptions,
  progress: (line: string) => void,
): Promise<FairnessResult> {
  const modest = createWorkspace(service);
  const deliveries = await setUpDeliveries(service, modest.admin, certificate);
  try {
    return await measureFairness(service, modest, deliveries, options, progress);
  } finally {
    await deliveries.close();
  }
}

async function measureFairness(
  service: ServiceUnderTest,
  modest: { apiKey: string },
  deliveries: FairnessDeliveries,
  options: FairnessOptions,
  progress: (line: string) => void,
): Promise<FairnessResult> {
  const invoke = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
  // Unmeasured: B's first calls verify its new key and load its settings, which its alone p99 must not include.
  for (let i = 0; i < 10; i += 1) {
    const res = await fetch(`${service.url}/v1/inference`, {
      method: 'POST',
      headers: { ...invoke(modest.apiKey), 'x-forwarded-for': `10.251.9.${i + 1}` },
      body: JSON.stringify(INVOCATION),
    });
    await res.arrayBuffer();
  }
  progress(`[${service.store}] fairness: B alone at ${MODEST_RATE}/s and ${DELIVERY_RATE} ping/s for ${options.seconds} s`);
  const [alone, deliveredAlone] = await Promise.all([modestRun(service.url, invoke(modest.apiKey), options.seconds, 0), deliveries.modest(options.seconds, 0)]);
  progress(
    `[${service.store}] fairness: A floods (${options.floodConnections} connections of sync invocations, ${options.slowBodies} slow bodies from one address, ${SLOW_DESTINATIONS} receivers answering after ${SLOW_RECEIVER_MS / 1000} s) while B goes on`,
  );
  // First A's slow receivers, so that its deliveries fill the worker's lanes before B's first ping.
  await deliveries.startSlow(options.slowBacklog);
  const overflowsBefore = listenOverflows();
  const slow = slowBodies(service, options.slowBodies);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const [load, flooded, deliveredFlooded] = await Promise.all([
    runLoad({
      url: `${service.url}/v1/inference`,
      method: 'POST',
      headers: invoke(service.apiKey),
      body: JSON.stringify(INVOCATION),
      connections: options.floodConnections,
      seconds: options.seconds,
    }),
    modestRun(service.url, invoke(modest.apiKey), options.seconds, 1),
    deliveries.modest(options.seconds, 1),
  ]);
  const slowResult = await slow.stop();
  const overflowsAfter = listenOverflows();
  const slowReceivers = await deliveries.stopSlow();
  const result: FairnessResult = {
    store: service.store,
    seconds: options.seconds,
    modestRate: MODEST_RATE,
    alone,
    flooded,
    p99Ratio: flooded.p99Ms / alone.p99Ms,
    flood: { connections: options.floodConnections, slowBodies: options.slowBodies, load },
    slowBodies: slowResult,
    ...(overflowsBefore !== undefined && overflowsAfter !== undefined ? { listenOverflows: overflowsAfter - overflowsBefore } : {}),
    deliveries: {
      rate: DELIVERY_RATE,
      graceMs: DELIVERY_GRACE_MS,
      alone: deliveredAlone,
      flooded: deliveredFlooded,
      p99Ratio: deliveredFlooded.p99Ms / deliveredAlone.p99Ms,
      slowReceivers,
    },
  };
  progress(
    `[${service.store}] fairness: B alone ${pct(alone.successRate)} ok, p99 ${alone.p99Ms.toFixed(1)} ms; flooded ${pct(flooded.successRate)} ok, p99 ${flooded.p99Ms.toFixed(1)} ms (x${result.p99Ratio.toFixed(2)}), ${flooded.newConnections} on new connections, p99 of the others ${flooded.p99ReusedMs.toFixed(1)} ms; A ${fmt(load.rps)} req/s, ${load.non2xx} answers >= 400${result.listenOverflows === undefined ? '' : `; ${result.listenOverflows} connections dropped at a full accept queue`}`,
  );
  progress(
    `[${service.store}] fairness: B's deliveries alone ${deliveredAlone.received}/${deliveredAlone.sent}, p50 ${deliveredAlone.p50Ms.toFixed(1)} ms, p99 ${deliveredAlone.p99Ms.toFixed(1)} ms; flooded ${deliveredFlooded.received}/${deliveredFlooded.sent}, p50 ${deliveredFlooded.p50Ms.toFixed(1)} ms, p99 ${deliveredFlooded.p99Ms.toFixed(1)} ms (x${result.deliveries.p99Ratio.toFixed(2)}); A's slow receivers got ${slowReceivers.received}, held at most ${slowReceivers.maxHeld} at once`,
  );
  return result;
}

/** A second workspace on the running server (`workspaces create --url`), its quota raised like A's. */
function createWorkspace(service: ServiceUnderTest): { apiKey: string; workspaceId: string; admin: ServiceUnderTest['admin'] } {
  const operator = ['--url', service.url, '--operator-token', service.operatorToken];
  const run = (...args: string[]) => {
    const result = spawnSync(process.execPath, [COMPILED_CLI, ...args, ...operator], { cwd: ROOT, env: process.env, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`service ${args.join(' ')} failed: ${result.stderr}`);
    return result.stdout;
  };
  const created = JSON.parse(run('workspaces', 'create', '--name', 'Modest', '--admin-email', 'modest@bench.example', '--json')) as {
    apiKey: string;
    workspaceId: string;
    admin: ServiceUnderTest['admin'];
  };
  run('workspaces', 'update', created.workspaceId, '--quota-stu', '1000000000000');
  return created;
}

/**
 * Whether each request of B's client went out on a connection that carried none before, by its forwarded address
 * (unique in a half): from the `undici:client:sendHeaders` diagnostics channel of Node's `fetch`, which names the
 * socket each request's headers are written to.
 */
const openedFor = new Map<string, boolean>();
const requestsOnSocket = new WeakMap<object, number>();
let watchingConnections = false;
function watchConnections(): void {
  if (watchingConnections) return;
  watchingConnections = true;
  subscribe('undici:client:sendHeaders', (message) => {
    const { headers, socket } = message as { headers: string; socket: object };
    const address = /\r\nx-forwarded-for: (10\.251\.[0-9.]+)\r\n/i.exec(headers)?.[1];
    const before = requestsOnSocket.get(socket) ?? 0;
    requestsOnSocket.set(socket, before + 1);
    if (address) openedFor.set(address, before === 0);
  });
}

/** B's open loop: one invocation every 1/MODEST_RATE s for `seconds`, each from its own forwarded address. */
async function modestRun(base: string, headers: Record<string, string>, seconds: number, phase: number): Promise<ModestRun> {
  watchConnections();
  openedFor.clear();
  const count = Math.max(1, Math.round(seconds * MODEST_RATE));
  const latencies: number[] = [];
  const reused: number[] = [];
  let newConnections = 0;
  const statuses: Record<string, number> = {};
  const started = performance.now();
  const sent: Promise<void>[] = [];
  for (let i = 0; i < count; i += 1) {
    const due = started + (i * 1000) / MODEST_RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    sent.push(
      (async () => {
        const at = performance.now();
        const address = `10.251.${phase}.${(i % 250) + 1}`;
        let status = 'error';
        try {
          const res = await fetch(`${base}/v1/inference`, {
            method: 'POST',
            headers: { ...headers, 'x-forwarded-for': address },
            body: JSON.stringify(INVOCATION),
          });
          await res.arrayBuffer();
          status = String(res.status);
        } catch {
          // counted as `error`
        }
        statuses[status] = (statuses[status] ?? 0) + 1;
        const opened = openedFor.get(address);
        openedFor.delete(address);
        if (opened) newConnections += 1;
        if (!status.startsWith('2')) return;
        const latency = performance.now() - at;
        latencies.push(latency);
        if (opened === false) reused.push(latency);
      })(),
    );
  }
  await Promise.all(sent);
  const ok = latencies.length;
  return {
    sent: count,
    ok,
    successRate: ok / count,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    statuses,
    newConnections,
    p99ReusedMs: percentile(reused, 0.99),
  };
}

/**
 * `count` connections trickling a body to A's inbound slug from one address (./slow-bodies.ts), from a process of
 * their own as wrk sends A's invocations, so that B's client, in this process, shares its event loop with none of
 * the flood's sockets: B's latency is the server's and the network's, not its own client's.
 */
function slowBodies(service: ServiceUnderTest, count: number): { stop(): Promise<FairnessResult['slowBodies']> } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/bench/slow-bodies.ts'), service.url, service.inbound.slug, String(count)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d.toString()));
  // 'close': after its output is read to the end.
  const exited = new Promise<number | null>((resolve) => {
    child.on('close', resolve);
    child.on('error', () => resolve(null));
  });
  return {
    async stop() {
      child.stdin.end('stop\n');
      const code = await exited;
      if (code !== 0) throw new Error(`the slow bodies' process exited with ${code}`);
      return JSON.parse(out) as FairnessResult['slowBodies'];
    },
  };
}

const pct = (rate: number) => `${(rate * 100).toFixed(1)}%`;

/** The fairness tables: B's invocations alone and flooded, the p99 ratio, what A and the slow bodies got; then B's deliveries. */
export function fairnessTable(runs: FairnessResult[], table: (headers: string[], rows: string[][]) => string): string {
  const delivered = (d: DeliveryRun) => `${d.received}/${d.sent}`;
  return [
    `Fairness: workspace B at ${MODEST_RATE} sync invocations/s alone, then while workspace A floods (raised ceiling, concurrent sync invocations, slow inbound bodies from one address, slow receivers)`,
    '',
    table(
      [
        'store',
        'scenario',
        'B ok alone',
        'B p99 alone ms',
        'B ok flooded',
        'B p99 flooded ms',
        'p99 ratio',
        'B new conn. alone / flooded',
        'B p99 flooded, reused conn. ms',
        'A req/s',
        'A >= 400',
        'slow bodies answered',
        'accept queue drops',
      ],
      runs.map((r) => [
        r.store,
        `${r.flood.connections} conn. + ${r.flood.slowBodies} slow bodies, ${r.seconds} s`,
        pct(r.alone.successRate),
        fmt(r.alone.p99Ms, 1),
        pct(r.flooded.successRate),
        fmt(r.flooded.p99Ms, 1),
        fmt(r.p99Ratio, 2),
        `${r.alone.newConnections} / ${r.flooded.newConnections}`,
        fmt(r.flooded.p99ReusedMs, 1),
        fmt(r.flood.load.rps),
        String(r.flood.load.non2xx),
        `${r.slowBodies.opened} opened; ${statusList(r.slowBodies.answered) || 'none answered'}; ${r.slowBodies.closedWithoutAnswer} closed unanswered`,
        r.listenOverflows === undefined ? '-' : String(r.listenOverflows),
      ]),
    ),
    '',
    `Fairness, deliveries: workspace B pings its destination ${DELIVERY_RATE}/s in both halves; latency from the ping's 202 to the receiver, counted when it arrives within the half + ${DELIVERY_GRACE_MS / 1000} s; meanwhile A's ${SLOW_DESTINATIONS} destinations answer after ${SLOW_RECEIVER_MS / 1000} s`,
    '',
    table(
      [
        'store',
        'B delivered alone',
        'B p50 alone ms',
        'B p99 alone ms',
        'B delivered flooded',
        'B p50 flooded ms',
        'B p99 flooded ms',
        'delivery p99 ratio',
        'A slow receivers',
      ],
      runs.map((r) => [
        r.store,
        delivered(r.deliveries.alone),
        fmt(r.deliveries.alone.p50Ms, 1),
        fmt(r.deliveries.alone.p99Ms, 1),
        delivered(r.deliveries.flooded),
        fmt(r.deliveries.flooded.p50Ms, 1),
        fmt(r.deliveries.flooded.p99Ms, 1),
        fmt(r.deliveries.p99Ratio, 2),
        `${r.deliveries.slowReceivers.received} received, ${r.deliveries.slowReceivers.maxHeld} held at most; pings ${statusList(r.deliveries.slowReceivers.pings) || 'none'}`,
      ]),
    ),
  ].join('\n');
}

/** The kernel's count of connection attempts dropped at a full accept queue (Linux), or undefined. */
function listenOverflows(): number | undefined {
  try {
    const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n');
    for (let i = 0; i + 1 < lines.length; i += 2) {
      const names = lines[i]!.split(/\s+/);
      if (names[0] !== 'TcpExt:') continue;
      const at = names.indexOf('ListenOverflows');
      return at < 0 ? undefined : Number(lines[i + 1]!.split(/\s+/)[at]);
    }
  } catch {
    // not Linux
  }
  return undefined;
}

const statusList = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([status, n]) => `${status}: ${n}`)
    .join(', ');
