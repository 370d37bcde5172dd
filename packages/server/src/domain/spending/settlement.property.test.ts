/**
 * The settlement (store/functions/settle_runs.sql), against a reference model of it: random sequences of starts,
 * closes (alone and in batches of several runs and workspaces), cancels and the clock moving over hours, days and a
 * month's turn, with random limits, rates, quotas and tokens (seeded, so a failure replays), run on the store; after
 * every step each period row and each window row must hold what the model says (what was consumed, spent and
 * reserved, and whether and since when a window tripped), and no window is ever charged beyond its limit.
 *
 * The model is the rule written as plainly as it can be: per workspace and per window of the runs that end together,
 * the reservations released and the STU charged summed; a window trips at its limit, or within `TRIP_MARGIN` of it
 * when a run of the batch crossed that scope. A start is modelled by what start_run answered (its reservation on the
 * period and windows of its time; a run that crossed at once trips its window), since its decision is not what this
 * test is about.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startingRun } from '@service/testing/runs';
import { testBackends, type TestStore } from '@service/testing/store';
import { fixedClock } from '../../clock.ts';
import { ServiceError } from '../../errors.ts';
import { newId } from '../../random.ts';
import { finishRun, finishRuns, type FinishRunArgs } from '../runs/queries/close.ts';
import { endRun } from '../runs/recovery.ts';
import { DEFAULT_STU_RATES, killSwitchWindows, periodOf, TRIP_MARGIN, type KillSwitchLimits, type SpendingScope } from '../usage/index.ts';
import { createWorkspace } from '../workspaces/index.ts';
import { reserveRun } from './budget.ts';

type Step =
  | { kind: 'start'; ws: number; input: number; output: number }
  | { kind: 'close'; picks: number[]; used: number[] }
  | { kind: 'cancel'; pick: number }
  | { kind: 'advance'; minutes: number };

interface Case {
  hour: number;
  day: number;
  rate: number;
  quota: number;
  /** Minutes before the month's turn the case starts at. */
  before: number;
  steps: Step[];
}

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('start' as const),
      ws: fc.integer({ min: 0, max: 1 }),
      input: fc.integer({ min: 1, max: 60 }),
      output: fc.integer({ min: 1, max: 160 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('close' as const),
      picks: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
      // The share of its output cap each run uses: often all of it (a run cut at a limit has crossed it).
      used: fc.array(fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })), { minLength: 4, maxLength: 4 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), minutes: fc.integer({ min: 0, max: 150 }) }) },
);

const cases: fc.Arbitrary<Case> = fc
  .record({
    hour: fc.integer({ min: 80, max: 1_500 }),
    dayFactor: fc.integer({ min: 1, max: 3 }),
    rate: fc.constantFrom(1, 2, 3),
    quota: fc.integer({ min: 300, max: 20_000 }),
    before: fc.integer({ min: 0, max: 600 }),
    steps: fc.array(step, { minLength: 10, maxLength: 30 }),
  })
  .map(({ dayFactor, ...rest }) => ({ ...rest, day: rest.hour * dayFactor }));

/** What the reference model settles for one run. */
interface Settling {
  ws: string;
  day: number;
  hour: number;
  reserved: number;
  stu: number;
  crossed: SpendingScope | null;
  now: number;
  /** A close (with a quota) charges the period of `now`; a cancel charges nothing. */
  charges: boolean;
}

/** The reference model: the period and window rows, as the rule says they are. */
class Model {
  readonly periods = new Map<string, { consumed: number; reserved: number }>();
  readonly windows = new Map<string, { spent: number; reserved: number; tripped: number | null }>();

  period(ws: string, period: string) {
    const key = `${ws} ${period}`;
    if (!this.periods.has(key)) this.periods.set(key, { consumed: 0, reserved: 0 });
    return this.periods.get(key)!;
  }

  window(ws: string, scope: 'hour' | 'day', start: number) {
    const key = `${ws} ${scope} ${new Date(start).toISOString()}`;
    if (!this.windows.has(key)) this.windows.set(key, { spent: 0, reserved: 0, tripped: null });
    return this.windows.get(key)!;
  }

  /** What start_run answered `started` with: the worst case held on the period and the windows of `now`. */
  reserve(ws: string, now: Date, stu: number): void {
    const { hour, day } = killSwitchWindows(now);
    this.period(ws, periodOf(now)).reserved += stu;
    this.window(ws, 'day', day.start.getTime()).reserved += stu;
    this.window(ws, 'hour', hour.start.getTime()).reserved += stu;
  }

  /** What start_run answered `crossed` with: nothing held, the window of the scope tripped. */
  crossedAtStart(ws: string, now: Date, scope: SpendingScope): void {
    if (scope === 'run') return;
    const w = this.window(ws, scope, killSwitchWindows(now)[scope].start.getTime());
    w.tripped ??= now.getTime();
  }

