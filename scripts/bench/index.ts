/**
 * @module `pnpm bench`: the gateway's overhead against bare Hono, over real HTTP on loopback, in one
 * run. Builds the server when its compiled output is stale, starts the bare Hono baseline and the
 * real `service serve` on each store, drives both with the load generator in interleaved rounds,
 * adds the probes a load generator cannot make, then prints the table (requests/s, p50, p99, ratio
 * to the baseline), the targets met or missed, and writes the same as JSON. `--help` lists the
 * options; `--smoke` is the short run CI makes so that the benchmark cannot rot.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { createSelfSignedCertificate, startHttpsTestReceiver } from '@service/testing/https-receiver';
import { buildServer, isStale } from '../build-server.ts';
import { type LoadResult, type LoadSpec, loadTool, runLoad } from './load.ts';
import { BenchUsageError, type BenchOptions, HELP, parseOptions } from './options.ts';
import { type Listening, type ServiceUnderTest, type StoreKind, startBaseline, startService } from './processes.ts';
import {
  type DeliveryRate,
  deliveryRate,
  engineOwnTime,
  receiverGate,
  INVOCATION,
  type StartupTimes,
  type StreamTimings,
  startupTimes,
  streamTimings,
} from './probes.ts';
import { fmt, median } from './stats.ts';

interface ScenarioResult {
  store: StoreKind;
  scenario: string;
  connections: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  baseline: 'GET' | 'POST' | null;
  baselineRps: number | null;
  ratio: number | null;
  non2xx: number;
  errors: number;
  rounds: LoadResult[];
  baselineRounds: LoadResult[];
}

interface StoreProbes {
  store: StoreKind;
  oneConnectionSyncP50Ms: number;
  engineP50Ms: number;
  overheadMs: number;
  stream: StreamTimings;
  deliveries: DeliveryRate;
}

interface Soak {
  minutes: number;
  samples: { atSeconds: number; rssBytes: number }[];
  rssAfterFirstMinute: number;
  rssAtEnd: number;
  growth: number;
}

interface Target {
  what: string;
  goal: string;
  measured: string;
  met: boolean | null;
}

const progress = (line: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

async function main(argv: string[]): Promise<number> {
  let options: BenchOptions | null;
  try {
    options = parseOptions(argv, process.env);
  } catch (err) {
    if (err instanceof BenchUsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(err as Error).message}\n\n${HELP}\n`);
      return 2;
    }
    throw err;
  }
  if (options === null) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const startedAt = new Date().toISOString();
  if (isStale()) {
    progress('the compiled server is missing or stale: building it');
    await buildServer();
  }

  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const certificate = createSelfSignedCertificate();
  const caFile = join(dir, 'receiver-ca.pem');
  writeFileSync(caFile, certificate.cert);
  const gate = receiverGate();
  const receiver = await startHttpsTestReceiver(certificate, gate.answer);
  const baseline = await startBaseline();
  const opts = options;
  progress(`load generator: ${loadTool()}; ${opts.rounds} round(s) of ${opts.seconds} s at ${opts.connections} connections; stores: ${opts.stores.join(', ')}`);

  const results: ScenarioResult[] = [];
  const probes: StoreProbes[] = [];
  let soak: Soak | null = null;
  let startup: StartupTimes | null = null;
  let engine: { p50Ms: number; p99Ms: number } | null = null;
  /** What the compiled build answered on `/panel`, per store (it must find the built panel from dist/). */
  const panelPages: { store: string; status: number; type: string }[] = [];
  try {
    engine = await engineOwnTime(opts.smoke ? 20 : 500);
    progress(`local engine's own time for the sync invocation: p50 ${engine.p50Ms.toFixed(3)} ms`);
    for (const store of opts.stores) {
      progress(`[${store}] starting service serve (compiled build) on a fresh store`);
      const service = await startService({ store, dir, receiverOrigin: receiver.origin, receiverCaFile: caFile, rpm: 1_000_000 });
      try {
        const scenario = (
          name: string,
          spec: Omit<LoadSpec, 'url' | 'connections' | 'seconds'> & { path: string },
          base: 'GET' | 'POST' | null,
          connections = opts.connections,
        ) => measure(store, name, service, baseline, spec, base, connections, opts);
        const page = await fetch(`${service.url}/panel`);
        panelPages.push({ store, status: page.status, type: page.headers.get('content-type') ?? '' });
        await page.arrayBuffer();
        const auth = { authorization: `Bearer ${service.apiKey}` };
        const json = { ...auth, 'content-type': 'application/json' };
        // First, while the workspace's request window is empty: the admin session that queues the pings
        // is held to the default 600 requests a minute, counted together with the API key's requests.
        progress(`[${store}] outbound deliveries to the loopback receiver`);
        const deliveries = await deliveryRate(service, receiver, gate, opts.smoke ? 10 : 500);
        progress(
          `[${store}] outbound deliveries: ${fmt(deliveries.perSecond)}/s (${deliveries.delivered} after the receiver was released; ${deliveries.events} queued in ${deliveries.queuedSeconds.toFixed(1)} s)`,
        );
        progress(`[${store}] warm-up`);
        const warm = opts.smoke ? 1 : 2;
        await runLoad({ url: `${service.url}/usage/current`, method: 'GET', headers: auth, connections: 8, seconds: warm });
        await runLoad({ url: `${service.url}/v1/inference`, method: 'POST', headers: json, body: JSON.stringify(INVOCATION), connections: 8, seconds: warm });
        await runLoad({ url: `${baseline.url}/json`, method: 'GET', headers: auth, connections: 8, seconds: warm });
        results.push(await scenario('authenticated read', { path: '/usage/current', method: 'GET', headers: auth }, 'GET'));
        results.push(await scenario('sync invocation', { path: '/v1/inference', method: 'POST', headers: json, body: JSON.stringify(INVOCATION) }, 'POST'));
        results.push(await scenario('runs list', { path: '/runs?limit=20', method: 'GET', headers: auth }, 'GET'));
        results.push(
          await scenario(
            'streamed invocation',
            { path: '/v1/inference', method: 'POST', headers: json, body: JSON.stringify({ ...INVOCATION, stream: true }) },
            'POST',
          ),
        );
        const one = await scenario(
          'sync invocation, 1 connection',
          { path: '/v1/inference', method: 'POST', headers: json, body: JSON.stringify(INVOCATION) },
          null,
          1,
        );
        results.push(one);
        progress(`[${store}] streamed invocations one after another: first byte and end`);
        const stream = await streamTimings(service, opts.smoke ? 5 : 300);
        probes.push({ store, oneConnectionSyncP50Ms: one.p50Ms, engineP50Ms: engine.p50Ms, overheadMs: one.p50Ms - engine.p50Ms, stream, deliveries });
        progress(`[${store}] first SSE byte p50 ${stream.firstByteP50Ms.toFixed(2)} ms, end p50 ${stream.endP50Ms.toFixed(2)} ms`);
        // Last: every accepted event leaves a run for the worker, which would load later scenarios.
        const inboundBody = JSON.stringify({ event: 'lead.created', contact: { name: 'Dana', company: 'Northwind' } });
        const { createHmac } = await import('node:crypto');
        const signature = createHmac('sha256', service.inbound.secret).update(inboundBody).digest('hex');
        results.push(
          await scenario(
            'inbound signed events',
            {
              path: `/webhooks/inbound/${service.inbound.slug}`,
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-service-signature': signature },
              body: inboundBody,
              uniqueHeader: 'X-SERVICE-Event-Id',
            },
            'POST',
          ),
        );
        if (opts.soakMinutes !== null && soak === null) {
          try {
            soak = await runSoak(service, opts.soakMinutes, opts.connections);
          } catch (err) {
            progress(`soak failed: ${(err as Error).message}`);
          }
        }
      } finally {
        await service.stop();
        await service.cleanup();
      }
    }
    progress(`start-up time to the first /healthz 200: compiled build${opts.smoke ? '' : ' and tsx'}`);
    try {
      startup = opts.smoke ? await startupTimes(dir, 1, false) : await startupTimes(dir, 5);
    } catch (err) {
      // Reported (and a smoke failure), without losing the figures measured before it.
      progress(`start-up measurement failed: ${(err as Error).message}`);
    }
  } finally {
    await baseline.stop();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const targets = evaluate(results, probes, soak);
  const machine = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${process.platform} ${release()}`,
    node: process.version,
    load: loadTool(),
  };
  const command = `pnpm bench${argv.length ? ` ${argv.join(' ')}` : ''}`;
  process.stdout.write(report(command, machine, results, probes, engine, startup, soak, targets));
  const jsonPath = resolve(opts.json);
  writeFileSync(jsonPath, `${JSON.stringify({ command, startedAt, machine, options: opts, results, probes, engine, startup, soak, targets }, null, 2)}\n`);
  progress(`results written to ${jsonPath}`);
  return opts.smoke ? smokeVerdict(results, probes, startup, panelPages) : 0;
}

/** `rounds` rounds of the scenario, each followed (or, every other round, preceded) by a baseline round. */
async function measure(
  store: StoreKind,
  scenario: string,
  service: ServiceUnderTest,
  baseline: Listening,
  spec: Omit<LoadSpec, 'url' | 'connections' | 'seconds'> & { path: string },
  base: 'GET' | 'POST' | null,
  connections: number,
  opts: BenchOptions,
): Promise<ScenarioResult> {
  const { path, ...rest } = spec;
  const serverSpec: LoadSpec = { ...rest, url: `${service.url}${path}`, connections, seconds: opts.seconds };
  const baselineSpec: LoadSpec | null =
    base === null
      ? null
      : {
          url: `${baseline.url}/json`,
          method: base,
          headers: spec.headers,
          ...(base === 'POST' ? { body: JSON.stringify(INVOCATION) } : {}),
          connections,
          seconds: opts.seconds,
        };
  const rounds: LoadResult[] = [];
  const baselineRounds: LoadResult[] = [];
  for (let r = 0; r < opts.rounds; r += 1) {
    const serverFirst = r % 2 === 0;
    if (baselineSpec && !serverFirst) baselineRounds.push(await runLoad(baselineSpec));
    const result = await runLoad(serverSpec);
    rounds.push(result);
    if (baselineSpec && serverFirst) baselineRounds.push(await runLoad(baselineSpec));
    const b = baselineRounds.at(-1);
    progress(
      `[${store}] ${scenario} round ${r + 1}/${opts.rounds}: ${fmt(result.rps)} req/s, p50 ${result.p50Ms.toFixed(2)} ms` +
        (b ? `; baseline ${base} ${fmt(b.rps)} req/s` : '') +
        (result.non2xx + result.errors > 0 ? `; ${result.non2xx} answers >= 400, ${result.errors} errors` : ''),
    );
  }
  const rps = median(rounds.map((x) => x.rps));
  const baselineRps = baselineRounds.length ? median(baselineRounds.map((x) => x.rps)) : null;
  return {
    store,
    scenario,
    connections,
    rps,
    p50Ms: median(rounds.map((x) => x.p50Ms)),
    p99Ms: median(rounds.map((x) => x.p99Ms)),
    baseline: base,
    baselineRps,
    ratio: baselineRps ? rps / baselineRps : null,
    non2xx: rounds.reduce((n, x) => n + x.non2xx, 0),
    errors: rounds.reduce((n, x) => n + x.errors, 0),
    rounds,
    baselineRounds,
  };
}

/** Mixed load (reads and sync invocations in 10 s turns) for `minutes`, sampling the server's RSS every 5 s. */
async function runSoak(service: ServiceUnderTest, minutes: number, connections: number): Promise<Soak> {
  progress(`[${service.store}] soak: ${minutes} min of mixed load, RSS every 5 s`);
  const started = performance.now();
  const samples: Soak['samples'] = [];
  const sample = () => {
    const rss = service.rss();
    if (rss !== undefined) samples.push({ atSeconds: Math.round((performance.now() - started) / 1000), rssBytes: rss });
  };
  sample();
  const timer = setInterval(sample, 5_000);
  const auth = { authorization: `Bearer ${service.apiKey}` };
  try {
    let turn = 0;
    while (performance.now() - started < minutes * 60_000) {
      const seconds = Math.max(1, Math.min(10, Math.round((minutes * 60_000 - (performance.now() - started)) / 1000)));
      const spec: LoadSpec =
        turn % 2 === 0
          ? { url: `${service.url}/usage/current`, method: 'GET', headers: auth, connections, seconds }
          : {
              url: `${service.url}/v1/inference`,
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify(INVOCATION),
              connections,
              seconds,
            };
      await runLoad(spec);
      turn += 1;
      if (turn % 6 === 0)
        progress(
          `[${service.store}] soak: ${Math.round((performance.now() - started) / 60_000)} min, RSS ${fmt((samples.at(-1)?.rssBytes ?? 0) / 2 ** 20)} MiB`,
        );
    }
  } finally {
    clearInterval(timer);
  }
  sample();
  const atMinute = samples.find((s) => s.atSeconds >= 60) ?? samples.at(-1)!;
  const end = samples.at(-1)!;
  return { minutes, samples, rssAfterFirstMinute: atMinute.rssBytes, rssAtEnd: end.rssBytes, growth: end.rssBytes / atMinute.rssBytes - 1 };
}

function evaluate(results: ScenarioResult[], probes: StoreProbes[], soak: Soak | null): Target[] {
  const find = (store: StoreKind, scenario: string) => results.find((r) => r.store === store && r.scenario === scenario);
  const ratioTarget = (store: StoreKind, scenario: string, goal: number): Target => {
    const r = find(store, scenario);
    return {
      what: `${scenario}, ${store === 'embedded' ? 'embedded store' : 'PostgreSQL + Redis'}`,
      goal: `>= ${goal * 100}% of bare Hono ${r?.baseline ?? ''}`.trim(),
      measured: r?.ratio == null ? 'not measured' : `${(r.ratio * 100).toFixed(1)}%`,
      met: r?.ratio == null ? null : r.ratio >= goal,
    };
  };
  const targets: Target[] = [ratioTarget('embedded', 'authenticated read', 0.4), ratioTarget('postgres', 'authenticated read', 0.25)];
  targets.push(ratioTarget('embedded', 'sync invocation', 0.1), ratioTarget('postgres', 'sync invocation', 0.1));
  for (const p of probes) {
    const where = p.store === 'embedded' ? 'embedded store' : 'PostgreSQL + Redis';
    targets.push({ what: `overhead at one connection, ${where}`, goal: '< 2 ms', measured: `${p.overheadMs.toFixed(2)} ms`, met: p.overheadMs < 2 });
    targets.push({
      what: `first SSE byte p50, ${where}`,
      goal: '< 5 ms',
      measured: `${p.stream.firstByteP50Ms.toFixed(2)} ms`,
      met: p.stream.firstByteP50Ms < 5,
    });
    targets.push({
      what: `outbound deliveries, ${where}`,
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

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 || i === 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  return [line(headers), `|${widths.map((w, i) => (i < 2 ? `${'-'.repeat(w + 1)}-` : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...rows.map(line)].join('\n');
}

function report(
  command: string,
  machine: Record<string, unknown>,
  results: ScenarioResult[],
  probes: StoreProbes[],
  engine: { p50Ms: number } | null,
  startup: StartupTimes | null,
  soak: Soak | null,
  targets: Target[],
): string {
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
      ['scenario', 'store', 'conns', 'requests/s', 'p50 ms', 'p99 ms', 'bare Hono req/s', 'ratio', '>=400 / errors'],
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
            r.baselineRps === null ? '-' : `${fmt(r.baselineRps)} (${r.baseline})`,
            r.ratio === null ? '-' : `${(r.ratio * 100).toFixed(1)}%`,
            `${r.non2xx} / ${r.errors}`,
          ]),
      ),
    ),
  );
  out.push('');
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

