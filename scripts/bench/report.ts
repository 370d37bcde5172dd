/**
 * @module What the benchmark prints: the scenarios' table (ratio to bare Hono, or to Portkey for the
 * `openai-compatible` scenarios), the probes, the rows against Portkey, the many-long-streams runs,
 * the targets; and the smoke run's checks.
 */
import { type FairnessResult, fairnessTable } from './fairness.ts';
import { type GovernedResult, governedTable } from './governed.ts';
import type { StartupTimes } from './probes.ts';
import type { PeerRow, ScenarioResult, SlowStreamRun, Soak, StoreProbes, Target } from './results.ts';
import { fragmentSummary } from './slow-streams.ts';
import { fmt, median } from './stats.ts';

export interface Report {
  command: string;
  machine: Record<string, unknown>;
  results: ScenarioResult[];
  probes: StoreProbes[];
  engine: { p50Ms: number } | null;
  startup: StartupTimes | null;
  soak: Soak | null;
  peer: { portkey: string; rows: PeerRow[] };
  slowStreams: SlowStreamRun[];
  fairness: FairnessResult[];
  governed: GovernedResult[];
  targets: Target[];
}

export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 || i === 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  return [line(headers), `|${widths.map((w, i) => (i < 2 ? `${'-'.repeat(w + 1)}-` : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...rows.map(line)].join('\n');
}

export function report({ command, machine, results, probes, engine, startup, soak, peer, governed, slowStreams, fairness, targets }: Report): string {
  const out: string[] = [
    '',
    `Command: ${command}`,
    `Machine: ${Object.entries(machine)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    '',
  ];
  out.push(
    table(
      ['scenario', 'store', 'conns', 'requests/s', 'p50 ms', 'p99 ms', 'compared with req/s', 'ratio', '>=400 / errors'],
      [...new Set(results.map((r) => r.scenario))].flatMap((scenario) =>
        results
          .filter((r) => r.scenario === scenario)
          .map((r) => [
            r.scenario,
            r.store,
            String(r.connections),
            fmt(r.rps),
            fmt(r.p50Ms, 2),
            fmt(r.p99Ms, 2),
            r.baselineRps === null
              ? '-'
              : `${fmt(r.baselineRps)} (${r.baseline === 'Portkey' || r.baseline === 'one process' || r.baseline === 'traces off' ? r.baseline : `bare Hono ${r.baseline}`})`,
            r.ratio === null ? '-' : `${(r.ratio * 100).toFixed(1)}%`,
            `${r.non2xx} / ${r.errors}`,
          ]),
      ),
    ),
  );
  out.push('');
  if (probes.length > 0)
    out.push(
      table(
        ['probe', 'store', 'value'],
        probes.flatMap((p) => [
          ['sync invocation p50 at 1 connection', p.store, `${p.oneConnectionSyncP50Ms.toFixed(2)} ms`],
          ["local engine's own time, p50", p.store, `${p.engineP50Ms.toFixed(3)} ms`],
          ['overhead at 1 connection (p50 - engine)', p.store, `${p.overheadMs.toFixed(2)} ms`],
          ['first SSE byte p50 / p99', p.store, `${p.stream.firstByteP50Ms.toFixed(2)} / ${p.stream.firstByteP99Ms.toFixed(2)} ms (n=${p.stream.count})`],
          ['SSE event: end p50 / p99', p.store, `${p.stream.endP50Ms.toFixed(2)} / ${p.stream.endP99Ms.toFixed(2)} ms`],
          [
            'outbound deliveries (queued backlog)',
            p.store,
            `${fmt(p.deliveries.perSecond)}/s (${p.deliveries.delivered} in ${p.deliveries.seconds.toFixed(2)} s)`,
          ],
        ]),
      ),
    );
  if (engine && probes.length === 0) out.push(`local engine's own time p50: ${engine.p50Ms.toFixed(3)} ms`);
  if (startup) {
    out.push('');
    out.push(
      `Start-up to the first /healthz 200 (median of ${startup.compiledMs.length}): compiled build ${fmt(median(startup.compiledMs))} ms, tsx ${fmt(median(startup.tsxMs))} ms`,
    );
  }
  if (peer.rows.length > 0 || slowStreams.length > 0) out.push('', `Portkey: ${peer.portkey}`);
  if (peer.rows.length > 0) out.push('', peerTable(peer.rows));
  if (slowStreams.length > 0) out.push('', slowStreamTable(slowStreams));
  if (governed.length > 0) out.push('', governedTable(governed, table));
  if (fairness.length > 0) out.push('', fairnessTable(fairness, table));
  if (soak)
    out.push(`Soak: ${soak.minutes} min, RSS ${fmt(soak.rssAfterFirstMinute / 2 ** 20)} MiB after 1 min, ${fmt(soak.rssAtEnd / 2 ** 20)} MiB at the end`);
  out.push('');
  out.push(
    table(
      ['target', 'goal', 'measured', 'met'],
      targets.map((t) => [t.what, t.goal, t.measured, t.met === null ? '-' : t.met ? 'yes' : 'NO']),
    ),
  );
  out.push('');
  return out.join('\n');
}

