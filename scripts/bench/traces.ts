/**
 * @module The `traces` scenario of `pnpm bench` (only when named: `--scenarios traces`): what sending traces costs.
 * The sync invocation (local engine) on a server with traces on, sending every span (sampled always, batches every
 * second) over OTLP/HTTP (JSON) to a loopback collector in this process, against the same request on the server of
 * the same store with traces off (the default), in interleaved rounds: requests/s, p50 and the CPU ms per invocation
 * of each server process, and how many spans the collector received per invocation of the traced side.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runLoad } from './load.ts';
import type { BenchOptions } from './options.ts';
import { syncInvocationLoad } from './probes.ts';
import { type ServiceUnderTest, startService, type StoreKind } from './processes.ts';
import { progress } from './progress.ts';
import type { ScenarioResult } from './results.ts';
import { measureRounds } from './rounds.ts';
import { fmt } from './stats.ts';

/** A loopback OTLP/HTTP collector: decodes each JSON export and counts its spans (answers 200 at once). */
interface Collector {
  url: string;
  spans: number;
  exports: number;
  close(): Promise<void>;
}

async function startCollector(): Promise<Collector> {
  const collector = { url: '', spans: 0, exports: 0, close: () => Promise.resolve() };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] };
        for (const resource of body.resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) collector.spans += scope.spans?.length ?? 0;
        collector.exports += 1;
      } catch {
        // Not an export of ours: counted as nothing.
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  collector.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  collector.close = () => new Promise((resolve) => server.close(() => resolve()));
  return collector;
}

export async function measureTraces(
  store: StoreKind,
  off: ServiceUnderTest,
  where: { dir: string; receiverOrigin: string; receiverCaFile: string; upstreamUrl: string },
  opts: BenchOptions,
): Promise<ScenarioResult> {
  const collector = await startCollector();
  progress(`[${store}] starting service serve with traces on (OTLP/HTTP to a loopback collector) on a fresh store`);
  const on = await startService({
    store,
    ...where,
    rpm: 1_000_000,
    label: 'traces',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_TRACES_SAMPLER: 'always_on', OTEL_BSP_SCHEDULE_DELAY: '1000', OTEL_SERVICE_NAME: 'bench' },
  });
  try {
    const request = syncInvocationLoad;
    await runLoad(request(on, opts.smoke ? 1 : 2, 8));
    const scenario = 'sync invocation, traces on';
    const cpuText = (ms: number | undefined) => (ms === undefined ? '' : `, ${ms.toFixed(2)} ms CPU each`);
    const spansBefore = collector.spans;
    const [traced, plain] = await measureRounds(
      [
        { label: 'service', spec: request(on, opts.seconds, opts.connections), cpuSeconds: () => on.cpuSeconds() },
        { label: 'traces off', spec: request(off, opts.seconds, opts.connections), cpuSeconds: () => off.cpuSeconds() },
      ],
      opts.rounds,
      (r, [t, p]) =>
        progress(
          `[${store}] ${scenario} round ${r + 1}/${opts.rounds}: ${fmt(t!.rps)} req/s, p50 ${t!.p50Ms.toFixed(2)} ms${cpuText(t!.cpuMsPerRequest)}; traces off ${fmt(p!.rps)} req/s, p50 ${p!.p50Ms.toFixed(2)} ms${cpuText(p!.cpuMsPerRequest)}`,
        ),
    );
    // The last batches go out within the schedule delay; then the spans per invocation of the traced side.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const invocations = traced!.rounds.reduce((sum, round) => sum + round.requests, 0);
    progress(
      `[${store}] the collector received ${fmt(collector.spans - spansBefore)} spans in ${collector.exports} exports: ${invocations > 0 ? ((collector.spans - spansBefore) / invocations).toFixed(1) : '-'} per invocation`,
    );
    return {
      store,
      scenario,
      connections: opts.connections,
      rps: traced!.rps,
      p50Ms: traced!.p50Ms,
      p99Ms: traced!.p99Ms,
      baseline: 'traces off',
      baselineRps: plain!.rps,
      baselineP50Ms: plain!.p50Ms,
      ratio: traced!.rps / plain!.rps,
      non2xx: traced!.non2xx,
      errors: traced!.errors,
      rounds: traced!.rounds,
      baselineRounds: plain!.rounds,
      ...(traced!.cpuMsPerRequest !== undefined ? { cpuMsPerRequest: traced!.cpuMsPerRequest } : {}),
      ...(plain!.cpuMsPerRequest !== undefined ? { baselineCpuMsPerRequest: plain!.cpuMsPerRequest } : {}),
    };
  } finally {
    await on.stop();
    await on.cleanup();
    await collector.close();
  }
}
