/**
 * @module The realistic load: many long streams at once. `count` streamed requests for the loopback
 * model server's slow model (first fragment after 300 ms, then 40 a second for 10 s, by default),
 * started evenly over `rampSeconds` so that all of them are open together, against one path: the
 * upstream directly, Portkey, or the service's `openai-compatible` engine. Per stream: the time to
 * the first answer fragment, and which fragments arrived (each is ` tok<i>.`, counted against what
 * the upstream sent; one that comes after a later one, or twice, is out of order). For the process behind the path: RSS before and at its peak
 * (per open stream), and CPU time over the run, from /proc.
 */
import { Agent, request } from 'node:http';
import type { Listening } from './processes.ts';
import { percentile } from './stats.ts';

export interface SlowStreamSpec {
  /** `upstream`, `Portkey`, or `service`. */
  path: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  count: number;
  rampSeconds: number;
  /** The process whose RSS and CPU are read (the service, Portkey, or the upstream itself). */
  server: Listening;
  /** The upstream, for its counts of what it sent. */
  upstream: Listening;
  /** Give up on streams still open this long after the last one started. */
  limitMs: number;
}

export interface SlowStreamResult {
  path: string;
  streams: number;
  /** Streams that answered 200, ended normally and got every fragment in order. */
  complete: number;
  /** The others: the sum of the four below. */
  failed: number;
  /** No answer at all (not even headers) before the limit, or a connection error. */
  unanswered: number;
  /** Answered with another status than 200; how many of each. */
  refused: number;
  refusedStatuses: Record<string, number>;
  /** The start of the first refusal's body (the error code). */
  refusalSample: string | null;
  /** Answered 200 but ended without its closing event (`event: end` or `[DONE]`): cut, `event: error`, or still open at the limit. */
  cut: number;
  /** Ended normally but short of fragments, or with some out of order. */
  short: number;
  /** Streams still open at the limit, closed by the benchmark (counted among the unanswered or cut). */
  closedAtLimit: number;
  maxOpen: number;
  firstFragmentP50Ms: number;
  firstFragmentP99Ms: number;
  fragmentsPerStream: number;
  /** Fragments the upstream sent during the run, and the distinct ones the clients received. */
  upstreamSent: number;
  received: number;
  /** Fragments missing from streams that ended normally: lost without the client being told. */
  lost: number;
  /** All the fragments the streams should have had (`fragmentsPerStream` each) and did not get, incomplete streams included. */
  undelivered: number;
  /** Fragments that came after a later one, or twice. */
  outOfOrder: number;
  rssBeforeBytes: number | null;
  rssPeakBytes: number | null;
  rssPerStreamBytes: number | null;
  cpuSeconds: number | null;
  /** CPU time over the run's wall time: 1 = one core busy. */
  cpuCores: number | null;
  /** The benchmark's own CPU over the same time (the clients), for judging whether the load generator kept up. */
  clientCpuCores: number;
  wallSeconds: number;
}

interface UpstreamStats {
  slowFragments: number;
  slowTokensPerStream: number;
}

async function upstreamStats(upstream: Listening): Promise<UpstreamStats> {
  const res = await fetch(`${upstream.url}/stats`);
  return (await res.json()) as UpstreamStats;
}

const MARKS = /tok(\d+)\.|event: (end|error)|data: \[DONE\]/g;

interface Stream {
  started: number;
  firstFragmentMs: number;
  status: number;
  /** The highest fragment number received, and how many distinct fragments came in rising order. */
  last: number;
  seen: number;
  /** Fragments that came after a higher one (late or repeated). */
  outOfOrder: number;
  ended: 'end' | 'error' | 'done' | null;
  closed: boolean;
  closedAtLimit: boolean;
  /** The start of a refusal's body. */
  refusal: string;
}

function openStream(
  spec: SlowStreamSpec,
  agent: Agent,
  i: number,
  opened: () => void,
  closed: () => void,
): { state: Stream; done: Promise<void>; abort(): void } {
  const state: Stream = {
    started: performance.now(),
    firstFragmentMs: Number.NaN,
    status: 0,
    last: 0,
    seen: 0,
    outOfOrder: 0,
    ended: null,
    closed: false,
    closedAtLimit: false,
    refusal: '',
  };
  let carry = '';
  const req = request(spec.url, {
    method: 'POST',
    agent,
    headers: {
      ...spec.headers,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(spec.body),
      'x-forwarded-for': `10.254.${Math.floor(i / 250) % 250}.${(i % 250) + 1}`,
    },
  });
  const done = new Promise<void>((resolve) => {
    const finish = () => {
      if (!state.closed) {
        state.closed = true;
        closed();
      }
      resolve();
    };
    req.on('response', (res) => {
      state.status = res.statusCode ?? 0;
      opened();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (state.status !== 200 && state.refusal.length < 300) state.refusal += chunk.slice(0, 300 - state.refusal.length);
        const text = carry + chunk;
        let lastEnd = 0;
        for (const match of text.matchAll(MARKS)) {
          lastEnd = match.index + match[0].length;
          if (match[1] !== undefined) {
            if (Number.isNaN(state.firstFragmentMs)) state.firstFragmentMs = performance.now() - state.started;
            const index = Number(match[1]);
            if (index > state.last) {
              state.last = index;
              state.seen += 1;
            } else state.outOfOrder += 1;
          } else state.ended = match[2] === 'error' ? 'error' : match[2] === 'end' ? 'end' : 'done';
        }
        carry = text.slice(Math.max(lastEnd, text.length - 24));
      });
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
    });
    req.on('error', finish);
  });
  req.end(spec.body);
  return {
    state,
    done,
    abort: () => {
      state.closedAtLimit = true;
      req.destroy();
    },
  };
}

