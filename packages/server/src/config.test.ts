/**
 * `loadConfig` reads every setting once: the ones `serve` used to read from `process.env` itself
 * (PRIVATE_BETA, the engines, the STU rates, REDACT_TERMS) and the ones other commands read
 * (SERVICE_URL, OLD_SECRET_KEY) come from the environment it is given, and a wrong one is a
 * ConfigError (one readable line, exit 2), like every other setting.
 */
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';
import { DEFAULT_ENGINE_CONFIG } from './engine/config.ts';
import { DEFAULT_STU_RATES } from './domain/usage/rates.ts';

describe('loadConfig', () => {
  it('has the documented defaults for the settings serve once read itself', () => {
    const config = loadConfig({}, {});
    expect(config.privateBeta).toBe(false);
    expect(config.redactTerms).toEqual([]);
    expect(config.stuRates).toEqual(DEFAULT_STU_RATES);
    expect(config.engines.aliases).toEqual(DEFAULT_ENGINE_CONFIG.aliases);
    expect(config.serviceUrl).toBeUndefined();
    expect(config.oldSecretKey).toBeUndefined();
  });

  it('reads them from the environment it is given, not from process.env', () => {
    const config = loadConfig(
      {},
      {
        PRIVATE_BETA: 'true',
        REDACT_TERMS: ' acme-internal , ,db.acme.lan',
        STU_RATE_PRELUDE: '2000',
        ENGINE_SONATA: 'openai-compatible',
        OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:11434/v1',
        OPENAI_COMPATIBLE_MODEL_SONATA: 'acme-sonata-v2',
        SERVICE_URL: 'http://127.0.0.1:8080',
        OLD_SECRET_KEY: 'the-old-key-of-at-least-32-characters',
      },
    );
    expect(config.privateBeta).toBe(true);
    expect(config.redactTerms).toEqual(['acme-internal', 'db.acme.lan']);
    expect(config.stuRates).toEqual({ ...DEFAULT_STU_RATES, Prelude: 2000 });
    expect(config.engines.aliases.Sonata).toBe('openai-compatible');
    expect(config.engines.openaiCompatible?.models).toEqual({ Sonata: 'acme-sonata-v2' });
    expect(config.serviceUrl).toBe('http://127.0.0.1:8080');
    expect(config.oldSecretKey).toBe('the-old-key-of-at-least-32-characters');
  });

  it('bounds admission at 1024 requests in flight and 256 queued statements, each settable, 0 for none', () => {
    expect(loadConfig({}, {}).admission).toEqual({ maxInFlight: 1024, maxStoreQueue: 256 });
    expect(loadConfig({}, { MAX_REQUESTS_IN_FLIGHT: '200', MAX_STORE_QUEUE: '0' }).admission).toEqual({ maxInFlight: 200, maxStoreQueue: 0 });
    for (const env of [{ MAX_REQUESTS_IN_FLIGHT: '-1' }, { MAX_STORE_QUEUE: '1.5' }, { MAX_STORE_QUEUE: 'many' }]) {
      expect(() => loadConfig({}, env)).toThrow(ConfigError);
    }
    expect(() => loadConfig({}, { MAX_STORE_QUEUE: 'many' })).toThrow('MAX_STORE_QUEUE must be a whole number from 0 (no bound) to 1000000: many');
  });

  it("sizes each process's PostgreSQL pool at 10 connections (DATABASE_POOL_SIZE), settable from 1 to 1000", () => {
    expect(loadConfig({}, {}).databasePoolSize).toBe(10);
    expect(loadConfig({}, { DATABASE_POOL_SIZE: '4' }).databasePoolSize).toBe(4);
    for (const value of ['0', '1001', '2.5', 'many', '-3']) expect(() => loadConfig({}, { DATABASE_POOL_SIZE: value })).toThrow(ConfigError);
    expect(() => loadConfig({}, { DATABASE_POOL_SIZE: '0' })).toThrow('DATABASE_POOL_SIZE must be a whole number of connections from 1 to 1000: 0');
  });

  it('gives the LISTEN connection DATABASE_LISTEN_URL when set beside DATABASE_URL, and nothing else reads it', () => {
    const direct = 'postgres://service@db:5432/service';
    const pooled = 'postgres://service@pgbouncer:6432/service';
    expect(loadConfig({}, { DATABASE_URL: pooled, DATABASE_LISTEN_URL: direct }).databaseListenUrl).toBe(direct);
    expect(loadConfig({}, { DATABASE_URL: pooled }).databaseListenUrl).toBeUndefined();
    expect(loadConfig({}, { DATABASE_URL: pooled, DATABASE_LISTEN_URL: '' }).databaseListenUrl).toBeUndefined();
    // Without DATABASE_URL the store is embedded: there is no LISTEN connection.
    expect(loadConfig({}, { DATABASE_LISTEN_URL: direct }).databaseListenUrl).toBeUndefined();
  });

  it('gives an inbound body 10 s to arrive (INBOUND_BODY_TIMEOUT_MS), settable', () => {
    expect(loadConfig({}, {}).inboundBodyTimeoutMs).toBe(10_000);
    expect(loadConfig({}, { INBOUND_BODY_TIMEOUT_MS: '2500' }).inboundBodyTimeoutMs).toBe(2_500);
    expect(() => loadConfig({}, { INBOUND_BODY_TIMEOUT_MS: 'soon' })).toThrow(ConfigError);
  });

  it('PRIVATE_BETA is on for `true` only', () => {
    expect(loadConfig({}, { PRIVATE_BETA: '1' }).privateBeta).toBe(false);
  });

  it.each([
    [{ ENGINE_PRELUDE: 'gpt' }, 'ENGINE_PRELUDE must be one of local, openai-compatible'],
    [{ ENGINE_SONATA: 'openai-compatible' }, 'OPENAI_COMPATIBLE_BASE_URL must be an http(s) URL'],
    [{ LOCAL_ENGINE_TRIGGERS: 'maybe' }, 'LOCAL_ENGINE_TRIGGERS must be true or false'],
    [{ STU_RATE_CONCERTO: '-1' }, 'STU_RATE_CONCERTO must be a positive number'],
  ])('a wrong engine or rate setting %j is a ConfigError', (env, message) => {
    expect(() => loadConfig({}, env)).toThrow(ConfigError);
    expect(() => loadConfig({}, env)).toThrow(message);
  });

  it('runs one server process per core only where the processes can share the store and the limits', () => {
    const shared = { DATABASE_URL: 'postgres://db/service', REDIS_URL: 'redis://cache' };
    expect(loadConfig({}, {}).workers).toBe(1);
    expect(loadConfig({}, { DATABASE_URL: shared.DATABASE_URL }).workers).toBe(1);
    expect(loadConfig({}, shared).workers).toBe(availableParallelism());
    expect(loadConfig({ workers: '3' }, { ...shared, WORKERS: '5' }).workers).toBe(3);
    expect(loadConfig({}, { WORKERS: '2' }).workers).toBe(2);
    for (const wrong of ['0', '65', '1.5', 'many'])
      expect(() => loadConfig({ workers: wrong }, {})).toThrow(new ConfigError(`--workers (WORKERS) is a whole number from 1 to 64, not ${wrong}.`));
  });
});
