/**
 * @module The targets the benchmark judges, met or missed: the gateway's cost against bare Hono
 * (`evaluate`), and those against Portkey and for many long streams (`peerTargets`).
 */
import type { StoreKind } from './processes.ts';
import type { PeerRow, ScenarioResult, SlowStreamRun, Soak, StoreProbes, Target } from './results.ts';
import { fragmentSummary } from './slow-streams.ts';
import { fmt } from './stats.ts';

const where = (store: StoreKind) => (store === 'embedded' ? 'embedded store' : 'PostgreSQL + Redis');

export function evaluate(results: ScenarioResult[], probes: StoreProbes[], soak: Soak | null): Target[] {
  const find = (store: StoreKind, scenario: string) => results.find((r) => r.store === store && r.scenario === scenario);
  // A row that answered >= 400 or failed measured its refusals, not its requests: its targets are not judged.
  const refusedNote = (r: ScenarioResult | undefined) =>
    r && r.non2xx + r.errors > 0 ? `not judged: ${fmt(r.non2xx)} answers >= 400, ${fmt(r.errors)} errors` : null;
  const ratioTarget = (store: StoreKind, scenario: string, goal: number): Target => {
    const r = find(store, scenario);
    const what = `${scenario}, ${where(store)}`;
    const goalText = `>= ${goal * 100}% of bare Hono ${r?.baseline ?? ''}`.trim();
    const refused = refusedNote(r);
    if (refused) return { what, goal: goalText, measured: refused, met: null };
    return {
      what,
      goal: goalText,
      measured: r?.ratio == null ? 'not measured' : `${(r.ratio * 100).toFixed(1)}%`,
      met: r?.ratio == null ? null : r.ratio >= goal,
    };
  };
  const targets: Target[] = [ratioTarget('embedded', 'authenticated read', 0.4), ratioTarget('postgres', 'authenticated read', 0.25)];
  targets.push(ratioTarget('embedded', 'sync invocation', 0.1), ratioTarget('postgres', 'sync invocation', 0.1));
  for (const p of probes) {
    const refused = refusedNote(find(p.store, 'sync invocation, 1 connection'));
    targets.push({
      what: `overhead at one connection, ${where(p.store)}`,
      goal: '< 2 ms',
      measured: refused ?? `${p.overheadMs.toFixed(2)} ms`,
      met: refused ? null : p.overheadMs < 2,
    });
    targets.push({
      what: `first SSE byte p50, ${where(p.store)}`,
      goal: '< 5 ms',
      measured: `${p.stream.firstByteP50Ms.toFixed(2)} ms`,
      met: p.stream.firstByteP50Ms < 5,
    });
    targets.push({
      what: `outbound deliveries, ${where(p.store)}`,
      goal: '>= 1,000/s',
      measured: `${fmt(p.deliveries.perSecond)}/s`,
      met: p.deliveries.perSecond >= 1000,
    });
  }
  const inbound = find('postgres', 'inbound signed events');
  targets.push({
    what: 'inbound signed events, PostgreSQL + Redis',
    goal: '>= 2,000/s',
    measured: inbound ? `${fmt(inbound.rps)}/s` : 'not measured',
    met: inbound ? inbound.rps >= 2000 : null,
  });
  targets.push({
    what: 'RSS after the soak vs after its first minute',
    goal: 'within 10%',
    measured: soak
      ? `${(soak.growth * 100).toFixed(1)}% (${fmt(soak.rssAfterFirstMinute / 2 ** 20)} -> ${fmt(soak.rssAtEnd / 2 ** 20)} MiB)`
      : 'not measured (--soak)',
    met: soak ? Math.abs(soak.growth) <= 0.1 : null,
  });
  return targets;
}

/** Throughput at least this share of Portkey's: PostgreSQL + Redis, embedded. */
const PORTKEY_SHARE: Readonly<Record<StoreKind, number>> = { postgres: 0.6, embedded: 0.5 };
/** PostgreSQL's CPU per invocation, at most. */
const DATABASE_CPU_MS = 0.3;
const ADDED_LATENCY_MS = 3;
const SLOW_ADDED_P99_MS = 20;

