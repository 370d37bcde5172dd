/**
 * @module Whether traces are on, and how they are sent, from the standard `OTEL_*` variables (read by
 * `loadConfig`, config.ts). Off unless asked: `OTEL_TRACES_EXPORTER=otlp`, or an OTLP endpoint set
 * (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT`) with `OTEL_TRACES_EXPORTER` unset.
 * `OTEL_TRACES_EXPORTER=none` or `OTEL_SDK_DISABLED=true` keeps them off whatever else is set. Spans go over
 * OTLP/HTTP in its JSON encoding; the exporter itself reads `OTEL_EXPORTER_OTLP_HEADERS`, `_TIMEOUT` and
 * `_COMPRESSION` (and their `_TRACES_` forms), as the specification says.
 */

export type TraceSamplerName = 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';

export interface TraceSettings {
  /** Where spans are sent: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as given, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
  readonly url: string;
  /** `OTEL_SERVICE_NAME`, else `service.name` of `OTEL_RESOURCE_ATTRIBUTES`, else `agent-invocation-service`. */
  readonly serviceName: string;
  /** `OTEL_RESOURCE_ATTRIBUTES`: `key=value` pairs, comma-separated, percent-encoded. */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  /** `OTEL_TRACES_SAMPLER` (default `parentbased_always_on`) and its ratio (`OTEL_TRACES_SAMPLER_ARG`, default 1). */
  readonly sampler: TraceSamplerName;
  readonly samplerRatio: number;
  /** The batch span processor: `OTEL_BSP_SCHEDULE_DELAY`, `_MAX_QUEUE_SIZE`, `_MAX_EXPORT_BATCH_SIZE`, `_EXPORT_TIMEOUT`. */
  readonly batch: { scheduledDelayMillis?: number; maxQueueSize?: number; maxExportBatchSize?: number; exportTimeoutMillis?: number };
}

export const DEFAULT_SERVICE_NAME = 'agent-invocation-service';
const DEFAULT_ENDPOINT = 'http://localhost:4318';
const SAMPLERS: readonly TraceSamplerName[] = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
];

/** The trace settings, or `undefined` when traces are off. Throws an `Error` with one readable line on a wrong value. */
export function readTraceSettings(env: NodeJS.ProcessEnv): TraceSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() || undefined;
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || undefined;
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || undefined;
  if (exporter === 'none') return undefined;
  if (exporter !== undefined && exporter !== 'otlp') throw new Error(`OTEL_TRACES_EXPORTER must be otlp or none (traces are sent over OTLP/HTTP): ${exporter}`);
  if (exporter === undefined && tracesEndpoint === undefined && endpoint === undefined) return undefined;
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim() || 'http/json';
  if (protocol !== 'http/json')
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/json (the OTLP/HTTP JSON encoding, which collectors accept on port 4318): ${protocol}`);
  const url = tracesEndpoint ?? `${(endpoint ?? DEFAULT_ENDPOINT).replace(/\/+$/, '')}/v1/traces`;
  if (!/^https?:\/\/[^/\s]+/i.test(url))
    throw new Error('The OTLP traces endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT) must be an http(s) URL.');
  const sampler = (env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on') as TraceSamplerName;
  if (!SAMPLERS.includes(sampler)) throw new Error(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}: ${sampler}`);
  const resource = resourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES);
  return {
    url,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || resource['service.name'] || DEFAULT_SERVICE_NAME,
    resourceAttributes: resource,
    sampler,
    samplerRatio: samplerRatio(env.OTEL_TRACES_SAMPLER_ARG, sampler),
    batch: {
      ...optionalCount('scheduledDelayMillis', env.OTEL_BSP_SCHEDULE_DELAY, 'OTEL_BSP_SCHEDULE_DELAY'),
      ...optionalCount('maxQueueSize', env.OTEL_BSP_MAX_QUEUE_SIZE, 'OTEL_BSP_MAX_QUEUE_SIZE'),
      ...optionalCount('maxExportBatchSize', env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
      ...optionalCount('exportTimeoutMillis', env.OTEL_BSP_EXPORT_TIMEOUT, 'OTEL_BSP_EXPORT_TIMEOUT'),
    },
  };
}

function samplerRatio(value: string | undefined, sampler: TraceSamplerName): number {
  if (value === undefined || value.trim() === '' || !sampler.endsWith('traceidratio')) return 1;
  const ratio = Number(value);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) throw new Error(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1: ${value}`);
  return ratio;
}

function optionalCount<K extends string>(key: K, value: string | undefined, name: string): Partial<Record<K, number>> {
  if (value === undefined || value.trim() === '') return {};
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 10_000_000) throw new Error(`${name} must be a whole number from 1 to 10000000: ${value}`);
  return { [key]: n } as Partial<Record<K, number>>;
}

function resourceAttributes(value: string | undefined): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const pair of (value ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`OTEL_RESOURCE_ATTRIBUTES must be key=value pairs, comma-separated: ${pair.trim()}`);
    try {
      attributes[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new Error(`OTEL_RESOURCE_ATTRIBUTES holds a broken percent-encoding: ${pair.trim()}`);
    }
  }
  return attributes;
}
