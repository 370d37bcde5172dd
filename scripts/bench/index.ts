/**
 * @module `pnpm bench`: the gateway's overhead against bare Hono, and against Portkey's gateway in
 * front of the same loopback model server, over real HTTP on loopback, in one run. Builds the server
 * when its compiled output is stale, starts the bare Hono baseline, the loopback model server,
 * Portkey (installed on demand; left out when it cannot be) and the real `service serve` on each
 * store, drives them with the load generator in interleaved rounds, adds the probes a load generator
 * cannot make and the many-long-streams runs, then prints the tables, the targets met or missed, and
 * writes the same as JSON. `--help` lists the options; `--smoke` is the short run CI makes so that
 * the benchmark cannot rot.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { createSelfSignedCertificate, startHttpsTestReceiver } from '@service/testing/https-receiver';
import { buildServer, isStale } from '../build-server.ts';
import { type FairnessResult, runFairness } from './fairness.ts';
import { type GovernedResult, type MeasureLevel, measureGoverned } from './governed.ts';
import { type LoadSpec, loadTool, runLoad } from './load.ts';
import { BenchUsageError, type BenchOptions, HELP, parseOptions } from './options.ts';
import {
  type Mode,
  BARE_PROXY,
  PEER_SCENARIO,
  PEER_SCENARIO_ONE,
  peerRows,
  peerSides,
  serviceInvocation,
  slowStreamsOutside,
  slowStreamsThrough,
  withAdded,
} from './peer.ts';
import { PORTKEY_VERSION, startPortkey } from './portkey.ts';
import {
  type Listening,
  type ServiceUnderTest,
  type SlowModel,
  type StoreKind,
  freshWorkspace,
  freshWorkspaceEachRound,
  databaseCpuSeconds,
  databaseWriteTransactions,
  serviceAndDatabaseCpuSeconds,
  startBaseline,
  startService,
  startUpstream,
} from './processes.ts';
import { deliveryRate, engineOwnTime, receiverGate, INVOCATION, type StartupTimes, startupTimes, streamTimings, syncInvocationLoad } from './probes.ts';
import { progress } from './progress.ts';
import { report, smokeVerdict } from './report.ts';
import type { ScenarioResult, SlowStreamRun, Soak, StoreProbes } from './results.ts';
import { type Measured, measureRounds, type Side } from './rounds.ts';
import { fragmentSummary, type SlowStreamResult } from './slow-streams.ts';
import { runSoak } from './soak.ts';
import { measureTraces } from './traces.ts';
import { fmt } from './stats.ts';
import { evaluate, peerTargets, workersTargets } from './targets.ts';

/** The slow model: first fragment after 300 ms, then 40 a second. */
const SLOW_FIRST_MS = 300;
const SLOW_RATE = 40;

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

  const opts = options;
  const has = (group: BenchOptions['scenarios'][number]) => opts.scenarios.includes(group);
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const certificate = createSelfSignedCertificate();
  const caFile = join(dir, 'receiver-ca.pem');
  writeFileSync(caFile, certificate.cert);
  const gate = receiverGate();
  const receiver = await startHttpsTestReceiver(certificate, gate.answer);
  const slowModel: SlowModel = { firstMs: SLOW_FIRST_MS, rate: SLOW_RATE, seconds: opts.slow.seconds };
  const upstream = await startUpstream(slowModel);
  const baseline = await startBaseline(upstream.url);
  let portkey: Listening | null = null;
  let portkeyMissing: string | null = null;
  const withPortkey = has('peer') || has('governed') || has('slow');
  if (!withPortkey) portkeyMissing = 'not needed by the scenarios chosen';
  else if (!opts.portkey) portkeyMissing = 'left out (--no-portkey)';
  else {
    const started = await startPortkey(progress);
    if ('unavailable' in started) portkeyMissing = started.unavailable;
    else portkey = started;
  }
  if (portkeyMissing && opts.portkey && withPortkey) progress(`Portkey's rows are left out: ${portkeyMissing}`);
  progress(
    `load generator: ${loadTool()}; ${opts.rounds} round(s) of ${opts.seconds} s at ${opts.connections} connections; stores: ${opts.stores.join(', ')}; scenarios: ${opts.scenarios.join(', ')}`,
  );

  const results: ScenarioResult[] = [];
  const probes: StoreProbes[] = [];
  const slowRuns: SlowStreamRun[] = [];
  const fairness: FairnessResult[] = [];
  const governed: GovernedResult[] = [];
  let soak: Soak | null = null;
  let startup: StartupTimes | null = null;
  let engine: { p50Ms: number; p99Ms: number } | null = null;
  /** What the compiled build answered on `/panel`, per store (it must find the built panel from dist/). */
  const panelPages: { store: string; status: number; type: string }[] = [];
  const slowOptions = {
    count: opts.slow.count,
    rampSeconds: opts.slow.rampSeconds,
    streamSeconds: SLOW_FIRST_MS / 1000 + opts.slow.seconds,
    fragments: Math.max(1, Math.round(SLOW_RATE * opts.slow.seconds)),
  };
  const serviceSlow: [SlowStreamResult, StoreKind][] = [];
  const slowLine = `${opts.slow.count} slow streams (${SLOW_FIRST_MS} ms to the first fragment, then ${SLOW_RATE}/s for ${opts.slow.seconds} s), started over ${opts.slow.rampSeconds} s`;
  const slowProgress = (run: SlowStreamResult, store: StoreKind | null) =>
    progress(
      `[${store ?? '-'}] ${run.streams} slow streams via ${run.path}: first fragment p50 ${run.firstFragmentP50Ms.toFixed(1)} ms, p99 ${run.firstFragmentP99Ms.toFixed(1)} ms; ${run.complete} complete; ${fragmentSummary(run)}; max open ${run.maxOpen}; RSS per stream ${run.rssPerStreamBytes === null ? '-' : `${fmt(run.rssPerStreamBytes / 1024, 1)} KiB`}; CPU ${run.cpuCores?.toFixed(2) ?? '-'} cores` +
        (run.refusalSample ? `; first refusal: ${run.refusalSample}` : ''),
    );
  try {
    if (has('core')) {
      engine = await engineOwnTime(opts.smoke ? 20 : 500);
      progress(`local engine's own time for the sync invocation: p50 ${engine.p50Ms.toFixed(3)} ms`);
    }
    for (const store of opts.stores) {
      progress(`[${store}] starting service serve (compiled build) on a fresh store`);
      const service = await startService({ store, dir, receiverOrigin: receiver.origin, receiverCaFile: caFile, rpm: 1_000_000, upstreamUrl: upstream.url });
      try {
        const bareHono = (base: 'GET' | 'POST' | null, connections: number): Side[] =>
          base === null
            ? []
            : [
                {
                  label: `bare Hono ${base}`,
                  spec: {
                    url: `${baseline.url}/json`,
                    method: base,
                    headers: { authorization: `Bearer ${service.apiKey}`, ...(base === 'POST' ? { 'content-type': 'application/json' } : {}) },
                    ...(base === 'POST' ? { body: JSON.stringify(INVOCATION) } : {}),
                    connections,
                    seconds: opts.seconds,
                  },
                },
              ];
        const scenario = (
          name: string,
          spec: Omit<LoadSpec, 'url' | 'connections' | 'seconds'> & { path: string },
          base: 'GET' | 'POST' | null,
          connections = opts.connections,
          extras: Parameters<typeof measure>[7] = {},
        ) => measure(store, name, service, spec, bareHono(base, connections), connections, opts, extras);
        const auth = { authorization: `Bearer ${service.apiKey}` };
        const json = { ...auth, 'content-type': 'application/json' };
        if (has('core')) {
          const page = await fetch(`${service.url}/panel`);
          panelPages.push({ store, status: page.status, type: page.headers.get('content-type') ?? '' });
          await page.arrayBuffer();
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
          // The invocations each round in a workspace of their own (processes.ts freshWorkspaceEachRound): on a fast
          // machine the scenarios before one spend the first workspace's hour, and its invocations would be refused.
          const invoking = (name: string) => ({ forRound: freshWorkspaceEachRound(service, `core-${name}-${store}`, json) });
          results.push(
            await scenario(
              'sync invocation',
              { path: '/v1/inference', method: 'POST', headers: json, body: JSON.stringify(INVOCATION) },
              'POST',
              undefined,
              invoking('sync'),
            ),
          );
          results.push(await scenario('runs list', { path: '/runs?limit=20', method: 'GET', headers: auth }, 'GET'));
          results.push(
            await scenario(
              'streamed invocation',
              { path: '/v1/inference', method: 'POST', headers: json, body: JSON.stringify({ ...INVOCATION, stream: true }) },
              'POST',
              undefined,
              invoking('streamed'),
            ),
          );
          const one = await scenario(
            'sync invocation, 1 connection',
            { path: '/v1/inference', method: 'POST', headers: json, body: JSON.stringify(INVOCATION) },
            null,
            1,
            invoking('one'),
          );
          results.push(one);
          progress(`[${store}] streamed invocations one after another: first byte and end`);
          const stream = await streamTimings(service, freshWorkspace(service, `core-stream-timings-${store}`, 1_000_000), opts.smoke ? 5 : 300);
          probes.push({ store, oneConnectionSyncP50Ms: one.p50Ms, engineP50Ms: engine!.p50Ms, overheadMs: one.p50Ms - engine!.p50Ms, stream, deliveries });
          progress(`[${store}] first SSE byte p50 ${stream.firstByteP50Ms.toFixed(2)} ms, end p50 ${stream.endP50Ms.toFixed(2)} ms`);
        }
        if (has('peer')) {
          // Every side warmed alike, in both modes, at the rounds' connections. Before, 2 s at 8 connections left Portkey's
          // sync path cold, and the server's optimizing compiler still took a seventh of its CPU in the first round
          // (docs/performance.md, "Warm peers").
          const warm = opts.smoke ? 1 : PEER_WARM_SECONDS;
          progress(`[${store}] warm-up of the openai-compatible engine${portkey ? ', Portkey' : ''} and the bare proxy: ${warm} s a side and mode`);
          for (const mode of ['sync', 'streamed'] as Mode[]) {
            // A workspace of its own for each mode: the measured rounds' workspaces keep their whole hour.
            const key = freshWorkspace(service, `peer-warm-${mode}-${store}`, 1_000_000);
            await runLoad({
              url: `${service.url}/v1/inference`,
              method: 'POST',
              headers: { ...json, authorization: `Bearer ${key}` },
              body: JSON.stringify(serviceInvocation(mode)),
              connections: opts.connections,
              seconds: warm,
            });
            for (const side of peerSides(mode, upstream, portkey, opts.connections, warm, baseline)) await runLoad(side.spec);
          }
          for (const mode of ['sync', 'streamed'] as Mode[]) {
            const spec = { path: '/v1/inference', method: 'POST' as const, headers: json, body: JSON.stringify(serviceInvocation(mode)) };
            // Each round in a workspace of its own (processes.ts freshWorkspaceEachRound).
            const freshEachRound = (scenario: string) => freshWorkspaceEachRound(service, `peer-${mode}-${scenario}-${store}`, json);
            results.push(
              await measure(
                store,
                PEER_SCENARIO(mode),
                service,
                spec,
                peerSides(mode, upstream, portkey, opts.connections, opts.seconds, baseline),
                opts.connections,
                opts,
                // CPU per invocation against Portkey's: the server's processes, and PostgreSQL's (the bench runs alone).
                {
                  forRound: freshEachRound('full'),
                  ...(store === 'postgres'
                    ? { cpuSeconds: () => serviceAndDatabaseCpuSeconds(service.child.pid), databaseCpuSeconds, databaseWrites: databaseWriteTransactions }
                    : { cpuSeconds: () => service.cpuSeconds() }),
                },
              ),
            );
            results.push(
              await measure(store, PEER_SCENARIO_ONE(mode), service, spec, peerSides(mode, upstream, portkey, 1, opts.seconds, baseline), 1, opts, {
                forRound: freshEachRound('one'),
              }),
            );
          }
        }
        if (has('governed')) {
          const level: MeasureLevel = (scenario, spec, compared, connections, forRound) =>
            measure(store, scenario, service, spec, compared, connections, opts, { forRound });
          const { rows, result } = await measureGoverned(
            store,
            service,
            upstream,
            portkey,
            { ...opts.governed, seconds: opts.seconds, warmSeconds: opts.smoke ? 1 : 2 },
            level,
          );
          results.push(...rows);
          governed.push(result);
          const best = (b: GovernedResult['service']) => (b === null ? 'none' : `${fmt(b.rps)} req/s at ${b.connections} connections`);
          progress(
            `[${store}] governed: best within p99 ${opts.governed.p99BoundMs} ms: service ${best(result.service)}; Portkey ${portkey ? best(result.portkey) : 'not measured'}`,
          );
        }
        if (has('slow')) {
          progress(`[${store}] ${slowLine}`);
          const run = await slowStreamsThrough(service, upstream, slowOptions);
          slowProgress(run, store);
          serviceSlow.push([run, store]);
        }
        if (has('workers') && store === 'postgres')
          results.push(await measureWorkers(service, { dir, receiverOrigin: receiver.origin, receiverCaFile: caFile, upstreamUrl: upstream.url }, opts));
        // What sending traces costs: the same request on a server with traces on (scripts/bench/traces.ts).
        if (has('traces'))
          results.push(await measureTraces(store, service, { dir, receiverOrigin: receiver.origin, receiverCaFile: caFile, upstreamUrl: upstream.url }, opts));
        if (has('core')) {
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
        }
        // After the scenarios above: the flood leaves its runs behind.
        if (has('fairness')) fairness.push(await runFairness(service, certificate, opts.fairness, progress));
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
    if (has('slow')) {
      progress(`${slowLine}: the upstream directly${portkey ? ', then Portkey' : ''}`);
      const outside = await slowStreamsOutside(upstream, portkey, slowOptions);
      for (const run of outside) slowProgress(run, null);
      const direct = outside[0];
      slowRuns.push(...outside.map((run) => withAdded(run, null, direct)), ...serviceSlow.map(([run, store]) => withAdded(run, store, direct)));
    }
    if (has('core')) {
      progress(`start-up time to the first /healthz 200: compiled build${opts.smoke ? '' : ' and tsx'}`);
      try {
        startup = opts.smoke ? await startupTimes(dir, 1, false) : await startupTimes(dir, 5);
      } catch (err) {
        // Reported (and a smoke failure), without losing the figures measured before it.
        progress(`start-up measurement failed: ${(err as Error).message}`);
      }
    }
  } finally {
    await portkey?.stop();
    await upstream.stop();
    await baseline.stop();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const rows = peerRows(results);
  const targets = [...(has('core') ? evaluate(results, probes, soak) : []), ...peerTargets(rows, slowRuns, portkeyMissing), ...workersTargets(results)];
  const machine = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${process.platform} ${release()}`,
    node: process.version,
    load: loadTool(),
  };
  const command = `pnpm bench${argv.length ? ` ${argv.join(' ')}` : ''}`;
  const peer = { portkey: portkey ? `@portkey-ai/gateway ${PORTKEY_VERSION}` : `not measured: ${portkeyMissing}`, rows };
  process.stdout.write(report({ command, machine, results, probes, engine, startup, soak, peer, governed, slowStreams: slowRuns, fairness, targets }));
  const jsonPath = resolve(opts.json);
  writeFileSync(
    jsonPath,
    `${JSON.stringify({ command, startedAt, machine, options: opts, results, probes, engine, startup, soak, peer, governed, slowStreams: slowRuns, fairness, targets }, null, 2)}\n`,
  );
  progress(`results written to ${jsonPath}`);
  return opts.smoke ? smokeVerdict(results, probes, startup, panelPages, slowRuns, portkeyMissing, has('core'), fairness) : 0;
}

/** Seconds each side of the `openai-compatible` scenarios is warmed, per mode, before their rounds. */
const PEER_WARM_SECONDS = 5;

/**
 * `rounds` interleaved rounds of the scenario on the service and of what it is compared with: bare
 * Hono, or Portkey and the upstream directly (the `openai-compatible` scenarios). The first
 * comparison is the table's baseline; the `upstream` and bare proxy sides are kept beside it.
 */
async function measure(
  store: StoreKind,
  scenario: string,
  service: ServiceUnderTest,
  spec: Omit<LoadSpec, 'url' | 'connections' | 'seconds'> & { path: string },
  compared: Side[],
  connections: number,
  opts: BenchOptions,
  extras: Pick<Side, 'cpuSeconds' | 'databaseCpuSeconds' | 'databaseWrites' | 'forRound'> = {},
): Promise<ScenarioResult> {
  const { path, ...rest } = spec;
  const sides: Side[] = [{ label: 'service', spec: { ...rest, url: `${service.url}${path}`, connections, seconds: opts.seconds }, ...extras }, ...compared];
  const [server, ...others] = await measureRounds(sides, opts.rounds, (r, round) => {
    const [s, ...o] = round;
    progress(
      `[${store}] ${scenario} round ${r + 1}/${opts.rounds}: ${fmt(s!.rps)} req/s, p50 ${s!.p50Ms.toFixed(2)} ms` +
        (s!.databaseWritesPerRequest === undefined ? '' : `, ${s!.databaseWritesPerRequest.toFixed(2)} write transactions each`) +
        o.map((x) => `; ${x.label} ${fmt(x.rps)} req/s, p50 ${x.p50Ms.toFixed(2)} ms`).join('') +
        (s!.non2xx + s!.errors > 0 ? `; ${s!.non2xx} answers >= 400, ${s!.errors} errors` : ''),
    );
  });
  const base: Measured | undefined = others.find((x) => x.label !== 'upstream' && x.label !== BARE_PROXY);
  const upstream = others.find((x) => x.label === 'upstream');
  const bare = others.find((x) => x.label === BARE_PROXY);
  const label = base?.label === 'Portkey' ? 'Portkey' : base?.label === 'bare Hono GET' ? 'GET' : base?.label === 'bare Hono POST' ? 'POST' : null;
  return {
    store,
    scenario,
    connections,
    rps: server!.rps,
    p50Ms: server!.p50Ms,
    p99Ms: server!.p99Ms,
    baseline: label,
    baselineRps: base?.rps ?? null,
    baselineP50Ms: base?.p50Ms ?? null,
    ratio: base ? server!.rps / base.rps : null,
    non2xx: server!.non2xx,
    errors: server!.errors,
    rounds: server!.rounds,
    baselineRounds: base?.rounds ?? [],
    ...(upstream ? { upstream } : {}),
    ...(bare ? { bare } : {}),
    ...(server!.cpuMsPerRequest !== undefined ? { cpuMsPerRequest: server!.cpuMsPerRequest } : {}),
    ...(server!.databaseCpuMsPerRequest !== undefined ? { databaseCpuMsPerRequest: server!.databaseCpuMsPerRequest } : {}),
    ...(server!.databaseWritesPerRequest !== undefined ? { databaseWritesPerRequest: server!.databaseWritesPerRequest } : {}),
    ...(base?.cpuMsPerRequest !== undefined ? { baselineCpuMsPerRequest: base.cpuMsPerRequest } : {}),
  };
}

/** Server processes in the `workers` scenario, against one. */
const WORKERS = 2;

/**
 * The sync invocation (local engine) on `serve --workers 2` against the same on the one-process
 * server, in interleaved rounds: PostgreSQL and Redis only (the embedded store is one process).
 */
async function measureWorkers(
  single: ServiceUnderTest,
  where: { dir: string; receiverOrigin: string; receiverCaFile: string; upstreamUrl: string },
  opts: BenchOptions,
): Promise<ScenarioResult> {
  progress(`[postgres] starting service serve --workers ${WORKERS} on a fresh database`);
  const several = await startService({ store: 'postgres', ...where, rpm: 1_000_000, workers: WORKERS });
  try {
    const request = syncInvocationLoad;
    await runLoad(request(several, opts.smoke ? 1 : 2, 8));
    const scenario = `sync invocation, --workers ${WORKERS}`;
    // CPU per invocation of each side: its server process(es) and PostgreSQL's (the bench runs alone).
    const cpuOf = (service: ServiceUnderTest) => () => serviceAndDatabaseCpuSeconds(service.child.pid);
    // Each round, on each side, in a workspace of its own: the one-process server's first workspace has spent much of
    // its hour in the scenarios before this one.
    const freshEachRound = (service: ServiceUnderTest, side: string) =>
      freshWorkspaceEachRound(service, `workers-${side}`, request(service, opts.seconds, opts.connections).headers);
    const cpuText = (ms: number | undefined, database: number | undefined, writes: number | undefined) =>
      (ms === undefined ? '' : `, ${ms.toFixed(2)} ms CPU each${database === undefined ? '' : ` (PostgreSQL ${database.toFixed(2)})`}`) +
      (writes === undefined ? '' : `, ${writes.toFixed(2)} write transactions each`);
    const [server, one] = await measureRounds(
      [
        {
          label: 'service',
          spec: request(several, opts.seconds, opts.connections),
          forRound: freshEachRound(several, 'several'),
          cpuSeconds: cpuOf(several),
          databaseCpuSeconds,
          databaseWrites: databaseWriteTransactions,
        },
        {
          label: 'one process',
          spec: request(single, opts.seconds, opts.connections),
          forRound: freshEachRound(single, 'one'),
          cpuSeconds: cpuOf(single),
          databaseCpuSeconds,
          databaseWrites: databaseWriteTransactions,
        },
      ],
      opts.rounds,
      (r, [s, o]) =>
        progress(
          `[postgres] ${scenario} round ${r + 1}/${opts.rounds}: ${fmt(s!.rps)} req/s${cpuText(s!.cpuMsPerRequest, s!.databaseCpuMsPerRequest, s!.databaseWritesPerRequest)}; one process ${fmt(o!.rps)} req/s${cpuText(o!.cpuMsPerRequest, o!.databaseCpuMsPerRequest, o!.databaseWritesPerRequest)}`,
        ),
    );
    return {
      store: 'postgres',
      scenario,
      connections: opts.connections,
      rps: server!.rps,
      p50Ms: server!.p50Ms,
      p99Ms: server!.p99Ms,
      baseline: 'one process',
      baselineRps: one!.rps,
      baselineP50Ms: one!.p50Ms,
      ratio: server!.rps / one!.rps,
      non2xx: server!.non2xx,
      errors: server!.errors,
      rounds: server!.rounds,
      baselineRounds: one!.rounds,
      ...(server!.cpuMsPerRequest !== undefined ? { cpuMsPerRequest: server!.cpuMsPerRequest } : {}),
      ...(one!.cpuMsPerRequest !== undefined ? { baselineCpuMsPerRequest: one!.cpuMsPerRequest } : {}),
      ...(server!.databaseCpuMsPerRequest !== undefined ? { databaseCpuMsPerRequest: server!.databaseCpuMsPerRequest } : {}),
      ...(one!.databaseCpuMsPerRequest !== undefined ? { baselineDatabaseCpuMsPerRequest: one!.databaseCpuMsPerRequest } : {}),
      ...(server!.databaseWritesPerRequest !== undefined ? { databaseWritesPerRequest: server!.databaseWritesPerRequest } : {}),
      ...(one!.databaseWritesPerRequest !== undefined ? { baselineDatabaseWritesPerRequest: one!.databaseWritesPerRequest } : {}),
    };
  } finally {
    await several.stop();
    await several.cleanup();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