  /** The settlement of runs that end together. */
  settle(runs: readonly Settling[], limits: KillSwitchLimits): void {
    for (const run of runs) {
      const start = this.period(run.ws, periodOf(new Date(run.day)));
      start.reserved = Math.max(0, start.reserved - run.reserved);
    }
    for (const run of runs) if (run.charges) this.period(run.ws, periodOf(new Date(run.now))).consumed += run.stu;
    const groups = new Map<string, { ws: string; scope: 'hour' | 'day'; start: number; runs: Settling[] }>();
    for (const run of runs)
      for (const scope of ['day', 'hour'] as const) {
        const key = `${run.ws} ${scope} ${run[scope]}`;
        if (!groups.has(key)) groups.set(key, { ws: run.ws, scope, start: run[scope], runs: [] });
        groups.get(key)!.runs.push(run);
      }
    for (const { ws, scope, start, runs: together } of groups.values()) {
      const w = this.window(ws, scope, start);
      w.spent += together.reduce((sum, run) => sum + run.stu, 0);
      w.reserved = Math.max(0, w.reserved - together.reduce((sum, run) => sum + run.reserved, 0));
      const limit = limits[scope];
      const crossed = together.some((run) => run.crossed === scope);
      if (w.tripped === null && (w.spent >= limit || (crossed && w.spent >= limit - Math.ceil(limit * TRIP_MARGIN))))
        w.tripped = Math.max(...together.map((run) => run.now));
    }
  }
}

interface OpenRun {
  id: string;
  ws: string;
  startedAt: Date;
  input: number;
  outputCap: number;
  reservedStu: number;
  limitedBy: SpendingScope | null;
}

