/**
 * @module The service against the gateway users would pick instead: the
 * requests that go to the loopback model server directly, through Portkey, and through this
 * service's `openai-compatible` engine (alias Symphony on the instant model, Sonata on the slow
 * one), the rows compared with Portkey, and the many-long-streams runs on each path.
 */
import { type LoadSpec, runLoad } from './load.ts';
import { portkeyHeaders } from './portkey.ts';
import { INVOCATION } from './probes.ts';
import { freshWorkspace, type Listening, REMOTE_ALIASES, type ServiceUnderTest, type StoreKind } from './processes.ts';
import type { PeerRow, ScenarioResult, SlowStreamRun } from './results.ts';
import type { Side } from './rounds.ts';
import { type SlowStreamResult, slowStreams } from './slow-streams.ts';

export type Mode = 'sync' | 'streamed';
export const PEER_SCENARIO = (mode: Mode) => `${mode} invocation, openai-compatible`;
export const PEER_SCENARIO_ONE = (mode: Mode) => `${PEER_SCENARIO(mode)}, 1 connection`;

const chatBody = (model: string, stream: boolean) =>
  JSON.stringify({ model, messages: INVOCATION.messages, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });

/** The side that forwards the call with nothing else done (baseline-server.ts's bare proxy). */
export const BARE_PROXY = 'bare proxy';

/**
 * The same Chat Completions request to the upstream directly, through Portkey (when it runs), and through the bare
 * proxy (when given).
 */
export function peerSides(mode: Mode, upstream: Listening, portkey: Listening | null, connections: number, seconds: number, bare?: Listening): Side[] {
  const body = chatBody('bench-instant', mode === 'streamed');
  const json = { 'content-type': 'application/json' };
  const load = (url: string, headers: Record<string, string>): LoadSpec => ({ url, method: 'POST', headers, body, connections, seconds });
  const sides: Side[] = [];
  if (portkey)
    sides.push({
      label: 'Portkey',
      spec: load(`${portkey.url}/v1/chat/completions`, { ...json, ...portkeyHeaders(`${upstream.url}/v1`) }),
      cpuSeconds: () => portkey.cpuSeconds(),
    });
  if (bare) sides.push({ label: BARE_PROXY, spec: load(`${bare.url}/v1/chat/completions`, json), cpuSeconds: () => bare.cpuSeconds() });
  sides.push({ label: 'upstream', spec: load(`${upstream.url}/v1/chat/completions`, { ...json, authorization: 'Bearer bench' }) });
  return sides;
}

/** The service's invocation on the instant model (`openai-compatible` engine). */
export function serviceInvocation(mode: Mode) {
  return { ...INVOCATION, alias: REMOTE_ALIASES.instant, ...(mode === 'streamed' ? { stream: true } : {}) };
}

/** The rows against Portkey, from the scenarios at full load and at one connection. */
export function peerRows(results: readonly ScenarioResult[]): PeerRow[] {
  const rows: PeerRow[] = [];
  for (const store of [...new Set(results.map((r) => r.store))])
    for (const mode of ['sync', 'streamed'] as const) {
      const full = results.find((r) => r.store === store && r.scenario === PEER_SCENARIO(mode));
      const one = results.find((r) => r.store === store && r.scenario === PEER_SCENARIO_ONE(mode));
      if (!full || !one) continue;
      const upstreamP50Ms = one.upstream?.p50Ms ?? null;
      const added = (p50: number | null) => (p50 === null || upstreamP50Ms === null ? null : p50 - upstreamP50Ms);
      const serviceAddedMs = added(one.p50Ms);
      const portkeyAddedMs = added(one.baselineP50Ms);
      rows.push({
        store,
        mode,
        connections: full.connections,
        serviceRps: full.rps,
        portkeyRps: full.baselineRps,
        upstreamRps: full.upstream?.rps ?? null,
        throughputRatio: full.ratio,
        upstreamP50Ms,
        serviceP50Ms: one.p50Ms,
        portkeyP50Ms: one.baselineP50Ms,
        serviceAddedMs,
        portkeyAddedMs,
        latencyRatio: serviceAddedMs === null || portkeyAddedMs === null || portkeyAddedMs <= 0 ? null : serviceAddedMs / portkeyAddedMs,
        serviceCpuMs: full.cpuMsPerRequest ?? null,
        serviceDatabaseCpuMs: full.databaseCpuMsPerRequest ?? null,
        serviceDatabaseWrites: full.databaseWritesPerRequest ?? null,
        portkeyCpuMs: full.baselineCpuMsPerRequest ?? null,
        bareRps: full.bare?.rps ?? null,
        bareCpuMs: full.bare?.cpuMsPerRequest ?? null,
        bareAddedMs: added(one.bare?.p50Ms ?? null),
      });
    }
  return rows;
}