const ms = (value: number | null, decimals = 2) => (value === null || !Number.isFinite(value) ? '-' : value.toFixed(decimals));
const ratio = (value: number | null, as: 'percent' | 'times') =>
  value === null || !Number.isFinite(value) ? '-' : as === 'percent' ? `${(value * 100).toFixed(1)}%` : `${value.toFixed(1)}x`;

/** Requests/s at full load and the p50 added over the upstream's at one connection, against Portkey's. */
function peerTable(rows: readonly PeerRow[]): string {
  return table(
    [
      'openai-compatible',
      'store',
      'conns',
      'req/s',
      'Portkey req/s',
      'upstream req/s',
      'vs Portkey',
      'CPU ms each (database)',
      "Portkey's CPU ms",
      'added p50 ms (1 conn)',
      "Portkey's added",
      'vs Portkey',
      'bare proxy req/s',
      'its CPU ms',
      'its added',
    ],
    rows.map((r) => [
      `${r.mode} invocation`,
      r.store,
      String(r.connections),
      fmt(r.serviceRps),
      fmt(r.portkeyRps ?? Number.NaN),
      fmt(r.upstreamRps ?? Number.NaN),
      ratio(r.throughputRatio, 'percent'),
      r.serviceDatabaseCpuMs === null ? ms(r.serviceCpuMs) : `${ms(r.serviceCpuMs)} (${ms(r.serviceDatabaseCpuMs)})`,
      ms(r.portkeyCpuMs),
      ms(r.serviceAddedMs),
      ms(r.portkeyAddedMs),
      ratio(r.latencyRatio, 'times'),
      fmt(r.bareRps ?? Number.NaN),
      ms(r.bareCpuMs),
      ms(r.bareAddedMs),
    ]),
  );
}

const mib = (bytes: number | null, decimals = 0) => (bytes === null ? '-' : fmt(bytes / 2 ** 20, decimals));

/** The many-long-streams runs: first fragment (and its addition over the upstream's), fragments, memory and CPU. */
function slowStreamTable(runs: readonly SlowStreamRun[]): string {
  return table(
    [
      'slow streams via',
      'store',
      'streams (max open)',
      'first fragment p50 / p99 ms',
      'added p50 / p99 ms',
      'fragments',
      'RSS before / peak MiB',
      'RSS per stream KiB',
      'CPU (cores)',
    ],
    runs.map((r) => [
      r.path,
      r.store ?? '-',
      `${fmt(r.streams)} (${fmt(r.maxOpen)})`,
      `${ms(r.firstFragmentP50Ms, 1)} / ${ms(r.firstFragmentP99Ms, 1)}`,
      `${ms(r.addedFirstFragmentP50Ms, 1)} / ${ms(r.addedFirstFragmentP99Ms, 1)}`,
      fragmentSummary(r),
      `${mib(r.rssBeforeBytes)} / ${mib(r.rssPeakBytes)}`,
      r.rssPerStreamBytes === null ? '-' : fmt(r.rssPerStreamBytes / 1024, 1),
      r.cpuCores === null ? '-' : `${r.cpuCores.toFixed(2)} (bench ${r.clientCpuCores.toFixed(2)})`,
    ]),
  );
}