export async function slowStreams(spec: SlowStreamSpec): Promise<SlowStreamResult> {
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const before = await upstreamStats(spec.upstream);
  const rssBefore = spec.server.rss() ?? null;
  let rssPeak = rssBefore;
  const cpuBefore = spec.server.cpuSeconds();
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  let open = 0;
  let maxOpen = 0;
  const sampler = setInterval(() => {
    const rss = spec.server.rss();
    if (rss !== undefined && (rssPeak === null || rss > rssPeak)) rssPeak = rss;
  }, 200);
  const streams: ReturnType<typeof openStream>[] = [];
  try {
    for (let i = 0; i < spec.count; i += 1) {
      const due = started + (spec.count > 1 ? (i * spec.rampSeconds * 1000) / (spec.count - 1) : 0);
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      streams.push(
        openStream(
          spec,
          agent,
          i,
          () => (maxOpen = Math.max(maxOpen, (open += 1))),
          () => (open -= 1),
        ),
      );
    }
    const limit = new Promise<'limit'>((r) => setTimeout(() => r('limit'), spec.limitMs).unref());
    if ((await Promise.race([Promise.all(streams.map((s) => s.done)), limit])) === 'limit') for (const s of streams) if (!s.state.closed) s.abort();
    await Promise.all(streams.map((s) => s.done));
  } finally {
    clearInterval(sampler);
    agent.destroy();
  }
  const wallSeconds = (performance.now() - started) / 1000;
  const cpuAfter = spec.server.cpuSeconds();
  const client = process.cpuUsage(clientBefore);
  const after = await upstreamStats(spec.upstream);
  const perStream = after.slowTokensPerStream;
  const states = streams.map((s) => s.state);
  const endedNormally = (s: Stream) => s.status === 200 && (s.ended === 'end' || s.ended === 'done');
  const ok = (s: Stream) => endedNormally(s) && s.seen === perStream && s.outOfOrder === 0;
  const count = (test: (s: Stream) => boolean) => states.filter(test).length;
  const received = states.reduce((n, s) => n + s.seen, 0);
  const cpuSeconds = cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : null;
  return {
    path: spec.path,
    streams: spec.count,
    complete: count(ok),
    failed: count((s) => !ok(s)),
    unanswered: count((s) => s.status === 0),
    refused: count((s) => s.status !== 0 && s.status !== 200),
    refusedStatuses: states
      .filter((s) => s.status !== 0 && s.status !== 200)
      .reduce<Record<string, number>>((n, s) => {
        n[s.status] = (n[s.status] ?? 0) + 1;
        return n;
      }, {}),
    cut: count((s) => s.status === 200 && !endedNormally(s)),
    short: count((s) => endedNormally(s) && !ok(s)),
    closedAtLimit: count((s) => s.closedAtLimit),
    refusalSample: states.find((s) => s.status !== 0 && s.status !== 200)?.refusal ?? null,
    maxOpen,
    firstFragmentP50Ms: percentile(states.map((s) => s.firstFragmentMs).filter(Number.isFinite), 0.5),
    firstFragmentP99Ms: percentile(states.map((s) => s.firstFragmentMs).filter(Number.isFinite), 0.99),
    fragmentsPerStream: perStream,
    upstreamSent: after.slowFragments - before.slowFragments,
    received,
    lost: states.filter(endedNormally).reduce((n, s) => n + perStream - s.seen, 0),
    undelivered: spec.count * perStream - received,
    outOfOrder: states.reduce((n, s) => n + s.outOfOrder, 0),
    rssBeforeBytes: rssBefore,
    rssPeakBytes: rssPeak,
    rssPerStreamBytes: rssBefore !== null && rssPeak !== null && maxOpen > 0 ? (rssPeak - rssBefore) / maxOpen : null,
    cpuSeconds,
    cpuCores: cpuSeconds === null ? null : cpuSeconds / wallSeconds,
    clientCpuCores: (client.user + client.system) / 1e6 / wallSeconds,
    wallSeconds,
  };
}

/** `0 of 400,000 lost in finished streams`, then the streams that did not finish and why: `; 310 streams incomplete (120 unanswered, 190 cut; 310 closed at the limit), 88,205 not delivered`. */
export function fragmentSummary(run: SlowStreamResult): string {
  const total = (run.streams * run.fragmentsPerStream).toLocaleString('en-US');
  const lost = `${run.lost.toLocaleString('en-US')} of ${total} lost in finished streams`;
  if (run.failed === 0) return lost;
  const why = (
    [
      [run.unanswered, 'unanswered'],
      [
        run.refused,
        `refused (${Object.entries(run.refusedStatuses)
          .map(([status, n]) => `${n}× ${status}`)
          .join(', ')})`,
      ],
      [run.cut, 'cut'],
      [run.short, 'short'],
    ] as const
  )
    .filter(([n]) => n > 0)
    .map(([n, what]) => `${n} ${what}`)
    .join(', ');
  const limit = run.closedAtLimit > 0 ? `; ${run.closedAtLimit} closed at the limit` : '';
  return `${lost}; ${run.failed} streams incomplete (${why}${limit}), ${run.undelivered.toLocaleString('en-US')} not delivered`;
}