export interface SlowStreamOptions {
  count: number;
  rampSeconds: number;
  /** The slow model's own length (first fragment delay plus its stream), for the limit. */
  streamSeconds: number;
  /** Fragments in each slow stream. */
  fragments: number;
}

const limitMs = (o: SlowStreamOptions) => (o.rampSeconds + o.streamSeconds) * 1000 + 60_000;

/** One second of instant streamed requests, so that a path's first slow streams do not pay for its cold start. */
const warmUp = (spec: Omit<LoadSpec, 'connections' | 'seconds' | 'method'>) => runLoad({ ...spec, method: 'POST', connections: 8, seconds: 1 });

/** The many long streams straight to the upstream, and through Portkey (after a warm-up); `added*` filled in by `withAdded`. */
export async function slowStreamsOutside(upstream: Listening, portkey: Listening | null, o: SlowStreamOptions): Promise<SlowStreamResult[]> {
  const body = chatBody('bench-slow', true);
  const common = { body, count: o.count, rampSeconds: o.rampSeconds, upstream, limitMs: limitMs(o) };
  const runs = [await slowStreams({ ...common, path: 'upstream', url: `${upstream.url}/v1/chat/completions`, headers: {}, server: upstream })];
  if (portkey) {
    const url = `${portkey.url}/v1/chat/completions`;
    const headers = portkeyHeaders(`${upstream.url}/v1`);
    await warmUp({ url, headers: { ...headers, 'content-type': 'application/json' }, body: chatBody('bench-instant', true) });
    runs.push(await slowStreams({ ...common, path: 'Portkey', url, headers, server: portkey }));
  }
  return runs;
}

/**
 * The many long streams through the service (alias Sonata on the slow model), after a warm-up, in a workspace of their
 * own: the service's first workspace has spent much of its hour (the spec's kill switch) in the scenarios before, and
 * the streams' reservations must fit in what is left. Its `maxTokens` is what the stream needs (each fragment
 * ` tok<i>.` counts 3 tokens) plus a third: the default (4,096) would make each run reserve more of the hour window
 * than 1,000 of them can share.
 */
export async function slowStreamsThrough(service: ServiceUnderTest, upstream: Listening, o: SlowStreamOptions): Promise<SlowStreamResult> {
  const key = freshWorkspace(service, `slow-streams-${service.store}`, 1_000_000);
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  await warmUp({ url: `${service.url}/v1/inference`, headers, body: JSON.stringify(serviceInvocation('streamed')) });
  return slowStreams({
    path: 'service',
    url: `${service.url}/v1/inference`,
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify({ ...INVOCATION, alias: REMOTE_ALIASES.slow, stream: true, maxTokens: Math.ceil(o.fragments * 4) }),
    count: o.count,
    rampSeconds: o.rampSeconds,
    server: service,
    upstream,
    limitMs: limitMs(o),
  });
}

/** Each run's first-fragment times over the upstream's own in the same run. */
export function withAdded(run: SlowStreamResult, store: StoreKind | null, direct: SlowStreamResult | undefined): SlowStreamRun {
  return {
    ...run,
    store,
    addedFirstFragmentP50Ms: direct && run.path !== 'upstream' ? run.firstFragmentP50Ms - direct.firstFragmentP50Ms : null,
    addedFirstFragmentP99Ms: direct && run.path !== 'upstream' ? run.firstFragmentP99Ms - direct.firstFragmentP99Ms : null,
  };
}