/** The smoke run's checks: every scenario and probe answered, without refusals or errors. */
function smokeVerdict(
  results: ScenarioResult[],
  probes: StoreProbes[],
  startup: StartupTimes | null,
  panelPages: { store: string; status: number; type: string }[],
): number {
  const checks: [string, boolean][] = [];
  for (const r of results) checks.push([`${r.store}: ${r.scenario} answered 2xx`, r.rounds.every((x) => x.requests > 0) && r.non2xx === 0 && r.errors === 0]);
  for (const p of probes) {
    checks.push([`${p.store}: streams reached event: end`, p.stream.non2xx === 0 && Number.isFinite(p.stream.endP50Ms)]);
    checks.push([`${p.store}: the queued pings were delivered`, p.deliveries.delivered > 0 && Number.isFinite(p.deliveries.perSecond)]);
  }
  checks.push(['the compiled build started and answered /healthz', startup?.compiledMs.every(Number.isFinite) === true]);
  for (const p of panelPages) checks.push([`${p.store}: the compiled build served the panel at /panel`, p.status === 200 && p.type.startsWith('text/html')]);
  const failed = checks.filter(([, ok]) => !ok);
  for (const [what, ok] of checks) process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}\n`);
  process.stdout.write(`bench smoke: ${checks.length - failed.length} passed, ${failed.length} failed\n`);
  return failed.length === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