describe.each(testBackends())('the settlement against its model on $name', ({ open }) => {
  let store: TestStore;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(async () => {
    await store.cleanup();
  });

  /** The store's rows of the workspaces, beside the model's (a row the model never touched reads as zeros). */
  async function compare(model: Model, workspaces: readonly string[], limits: KillSwitchLimits, where: string): Promise<void> {
    const periods = await store.db.query<{ workspace_id: string; period: string; consumed: number; reserved: number }>(
      `SELECT workspace_id, period, consumed_stu::float8 AS consumed, reserved_stu::float8 AS reserved FROM usage_periods
        WHERE workspace_id = ANY ($1::text[]) ORDER BY workspace_id, period`,
      [workspaces],
    );
    const windows = await store.db.query<{
      workspace_id: string;
      scope: 'hour' | 'day';
      window_start: Date;
      spent: number;
      reserved: number;
      tripped_at: Date | null;
    }>(
      `SELECT workspace_id, scope, window_start, spent_stu::float8 AS spent, reserved_stu::float8 AS reserved, tripped_at FROM usage_windows
        WHERE workspace_id = ANY ($1::text[]) ORDER BY workspace_id, scope, window_start`,
      [workspaces],
    );
    const stored = [
      ...periods.map((p) => `${p.workspace_id} ${p.period}: consumed ${Number(p.consumed)} reserved ${Number(p.reserved)}`),
      ...windows.map(
        (w) =>
          `${w.workspace_id} ${w.scope} ${new Date(w.window_start).toISOString()}: spent ${Number(w.spent)} reserved ${Number(w.reserved)} tripped ${w.tripped_at ? new Date(w.tripped_at).toISOString() : '-'}`,
      ),
    ];
    const modelled = [
      ...periods.map((p) => {
        const m = model.periods.get(`${p.workspace_id} ${p.period}`) ?? { consumed: 0, reserved: 0 };
        return `${p.workspace_id} ${p.period}: consumed ${m.consumed} reserved ${m.reserved}`;
      }),
      ...windows.map((w) => {
        const start = new Date(w.window_start).toISOString();
        const m = model.windows.get(`${w.workspace_id} ${w.scope} ${start}`) ?? { spent: 0, reserved: 0, tripped: null };
        return `${w.workspace_id} ${w.scope} ${start}: spent ${m.spent} reserved ${m.reserved} tripped ${m.tripped === null ? '-' : new Date(m.tripped).toISOString()}`;
      }),
    ];
    expect(stored, where).toEqual(modelled);
    // Every row the model holds is in the store (start_run may create rows the model never touches: a refusal's).
    const keys = new Set([
      ...periods.map((p) => `${p.workspace_id} ${p.period}`),
      ...windows.map((w) => `${w.workspace_id} ${w.scope} ${new Date(w.window_start).toISOString()}`),
    ]);
    expect(
      [...model.periods.keys(), ...model.windows.keys()].filter((key) => !keys.has(key)),
      where,
    ).toEqual([]);
    // No window is ever charged beyond its limit.
    for (const w of windows) expect(Number(w.spent), where).toBeLessThanOrEqual(limits[w.scope]);
  }

  async function play(c: Case): Promise<void> {
    const clock = fixedClock(new Date(Date.parse('2026-07-01T00:00:00Z') - c.before * 60_000));
    const workspaces = [(await createWorkspace(store.db, clock, 'Model A')).id, (await createWorkspace(store.db, clock, 'Model B')).id];
    const limits: KillSwitchLimits = { run: 1_000_000, hour: c.hour, day: c.day };
    const settings = { limits, rates: { ...DEFAULT_STU_RATES, Prelude: c.rate } };
    const model = new Model();
    let open: OpenRun[] = [];
    for (const [i, s] of c.steps.entries()) {
      const now = clock.now();
      if (s.kind === 'advance') {
        clock.advance(s.minutes * 60_000);
        continue;
      }
      if (s.kind === 'start') {
        const ws = workspaces[s.ws]!;
        const id = newId('run');
        try {
          const started = await reserveRun(store.db, {
            ...startingRun(ws, now, { runId: id }),
            quotaStu: c.quota,
            inputTokens: s.input,
            desiredOutput: s.output,
            settings,
          });
          if (started.outcome === 'started') {
            model.reserve(ws, now, started.reservedStu);
            open.push({ id, ws, startedAt: now, input: s.input, outputCap: started.outputCap, reservedStu: started.reservedStu, limitedBy: started.limitedBy });
          } else if (started.outcome === 'crossed') model.crossedAtStart(ws, now, started.scope);
        } catch (err) {
          // Refused (quota, a kill switch, budget held by runs in progress): nothing held.
          if (!(err instanceof ServiceError)) throw err;
        }
      } else if (s.kind === 'cancel') {
        if (open.length === 0) continue;
        const run = open[s.pick % open.length]!;
        open = open.filter((o) => o !== run);
        await endRun(store.db, now, { workspaceId: run.ws, runId: run.id, status: 'canceled', limits });
        const { hour, day } = killSwitchWindows(run.startedAt);
        model.settle(
          [
            {
              ws: run.ws,
              day: day.start.getTime(),
              hour: hour.start.getTime(),
              reserved: run.reservedStu,
              stu: 0,
              crossed: null,
              now: now.getTime(),
              charges: false,
            },
          ],
          limits,
        );
      } else {
        const picked = [...new Set(s.picks.map((p) => (open.length ? open[p % open.length]! : undefined)))].filter((r) => r !== undefined);
        if (picked.length === 0) continue;
        open = open.filter((o) => !picked.includes(o));
        const closes = picked.map((run, k) => {
          const output = Math.floor(s.used[k]! * run.outputCap);
          const stu = Math.ceil((run.input + output) * c.rate);
          const crossed = run.limitedBy && output >= run.outputCap ? run.limitedBy : null;
          const close: FinishRunArgs = {
            run_id: run.id,
            workspace_id: run.ws,
            started_at: run.startedAt,
            now,
            status: crossed ? 'failed' : 'completed',
            reason: crossed ? `kill_switch:${crossed}` : null,
            manual_reason: crossed ? null : 'kill_switch:manual',
            crossed,
            content: 'Done.',
            input_tokens: run.input,
            output_tokens: output,
            stu,
            unbilled_input: 0,
            unbilled_output: 0,
            unbilled_stu: 0,
            alias: 'Prelude',
            quota_stu: c.quota,
            limit_hour: limits.hour,
            limit_day: limits.day,
            trip_margin: TRIP_MARGIN,
            ledger_id: newId('led'),
            steps: [],
            drafts: [],
            turn_roles: [],
            turn_contents: [],
            events: [],
            event_types: [],
            delivery_ids: [],
            instance: 'model',
            log: [],
            answer_only: false,
            answered_by: null,
          };
          const { hour, day } = killSwitchWindows(run.startedAt);
          const settling: Settling = {
            ws: run.ws,
            day: day.start.getTime(),
            hour: hour.start.getTime(),
            reserved: run.reservedStu,
            stu,
            crossed,
            now: now.getTime(),
            charges: true,
          };
          return { close, settling };
        });
        if (closes.length === 1) await finishRun(store.db, closes[0]!.close);
        else
          await finishRuns(
            store.db,
            closes.map((x) => x.close),
          );
        model.settle(
          closes.map((x) => x.settling),
          limits,
        );
      }
      await compare(model, workspaces, limits, `step ${i} (${s.kind}) of ${JSON.stringify(c)}`);
    }
  }

  it('holds the rows the model holds after every start, close, batch of closes and cancel', async () => {
    await fc.assert(fc.asyncProperty(cases, play), { seed: 20_261_128, numRuns: 12, endOnFailure: true });
  }, 120_000);
});
