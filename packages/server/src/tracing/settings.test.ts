/**
 * Which `OTEL_*` settings turn traces on, where they go, and the readable refusal of a wrong value (through
 * `loadConfig`, exit 2 as every setting).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.ts';
import { readTraceSettings } from './settings.ts';

describe('trace settings', () => {
  it('are off without any OTEL_* variable, and with OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true whatever else is set', () => {
    expect(readTraceSettings({})).toBeUndefined();
    expect(loadConfig({}, {}).traces).toBeUndefined();
    expect(readTraceSettings({ OTEL_SERVICE_NAME: 'ais', OTEL_TRACES_SAMPLER: 'always_on' })).toBeUndefined();
    expect(readTraceSettings({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBeUndefined();
    expect(readTraceSettings({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBeUndefined();
  });

  it('are on with OTEL_TRACES_EXPORTER=otlp (the default endpoint) or an endpoint alone; the traces endpoint is used as given', () => {
    expect(readTraceSettings({ OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({
      url: 'http://localhost:4318/v1/traces',
      serviceName: 'agent-invocation-service',
      resourceAttributes: {},
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      batch: {},
    });
    expect(readTraceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example:4318/' })?.url).toBe('https://collector.example:4318/v1/traces');
    expect(
      readTraceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp' })
        ?.url,
    ).toBe('https://traces.example/otlp');
  });

  it('read the service name, the resource attributes, the sampler and the batch processor', () => {
    expect(
      readTraceSettings({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-resource,deployment.environment.name=prod%20eu',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_BSP_SCHEDULE_DELAY: '200',
        OTEL_BSP_MAX_QUEUE_SIZE: '4096',
      }),
    ).toMatchObject({
      serviceName: 'from-resource',
      resourceAttributes: { 'service.name': 'from-resource', 'deployment.environment.name': 'prod eu' },
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.25,
      batch: { scheduledDelayMillis: 200, maxQueueSize: 4096 },
    });
    expect(readTraceSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SERVICE_NAME: 'ais', OTEL_RESOURCE_ATTRIBUTES: 'service.name=other' })?.serviceName).toBe(
      'ais',
    );
  });

  it.each([
    [{ OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER must be otlp or none'],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL must be http/json'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'must be an http(s) URL'],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER must be one of'],
    [
      { OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' },
      'OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1',
    ],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_BSP_SCHEDULE_DELAY: 'soon' }, 'OTEL_BSP_SCHEDULE_DELAY must be a whole number'],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_RESOURCE_ATTRIBUTES: 'team' }, 'OTEL_RESOURCE_ATTRIBUTES must be key=value pairs'],
  ])('refuse %j with one readable line (a ConfigError through loadConfig)', (env, message) => {
    expect(() => loadConfig({}, env)).toThrow(ConfigError);
    expect(() => loadConfig({}, env)).toThrow(message);
  });
});
