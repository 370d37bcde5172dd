/**
 * @module The OpenTelemetry SDK, started only when traces are on (runtime/index.ts imports this file then, and this
 * file imports the SDK's packages then: a server with traces off never loads them, in the sources or the build).
 * It registers the W3C trace-context propagator, the async-context manager and a tracer provider whose batch
 * processor sends spans over OTLP/HTTP (JSON), and hands its tracer to `tracing/index.ts`. `stop()` sends what is
 * still queued and turns traces off (the graceful shutdown calls it last).
 */
import { context, propagation, trace } from '@opentelemetry/api';
import type { Sampler } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { useTracer } from './index.ts';
import type { TraceSettings } from './settings.ts';

export interface StartedTracing {
  /** Sends the spans still queued, then stops the SDK; never throws (a collector that is down loses them). */
  stop(): Promise<void>;
}

/** The tracer's name: the instrumentation scope of every span. */
export const TRACER_NAME = 'agent-invocation-service';

export async function startTracing(settings: TraceSettings): Promise<StartedTracing> {
  const [
    { TracerProvider, BatchSpanProcessor, AlwaysOnSampler, AlwaysOffSampler, ParentBasedSampler, TraceIdRatioBasedSampler },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    { W3CTraceContextPropagator },
    { AsyncLocalStorageContextManager },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/core'),
    import('@opentelemetry/context-async-hooks'),
  ]);
  const root = (): Sampler => {
    if (settings.sampler.endsWith('always_off')) return new AlwaysOffSampler();
    if (settings.sampler.endsWith('traceidratio')) return new TraceIdRatioBasedSampler(settings.samplerRatio);
    return new AlwaysOnSampler();
  };
  const sampler = settings.sampler.startsWith('parentbased_') ? new ParentBasedSampler({ root: root() }) : root();
  const exporter = new OTLPTraceExporter({ url: settings.url });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ ...settings.resourceAttributes, [ATTR_SERVICE_NAME]: settings.serviceName }),
    sampler,
    spanProcessors: [new BatchSpanProcessor({ exporter, ...settings.batch })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  useTracer(provider.getTracer(TRACER_NAME));
  return {
    async stop() {
      useTracer(undefined);
      await provider.shutdown().catch(() => {});
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
