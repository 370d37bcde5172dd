/**
 * @module The `governed` scenario of `pnpm bench`: what the service serves with its governance on, beside Portkey's
 * gateway (which governs nothing), at a latency bound. Sync invocations through the `openai-compatible` engine (alias
 * Symphony on the upstream's instant model) from a workspace of its own per round, as a customer's would run:
 * the enterprise plan's own quota (a hard stop, not raised), the spec's kill switches (run, hour and day), the
 * workspace's request ceiling and the per-address limit checked on every request (the ceiling raised, a new
 * forwarded address per request), every run reserved, persisted and charged before it answers, and its text through
 * the redactor. Portkey and the upstream directly get the same Chat Completions request in the same rounds.
 *
 * Each side runs at every level of `--governed-levels` connections (interleaved rounds at each level); the figure of
 * the scenario is each side's highest requests/s among the levels whose p99 stayed within `--governed-p99` ms, and
 * the service's as a ratio of Portkey's.
 */
import { runLoad } from './load.ts';
import { type Mode, peerSides, serviceInvocation } from './peer.ts';
import { freshWorkspace, type Listening, type ServiceUnderTest, type StoreKind } from './processes.ts';
import type { ScenarioResult } from './results.ts';
import type { Side } from './rounds.ts';
import { fmt, median } from './stats.ts';

export const GOVERNED_SCENARIO = 'governed sync invocation, openai-compatible';

/** A side's best level: the highest requests/s whose p99 stayed within the bound. */
export interface GovernedBest {
  rps: number;
  p99Ms: number;
  connections: number;
}

export interface GovernedResult {
  store: StoreKind;
  p99BoundMs: number;
  levels: { connections: number; refused: number; serviceRps: number; serviceP99Ms: number; portkeyRps: number | null; portkeyP99Ms: number | null }[];
  service: GovernedBest | null;
  portkey: GovernedBest | null;
  /** The service's best requests/s over Portkey's (null without Portkey or when a side met the bound at no level). */
  ratio: number | null;
}

/** Measures one level: the service's side against the others (index.ts `measure`, bound to a store and options). */
export type MeasureLevel = (
  scenario: string,
  spec: { path: string; method: 'POST'; headers: Record<string, string>; body: string },
  compared: Side[],
  connections: number,
  forRound: NonNullable<Side['forRound']>,
) => Promise<ScenarioResult>;

export interface GovernedOptions {
  levels: number[];
  p99BoundMs: number;
  seconds: number;
  /** Seconds of unmeasured load on each side first (a workspace of its own on the service). */
  warmSeconds: number;
}

/** The scenario on one store: a result row per level (for the main table and the smoke checks) and the summary. */
export async function measureGoverned(
  store: StoreKind,
  service: ServiceUnderTest,
  upstream: Listening,
  portkey: Listening | null,
  o: GovernedOptions,
  measure: MeasureLevel,
): Promise<{ rows: ScenarioResult[]; result: GovernedResult }> {
  const mode: Mode = 'sync';
  const rows: ScenarioResult[] = [];
  const invocation = (key: string) => ({
    path: '/v1/inference',
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(serviceInvocation(mode)),
  });
  const warm = invocation(freshWorkspace(service, `governed-warm-${store}`, 1_000_000, 'plan'));
  await runLoad({ ...warm, url: `${service.url}${warm.path}`, connections: 8, seconds: o.warmSeconds });
  for (const side of peerSides(mode, upstream, portkey, 8, o.warmSeconds)) await runLoad(side.spec);
  for (const connections of o.levels) {
    // A workspace per round: the spec's hour kill switch (10,000,000 STU) holds some 27,000 of these invocations, which
    // a round at 64 connections can reach with the rounds before it.
    const forRound = (round: number) => ({
      headers: invocation(freshWorkspace(service, `governed-${connections}-${store}-${round}`, 1_000_000, 'plan')).headers,
    });
    rows.push(await measure(GOVERNED_SCENARIO, invocation(''), peerSides(mode, upstream, portkey, connections, o.seconds), connections, forRound));
  }
  const levels = rows.map((r) => ({
    connections: r.connections,
    // A level whose answers were not all 2xx measured refusals, not service: never the best.
    refused: r.non2xx + r.errors,
    serviceRps: r.rps,
    serviceP99Ms: r.p99Ms,
    portkeyRps: r.baseline === 'Portkey' ? r.baselineRps : null,
    portkeyP99Ms: r.baseline === 'Portkey' ? median(r.baselineRounds.map((x) => x.p99Ms)) : null,
  }));
  const best = (pick: (l: (typeof levels)[number]) => { rps: number | null; p99Ms: number | null }): GovernedBest | null => {
    let found: GovernedBest | null = null;
    for (const level of levels) {
      const { rps, p99Ms } = pick(level);
      if (rps === null || p99Ms === null || p99Ms > o.p99BoundMs) continue;
      if (found === null || rps > found.rps) found = { rps, p99Ms, connections: level.connections };
    }
    return found;
  };
  const serviceBest = best((l) => (l.refused > 0 ? { rps: null, p99Ms: null } : { rps: l.serviceRps, p99Ms: l.serviceP99Ms }));
  const portkeyBest = portkey ? best((l) => ({ rps: l.portkeyRps, p99Ms: l.portkeyP99Ms })) : null;
  return {
    rows,
    result: {
      store,
      p99BoundMs: o.p99BoundMs,
      levels,
      service: serviceBest,
      portkey: portkeyBest,
      ratio: serviceBest && portkeyBest ? serviceBest.rps / portkeyBest.rps : null,
    },
  };
}

/** The summary table: each level's figures, and each side's best within the bound. */
export function governedTable(results: readonly GovernedResult[], table: (headers: string[], rows: string[][]) => string): string {
  const best = (b: GovernedBest | null) => (b === null ? 'none within the bound' : `${fmt(b.rps)} at ${b.connections} conns (p99 ${fmt(b.p99Ms, 1)} ms)`);
  return table(
    ['governed sync invocation', 'store', 'conns', 'req/s', 'p99 ms', 'Portkey req/s', 'Portkey p99 ms'],
    results.flatMap((r) => [
      ...r.levels.map((l) => [
        'level',
        r.store,
        String(l.connections),
        l.refused > 0 ? `${fmt(l.serviceRps)} (${fmt(l.refused)} >= 400)` : fmt(l.serviceRps),
        fmt(l.serviceP99Ms, 1),
        l.portkeyRps === null ? '-' : fmt(l.portkeyRps),
        l.portkeyP99Ms === null ? '-' : fmt(l.portkeyP99Ms, 1),
      ]),
      [
        `best with p99 <= ${fmt(r.p99BoundMs)} ms`,
        r.store,
        '-',
        best(r.service),
        '-',
        best(r.portkey),
        r.ratio === null ? '-' : `service ${(r.ratio * 100).toFixed(1)}% of Portkey`,
      ],
    ]),
  );
}