/** The smoke run's checks: every scenario and probe answered, without refusals or errors. */
export function smokeVerdict(
  results: ScenarioResult[],
  probes: StoreProbes[],
  startup: StartupTimes | null,
  panelPages: { store: string; status: number; type: string }[],
  slowStreams: SlowStreamRun[],
  portkeyMissing: string | null,
  coreRan: boolean,
  fairness: FairnessResult[] = [],
): number {
  const checks: [string, boolean][] = [];
  for (const r of results) checks.push([`${r.store}: ${r.scenario} answered 2xx`, r.rounds.every((x) => x.requests > 0) && r.non2xx === 0 && r.errors === 0]);
  for (const p of probes) {
    checks.push([`${p.store}: streams reached event: end`, p.stream.non2xx === 0 && Number.isFinite(p.stream.endP50Ms)]);
    checks.push([`${p.store}: the queued pings were delivered`, p.deliveries.delivered > 0 && Number.isFinite(p.deliveries.perSecond)]);
  }
  for (const r of results) {
    if (r.baseline === 'Portkey' || r.baseline === 'one process' || r.baseline === 'traces off')
      checks.push([
        `${r.store}: ${r.baseline} answered 2xx next to ${r.scenario}`,
        r.baselineRounds.every((x) => x.requests > 0 && x.non2xx === 0 && x.errors === 0),
      ]);
    if (r.upstream)
      checks.push([
        `${r.store}: the upstream answered 2xx next to ${r.scenario}`,
        r.upstream.rounds.every((x) => x.requests > 0) && r.upstream.non2xx + r.upstream.errors === 0,
      ]);
    if (r.bare)
      checks.push([
        `${r.store}: the bare proxy answered 2xx next to ${r.scenario}`,
        r.bare.rounds.every((x) => x.requests > 0) && r.bare.non2xx + r.bare.errors === 0,
      ]);
  }
  for (const s of slowStreams)
    checks.push([
      `${s.store ?? '-'}: ${s.streams} slow streams via ${s.path} got every fragment in order`,
      s.complete === s.streams && s.lost === 0 && s.undelivered === 0 && s.outOfOrder === 0,
    ]);
  for (const f of fairness) {
    checks.push([`${f.store}: fairness: the flooding workspace was answered`, f.flood.load.requests > 0]);
    checks.push([
      `${f.store}: fairness: workspace B kept 99 % success while A flooded (${f.flooded.ok}/${f.flooded.sent}; alone ${f.alone.ok}/${f.alone.sent})`,
      f.alone.successRate >= 0.99 && f.flooded.successRate >= 0.99,
    ]);
    const { flooded, slowReceivers } = f.deliveries;
    checks.push([`${f.store}: fairness: A's slow receivers got deliveries (${slowReceivers.received})`, slowReceivers.received > 0]);
    checks.push([
      `${f.store}: fairness: every delivery of workspace B arrived while A's receivers were slow (${flooded.received}/${flooded.sent})`,
      flooded.sent > 0 && flooded.received === flooded.sent,
    ]);
  }
  if (coreRan) checks.push(['the compiled build started and answered /healthz', startup?.compiledMs.every(Number.isFinite) === true]);
  for (const p of panelPages) checks.push([`${p.store}: the compiled build served the panel at /panel`, p.status === 200 && p.type.startsWith('text/html')]);
  // Portkey is the peer, not the product: when it cannot be installed or started its rows are left out, not failed.
  if (portkeyMissing) process.stdout.write(`skip Portkey's rows: ${portkeyMissing}\n`);
  const failed = checks.filter(([, ok]) => !ok);
  for (const [what, ok] of checks) process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}\n`);
  process.stdout.write(`bench smoke: ${checks.length - failed.length} passed, ${failed.length} failed\n`);
  return failed.length === 0 ? 0 : 1;
}
