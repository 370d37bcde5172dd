/**
 * @module The benchmark's measurements that a load generator cannot make: the time to the first
 * SSE byte and to `event: end` of streamed invocations, the local engine's own time (in process,
 * no server), outbound deliveries per second to the loopback receiver, and the start-up time to
 * the first `/healthz` 200 of the compiled build and of the development runner (tsx).
 */
import { spawn, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { collect, createLocalEngine } from '../../packages/server/src/engine/index.ts';
import { totpCode } from '../../packages/server/src/domain/sessions/totp.ts';
import type { HttpsTestReceiver } from '@service/testing/https-receiver';
import type { LoadSpec } from './load.ts';
import { freePort } from '@service/testing/free-port';
import { COMPILED_CLI, ROOT, SOURCE_CLI, type ServiceUnderTest } from './processes.ts';
import { percentile } from './stats.ts';

export const INVOCATION = {
  alias: 'Prelude',
  agentSlug: 'sales',
  messages: [{ role: 'user', content: 'Summarise the open opportunities in the pipeline for next quarter.' }],
} as const;

/** `connections` clients sending {@link INVOCATION} (sync) with the service's API key for `seconds`. */
export function syncInvocationLoad(service: ServiceUnderTest, seconds: number, connections: number): LoadSpec {
  return {
    url: `${service.url}/v1/inference`,
    method: 'POST',
    headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(INVOCATION),
    connections,
    seconds,
  };
}

export interface StreamTimings {
  count: number;
  firstByteP50Ms: number;
  firstByteP99Ms: number;
  endP50Ms: number;
  endP99Ms: number;
  non2xx: number;
}

/** `count` streamed invocations one after another on one kept-alive connection, with `apiKey`. */
export async function streamTimings(service: ServiceUnderTest, apiKey: string, count: number): Promise<StreamTimings> {
  const url = new URL('/v1/inference', service.url);
  const body = JSON.stringify({ ...INVOCATION, stream: true });
  const firstBytes: number[] = [];
  const ends: number[] = [];
  let non2xx = 0;
  for (let i = 0; i < count; i += 1) {
    const started = performance.now();
    let firstAt = Number.NaN;
    let endAt = Number.NaN;
    let failed = false;
    await new Promise<void>((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${apiKey}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'x-forwarded-for': `10.251.${Math.floor(i / 250) % 250}.${(i % 250) + 1}`,
          },
        },
        (res) => {
          failed = (res.statusCode ?? 0) >= 400;
          let text = '';
          res.on('data', (chunk: Buffer) => {
            if (Number.isNaN(firstAt)) firstAt = performance.now() - started;
            text += chunk.toString();
            if (Number.isNaN(endAt) && text.includes('event: end')) endAt = performance.now() - started;
          });
          res.on('end', () => resolve());
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    // A stream that fails or ends without `event: end` counts as a failure, not as a time.
    if (failed || Number.isNaN(endAt)) non2xx += 1;
    else {
      firstBytes.push(firstAt);
      ends.push(endAt);
    }
  }
  return {
    count,
    firstByteP50Ms: percentile(firstBytes, 0.5),
    firstByteP99Ms: percentile(firstBytes, 0.99),
    endP50Ms: percentile(ends, 0.5),
    endP99Ms: percentile(ends, 0.99),
    non2xx,
  };
}

/** The local engine's own time for the benchmark's synchronous invocation, in this process: p50 in ms. */
export async function engineOwnTime(count: number): Promise<{ p50Ms: number; p99Ms: number }> {
  const engine = createLocalEngine();
  const request = { alias: INVOCATION.alias, agentSlug: INVOCATION.agentSlug, messages: INVOCATION.messages, stream: false };
  for (let i = 0; i < 20; i += 1) await collect(engine.stream(request));
  const samples: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const started = performance.now();
    await collect(engine.stream(request));
    samples.push(performance.now() - started);
  }
  return { p50Ms: percentile(samples, 0.5), p99Ms: percentile(samples, 0.99) };
}

export interface DeliveryRate {
  events: number;
  /** Deliveries that reached the receiver after it was released (the backlog drained). */
  delivered: number;
  seconds: number;
  perSecond: number;
  /** Seconds it took to queue every ping through the admin API. */
  queuedSeconds: number;
}

/** An admin's session on the running server: what its writes carry (`Cookie` and `X-CSRF-Token`). */
export interface AdminSession {
  cookie: string;
  csrfToken: string;
}

/**
 * Signs `admin` in from `address` (`POST /auth/login`). Each TOTP code works once: when the admin already signed in
 * within this 30 s step (the deliveries probe, before the fairness scenario), the next step's code, which the server
 * accepts for clock drift, is tried.
 */
export async function signIn(base: string, admin: ServiceUnderTest['admin'], address: string): Promise<AdminSession> {
  let refused = '';
  for (const aheadMs of [0, 30_000]) {
    const login = await fetch(`${base}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
      body: JSON.stringify({ email: admin.email, password: admin.password, totpCode: totpCode(admin.totpSecret, new Date(Date.now() + aheadMs)) }),
    });
    if (login.status === 200) {
      const { csrfToken } = (await login.json()) as { csrfToken: string };
      return { cookie: login.headers.get('set-cookie')!.split(';')[0]!, csrfToken };
    }
    refused = `${login.status}: ${await login.text()}`;
  }
  throw new Error(`admin login answered ${refused}`);
}

/** The loopback receiver's answer, held while a backlog is built. */
export interface ReceiverGate {
  answer(): Promise<{ status: number }>;
  hold(): void;
  release(): void;
}

export function receiverGate(): ReceiverGate {
  let open: Promise<void> = Promise.resolve();
  let release = () => {};
  return {
    answer: async () => {
      await open;
      return { status: 200 };
    },
    hold() {
      open = new Promise((resolve) => (release = resolve));
    },
    release: () => release(),
  };
}

/**
 * Outbound deliveries per second: the receiver holds its answers while `count` signed ping events
 * are queued through the admin API (`POST /webhook-destinations/{id}/ping`, `concurrency` at a
 * time), so the worker's first batch waits and the rest stay queued; then it answers, and the rate
 * is the deliveries received after that, over the time to the last one. Needs a delivery timeout
 * longer than the queuing. Bounded: gives up after `limitMs`.
 */
export async function deliveryRate(
  service: ServiceUnderTest,
  receiver: HttpsTestReceiver,
  gate: ReceiverGate,
  count: number,
  concurrency = 16,
  limitMs = 120_000,
): Promise<DeliveryRate> {
  const { cookie, csrfToken } = await signIn(service.url, service.admin, '10.252.0.1');
  const before = receiver.received.length;
  gate.hold();
  const queueing = performance.now();
  let next = 0;
  const pinger = async () => {
    while (next < count) {
      const i = (next += 1);
      const res = await fetch(`${service.url}/webhook-destinations/${service.destination.id}/ping`, {
        method: 'POST',
        headers: { cookie, 'x-csrf-token': csrfToken, 'x-forwarded-for': `10.253.${Math.floor(i / 250) % 250}.${(i % 250) + 1}` },
      });
      if (res.status !== 202) {
        gate.release();
        throw new Error(`ping answered ${res.status}: ${await res.text()}`);
      }
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, pinger));
  const queuedSeconds = (performance.now() - queueing) / 1000;
  const held = receiver.received.length - before;
  const released = performance.now();
  gate.release();
  const deadline = released + limitMs;
  let last = released;
  let seen = receiver.received.length;
  while (receiver.received.length - before < count && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 2));
    if (receiver.received.length !== seen) {
      seen = receiver.received.length;
      last = performance.now();
    }
  }
  const delivered = receiver.received.length - before - held;
  const seconds = (last - released) / 1000;
  return { events: count, delivered, seconds, perSecond: delivered > 0 ? delivered / seconds : Number.NaN, queuedSeconds };
}

/** The environment of an embedded-store server: nothing that would point it at a shared store. */
function embeddedEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY', 'METRICS_PORT']) delete env[name];
  return env;
}

/** Milliseconds from spawning `serve` to its first `/healthz` 200, on an initialised embedded store. */
async function timeToHealthy(args: string[], dataDir: string): Promise<number> {
  const port = await freePort();
  const env = embeddedEnv();
  const started = performance.now();
  const child = spawn(process.execPath, [...args, 'serve', '--port', String(port), '--data-dir', dataDir], { cwd: ROOT, env, stdio: 'ignore' });
  try {
    const deadline = started + 60_000;
    while (performance.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode} before answering /healthz`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        await res.arrayBuffer();
        if (res.status === 200) return performance.now() - started;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error('serve did not answer /healthz within 60 s');
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}

export interface StartupTimes {
  compiledMs: number[];
  tsxMs: number[];
}

/** Start-up of the compiled build (`node dist/cli.js`) and of `tsx` (`node --import tsx src/cli.ts`), interleaved. */
export async function startupTimes(dir: string, rounds: number, withTsx = true): Promise<StartupTimes> {
  const dataDir = join(dir, 'data-startup');
  const init = spawnSync(process.execPath, [COMPILED_CLI, 'init', '--json', '--data-dir', dataDir], { cwd: ROOT, env: embeddedEnv(), encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`init failed: ${init.stderr}`);
  const times: StartupTimes = { compiledMs: [], tsxMs: [] };
  // One unmeasured start of each warms the file-system cache.
  await timeToHealthy([COMPILED_CLI], dataDir);
  if (withTsx) await timeToHealthy(['--import', 'tsx', SOURCE_CLI], dataDir);
  for (let r = 0; r < rounds; r += 1) {
    times.compiledMs.push(await timeToHealthy([COMPILED_CLI], dataDir));
    if (withTsx) times.tsxMs.push(await timeToHealthy(['--import', 'tsx', SOURCE_CLI], dataDir));
  }
  return times;
}
