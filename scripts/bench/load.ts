/**
 * @module The load generator: `wrk` when it is on PATH (C, one thread, light on a 2-core machine),
 * else `autocannon` from npm. Either way every request gets its own `X-Forwarded-For` (the server
 * runs with TRUST_PROXY=1, so the per-IP limit stays on and is never the bottleneck) and, when
 * asked, its own event id header (inbound events must not be duplicates).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
  /** A header that gets a value unique to each request (an event id). */
  uniqueHeader?: string;
}

export interface LoadResult {
  tool: 'wrk' | 'autocannon';
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers with a status of 400 or more. */
  non2xx: number;
  /** Connect, read, write errors and timeouts. */
  errors: number;
}

let wrkPresent: boolean | undefined;

/** Which generator runs: BENCH_LOAD=wrk|autocannon chooses; by default wrk when present. */
export function loadTool(): 'wrk' | 'autocannon' {
  const chosen = process.env.BENCH_LOAD;
  if (chosen === 'wrk' || chosen === 'autocannon') return chosen;
  wrkPresent ??= spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
  return wrkPresent ? 'wrk' : 'autocannon';
}

/**
 * The `n`th request's client address: 10.0.0.1, 10.0.0.2, … (15,625,000 before they repeat), so each request comes from
 * an address of its own and the in-memory limiter tracks one more key per request (its memory bound is reached within
 * a minute above ~1,700 requests a second).
 */
function forwardedFor(n: number): string {
  return `10.${Math.floor(n / 62_500) % 250}.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return loadTool() === 'wrk' ? runWrk(spec) : runAutocannon(spec);
}

// Long brackets need a space after an index bracket (`[ [==[…]==] ]`), or Lua reads `[[` as a string.
const luaString = (s: string) => ` [==[${s}]==] `;

async function runWrk(spec: LoadSpec): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  const nonce = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  const script = [
    `wrk.method = "${spec.method}"`,
    ...(spec.body === undefined ? [] : [`wrk.body = ${luaString(spec.body)}`]),
    ...Object.entries(spec.headers).map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`),
    'local n = 0',
    'request = function()',
    '  n = n + 1',
    '  wrk.headers["X-Forwarded-For"] = "10." .. (math.floor(n / 62500) % 250) .. "." .. (math.floor(n / 250) % 250) .. "." .. (n % 250 + 1)',
    ...(spec.uniqueHeader ? [`  wrk.headers[${luaString(spec.uniqueHeader)}] = "bench-${nonce}-" .. n`] : []),
    '  return wrk.format()',
    'end',
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format(\'BENCH_JSON {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"status":%d,"other":%d}\\n\',',
    '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout))',
    'end',
  ].join('\n');
  writeFileSync(join(dir, 'load.lua'), script);
  try {
    const args = ['-t1', `-c${spec.connections}`, `-d${spec.seconds}s`, '--timeout', '10s', '-s', join(dir, 'load.lua'), spec.url];
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}: ${text}`))));
    });
    const line = /BENCH_JSON (\{.*\})/.exec(out);
    if (!line) throw new Error(`wrk printed no result: ${out}`);
    const r = JSON.parse(line[1]!) as { requests: number; durationUs: number; p50Us: number; p99Us: number; status: number; other: number };
    const seconds = r.durationUs / 1e6;
    return {
      tool: 'wrk',
      requests: r.requests,
      seconds,
      rps: r.requests / seconds,
      p50Ms: r.p50Us / 1000,
      p99Ms: r.p99Us / 1000,
      non2xx: r.status,
      errors: r.other,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface AutocannonResult {
  requests: { total: number };
  duration: number;
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const autocannon = ((await import('autocannon' as string)) as { default: Autocannon }).default;
  let n = 0;
  const nonce = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  const result = await autocannon({
    url: spec.url,
    method: spec.method,
    headers: spec.headers,
    ...(spec.body === undefined ? {} : { body: spec.body }),
    connections: spec.connections,
    duration: spec.seconds,
    timeout: 10,
    requests: [
      {
        setupRequest: (request: { headers?: Record<string, string> }) => {
          n += 1;
          const headers: Record<string, string> = { ...spec.headers, ...request.headers, 'x-forwarded-for': forwardedFor(n) };
          if (spec.uniqueHeader) headers[spec.uniqueHeader] = `bench-${nonce}-${n}`;
          return { ...request, headers };
        },
      },
    ],
  });
  return {
    tool: 'autocannon',
    requests: result.requests.total,
    seconds: result.duration,
    rps: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}