export function peerTargets(rows: readonly PeerRow[], slow: readonly SlowStreamRun[], portkeyMissing: string | null): Target[] {
  const targets: Target[] = [];
  for (const row of rows) {
    const goal = PORTKEY_SHARE[row.store];
    targets.push({
      what: `${row.mode} invocation via openai-compatible, ${where(row.store)}, vs Portkey`,
      goal: `>= ${goal * 100}% of Portkey's requests/s`,
      measured:
        row.throughputRatio === null
          ? `not measured (${portkeyMissing ?? 'no Portkey figure'})`
          : `${(row.throughputRatio * 100).toFixed(1)}% (${fmt(row.serviceRps)} vs ${fmt(row.portkeyRps ?? Number.NaN)}/s)`,
      met: row.throughputRatio === null ? null : row.throughputRatio >= goal,
    });
    targets.push({
      what: `${row.mode} invocation via openai-compatible, ${where(row.store)}: added p50 at 1 connection`,
      goal: `<= ${ADDED_LATENCY_MS} ms over the upstream's`,
      measured:
        row.serviceAddedMs === null
          ? 'not measured'
          : `${row.serviceAddedMs.toFixed(2)} ms` +
            (row.portkeyAddedMs === null
              ? ''
              : ` (Portkey ${row.portkeyAddedMs.toFixed(2)} ms${row.latencyRatio === null ? '' : `, ${row.latencyRatio.toFixed(1)}x`})`),
      met: row.serviceAddedMs === null ? null : row.serviceAddedMs <= ADDED_LATENCY_MS,
    });
    if (row.store === 'postgres')
      targets.push({
        what: `${row.mode} invocation via openai-compatible, ${where(row.store)}: PostgreSQL's CPU per invocation`,
        goal: `<= ${DATABASE_CPU_MS} ms`,
        measured:
          row.serviceDatabaseCpuMs === null
            ? 'not measured (/proc)'
            : `${row.serviceDatabaseCpuMs.toFixed(2)} ms (the service's processes and PostgreSQL's ${row.serviceCpuMs?.toFixed(2) ?? '-'} ms, Portkey ${row.portkeyCpuMs?.toFixed(2) ?? '-'} ms` +
              (row.serviceDatabaseWrites === null ? ')' : `; ${row.serviceDatabaseWrites.toFixed(2)} write transactions each)`),
        met: row.serviceDatabaseCpuMs === null ? null : row.serviceDatabaseCpuMs <= DATABASE_CPU_MS,
      });
  }
  for (const run of slow) {
    if (run.store === null) continue;
    targets.push({
      what: `${fmt(run.streams)} concurrent slow streams, ${where(run.store)}: added first-fragment p99`,
      goal: `< ${SLOW_ADDED_P99_MS} ms`,
      measured: run.addedFirstFragmentP99Ms === null ? 'not measured' : `${run.addedFirstFragmentP99Ms.toFixed(1)} ms`,
      met: run.addedFirstFragmentP99Ms === null ? null : run.addedFirstFragmentP99Ms < SLOW_ADDED_P99_MS,
    });
    targets.push({
      what: `${fmt(run.streams)} concurrent slow streams, ${where(run.store)}: fragments lost`,
      goal: '0, every stream complete',
      measured: fragmentSummary(run),
      met: run.lost === 0 && run.failed === 0,
    });
  }
  return targets;
}

/** `serve --workers 2` against one process on PostgreSQL (at least 1.6 times). */
export function workersTargets(results: readonly ScenarioResult[]): Target[] {
  const workers = results.find((r) => r.baseline === 'one process');
  if (!workers) return [];
  // A side that answered >= 400 or failed measured its refusals, not its invocations: nothing is judged then.
  const oneRefused = workers.baselineRounds.reduce((n, x) => n + x.non2xx + x.errors, 0);
  const refused = workers.non2xx + workers.errors;
  if (refused + oneRefused > 0) {
    const measured = `not judged: ${fmt(refused)} answers >= 400 or errors on the several processes, ${fmt(oneRefused)} on one process`;
    return [
      { what: `${workers.scenario} vs one process, PostgreSQL + Redis`, goal: '>= 1.6x', measured, met: null },
      { what: `CPU per invocation (server processes + PostgreSQL), ${workers.scenario} vs one process`, goal: '<= 1.0x', measured, met: null },
      { what: `PostgreSQL's CPU per invocation, sync invocation, one process`, goal: `<= ${DATABASE_CPU_MS} ms`, measured, met: null },
    ];
  }
  return [
    {
      what: `${workers.scenario} vs one process, PostgreSQL + Redis`,
      goal: '>= 1.6x',
      measured: workers.ratio === null ? 'not measured' : `${workers.ratio.toFixed(2)}x (${fmt(workers.rps)} vs ${fmt(workers.baselineRps ?? Number.NaN)}/s)`,
      met: workers.ratio === null ? null : workers.ratio >= 1.6,
    },
    {
      what: `CPU per invocation (server processes + PostgreSQL), ${workers.scenario} vs one process`,
      goal: '<= 1.0x',
      measured:
        workers.cpuMsPerRequest === undefined || workers.baselineCpuMsPerRequest === undefined
          ? 'not measured (/proc)'
          : `${(workers.cpuMsPerRequest / workers.baselineCpuMsPerRequest).toFixed(2)}x (${workers.cpuMsPerRequest.toFixed(2)} vs ${workers.baselineCpuMsPerRequest.toFixed(2)} ms` +
            (workers.databaseWritesPerRequest === undefined || workers.baselineDatabaseWritesPerRequest === undefined
              ? ')'
              : `; ${workers.databaseWritesPerRequest.toFixed(2)} vs ${workers.baselineDatabaseWritesPerRequest.toFixed(2)} write transactions each)`),
      met:
        workers.cpuMsPerRequest === undefined || workers.baselineCpuMsPerRequest === undefined
          ? null
          : workers.cpuMsPerRequest <= workers.baselineCpuMsPerRequest,
    },
    {
      what: `PostgreSQL's CPU per invocation, sync invocation, one process`,
      goal: `<= ${DATABASE_CPU_MS} ms`,
      measured: workers.baselineDatabaseCpuMsPerRequest === undefined ? 'not measured (/proc)' : `${workers.baselineDatabaseCpuMsPerRequest.toFixed(2)} ms`,
      met: workers.baselineDatabaseCpuMsPerRequest === undefined ? null : workers.baselineDatabaseCpuMsPerRequest <= DATABASE_CPU_MS,
    },
  ];
}
