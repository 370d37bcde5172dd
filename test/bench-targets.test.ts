/**
 * @module The benchmark judges a target only on requests that were served: a scenario whose service side answered
 * with a status of 400 or more (a workspace's hour spent, say) measured its refusals, and the targets built on it
 * say "not judged" instead of met or missed.
 */
import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../scripts/bench/load.ts';
import type { ScenarioResult, StoreProbes } from '../scripts/bench/results.ts';
import { evaluate, workersTargets } from '../scripts/bench/targets.ts';

const round = (non2xx: number): LoadResult => ({ tool: 'wrk', requests: 1000, seconds: 1, rps: 1000, p50Ms: 1, p99Ms: 2, non2xx, errors: 0 });

function row(scenario: string, baseline: ScenarioResult['baseline'], ratio: number, non2xx: number, baselineNon2xx = 0): ScenarioResult {
  return {
    store: 'postgres',
    scenario,
    connections: scenario.endsWith('1 connection') ? 1 : 50,
    rps: 1000,
    p50Ms: 1,
    p99Ms: 2,
    baseline,
    baselineRps: 1000 / ratio,
    baselineP50Ms: 1,
    ratio,
    non2xx,
    errors: 0,
    rounds: [round(non2xx)],
    baselineRounds: [round(baselineNon2xx)],
    ...(baseline === 'one process' ? { cpuMsPerRequest: 0.5, baselineCpuMsPerRequest: 0.5, baselineDatabaseCpuMsPerRequest: 0.1 } : {}),
  };
}

const probes: StoreProbes = {
  store: 'postgres',
  oneConnectionSyncP50Ms: 1.02,
  engineP50Ms: 0.02,
  overheadMs: 1.0,
  stream: { count: 1, firstByteP50Ms: 1, firstByteP99Ms: 1, endP50Ms: 1, endP99Ms: 1, non2xx: 0 },
  deliveries: { events: 10, delivered: 10, seconds: 0.005, perSecond: 2000, queuedSeconds: 0.1 },
};

const target = (targets: ReturnType<typeof evaluate>, what: string) => targets.find((t) => t.what === what);

describe('the targets on refused requests', () => {
  it('judges the ratio against bare Hono and the overhead at one connection when every request was served', () => {
    const targets = evaluate([row('sync invocation', 'POST', 0.2, 0), row('sync invocation, 1 connection', null, 0, 0)], [probes], null);
    expect(target(targets, 'sync invocation, PostgreSQL + Redis')).toMatchObject({ measured: '20.0%', met: true });
    expect(target(targets, 'overhead at one connection, PostgreSQL + Redis')).toMatchObject({ measured: '1.00 ms', met: true });
  });

  it('does not judge them when the service answered >= 400', () => {
    const targets = evaluate([row('sync invocation', 'POST', 0.2, 12), row('sync invocation, 1 connection', null, 0, 2982)], [probes], null);
    expect(target(targets, 'sync invocation, PostgreSQL + Redis')).toMatchObject({ measured: 'not judged: 12 answers >= 400, 0 errors', met: null });
    expect(target(targets, 'overhead at one connection, PostgreSQL + Redis')).toMatchObject({
      measured: 'not judged: 2,982 answers >= 400, 0 errors',
      met: null,
    });
  });

  it('does not judge --workers when either side answered >= 400', () => {
    const served = workersTargets([row('sync invocation, --workers 2', 'one process', 1.7, 0)]);
    expect(served.map((t) => t.met)).toEqual([true, true, true]);
    for (const refused of [
      workersTargets([row('sync invocation, --workers 2', 'one process', 1.7, 5)]),
      workersTargets([row('sync invocation, --workers 2', 'one process', 1.7, 0, 97)]),
    ]) {
      expect(refused.map((t) => t.met)).toEqual([null, null, null]);
      expect(refused[0]!.measured).toMatch(/^not judged: /);
    }
  });
});
