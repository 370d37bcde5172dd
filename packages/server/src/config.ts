/**
 * @module Deployment settings, from command-line flags first, then the environment, then defaults.
 * Relative paths are resolved against the current directory, so the CLI behaves the same when
 * run from the repository root or from the package.
 *
 * `loadConfig` is the one place that reads the environment: `serve` (through `createRuntime`) and
 * every other command take their settings from the `ServerConfig` it returns, and nothing under
 * `src/` reads `process.env` on its own. A wrong value is a `ConfigError`: one readable line, exit 2.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { readLogSettings, type LogFormat, type LogLevel } from './log/index.ts';
import { parseCorsOrigins } from './middleware/cors/index.ts';
import { MIN_ENV_TOKEN_LENGTH } from './domain/operators/index.ts';
import { readStuRates, type StuRates } from './domain/usage/rates.ts';
import { readEngineConfig, type EngineConfig } from './engine/config.ts';
import { messageOf } from './caught.ts';
import { DEFAULT_POOL_SIZE } from './store/postgres.ts';
import { readTraceSettings, type TraceSettings } from './tracing/settings.ts';

export interface ServerConfig {
  /** PGlite data directory (absolute); unused when databaseUrl is set. */
  dataDir: string;
  databaseUrl: string | undefined;
  /**
   * Where the LISTEN connection goes (DATABASE_LISTEN_URL) when DATABASE_URL reaches PostgreSQL through a pooler in
   * transaction mode (store/pooler.ts); DATABASE_URL when unset.
   */
  databaseListenUrl: string | undefined;
  /** PostgreSQL connections of each server process's pool (DATABASE_POOL_SIZE, default 10); plus one listener each. */
  databasePoolSize: number;
  redisUrl: string | undefined;
  port: number;
  host: string;
  /**
   * Server processes behind the port (`--workers`, WORKERS; cli/cluster.ts). Default: the machine's
   * cores with DATABASE_URL and REDIS_URL (what the processes must share), else 1.
   */
  workers: number;
  tls: { certFile: string; keyFile: string } | undefined;
  /** Reverse proxies whose X-Forwarded-For is believed for the per-IP limit. */
  trustProxy: number;
  /** Key for webhook signing secrets at rest (SECRET_KEY); see runtime/secret-key.ts when absent. */
  secretKey: string | undefined;
  /** Hosts, IPs or CIDRs outbound deliveries may reach although private or loopback (WEBHOOK_ALLOW_HOSTS). */
  webhookAllowHosts: string[];
  /** Worker polling interval in ms (WEBHOOK_POLL_MS, default 1000). */
  webhookPollMs: number;
  /** Budget of one delivery attempt in ms (WEBHOOK_DELIVERY_TIMEOUT_MS, default 10000). */
  webhookTimeoutMs: number;
  /** Lease of a run being executed, in ms (RUN_LEASE_MS, default 60000): how soon a run whose instance died is ended. */
  runLeaseMs: number;
  /**
   * How long a streamed run goes on after its client left (STREAM_RESUME_MS, default 10000): a client
   * that follows its events again within it (GET /runs/{run_id}/events) gets the rest; otherwise the
   * run is canceled, and what it produced is billed.
   */
  streamResumeMs: number;
  /** Hours after which a finished run's fragments are merged into one in its event log (RUN_EVENT_RETENTION_HOURS, default 168). */
  runEventRetentionHours: number;
  /** Days after which the worker deletes a workspace's audit events (AUDIT_RETENTION_DAYS, default 365). */
  auditRetentionDays: number;
  /** Browser origins allowed by CORS (CORS_ORIGINS, exact origins); none by default. */
  corsOrigins: string[];
  /** An operator token the server accepts beside the stored ones (OPERATOR_TOKEN, 32 characters or more). */
  operatorToken: string | undefined;
  /** Port of the Prometheus `/metrics` listener (METRICS_PORT); no listener when unset. */
  metricsPort: number | undefined;
  /** Address the metrics listener binds (METRICS_HOST, default HOST). */
  metricsHost: string;
  /**
   * Admission control (middleware/admission): requests in progress at most (MAX_REQUESTS_IN_FLIGHT, default
   * 1024) and statements waiting for the store at most (MAX_STORE_QUEUE, default 256); past either, 503 at
   * once with Retry-After. 0 turns a bound off.
   */
  admission: { maxInFlight: number; maxStoreQueue: number };
  /** How long a graceful shutdown waits for requests in flight (SHUTDOWN_GRACE_MS, default 10000). */
  shutdownGraceMs: number;
  /** Time a client has to send the request headers (HEADERS_TIMEOUT_MS, default 10000). */
  headersTimeoutMs: number;
  /** Time a client has to send the whole request, body included (REQUEST_TIMEOUT_MS, default 30000). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open (KEEP_ALIVE_TIMEOUT_MS, default 5000). */
  keepAliveTimeoutMs: number;
  /** Time an inbound webhook's body has to arrive once its slug and limit passed (INBOUND_BODY_TIMEOUT_MS, default 10000). */
  inboundBodyTimeoutMs: number;
  /** LOG_LEVEL (default info) and LOG_FORMAT (json, or pretty for development). */
  log: { level: LogLevel; format: LogFormat };
  /** Private beta (PRIVATE_BETA=true): the public agent API answers 404 not_found. */
  privateBeta: boolean;
  /** Which engine serves each alias (ENGINE_<ALIAS>, OPENAI_COMPATIBLE_*, LOCAL_ENGINE_*; engine/config.ts). */
  engines: EngineConfig;
  /** More names the redactor removes beside the engines' own (REDACT_TERMS, comma-separated). */
  redactTerms: string[];
  /** STU per token and alias (STU_RATE_<ALIAS>; domain/usage/rates.ts). */
  stuRates: StuRates;
  /** The running server the `workspaces` and `users` commands call instead of opening the store (SERVICE_URL). */
  serviceUrl: string | undefined;
  /** The key in use until now, for `secret-key rotate` (OLD_SECRET_KEY); the key file when unset. */
  oldSecretKey: string | undefined;
  /** Traces over OTLP/HTTP (the standard `OTEL_*` variables; tracing/settings.ts); undefined when off, the default. */
  traces: TraceSettings | undefined;
}

interface ConfigFlags {
  'data-dir'?: string | undefined;
  port?: string | undefined;
  host?: string | undefined;
  workers?: string | undefined;
  'tls-cert'?: string | undefined;
  'tls-key'?: string | undefined;
}

const DEFAULT_PORT = 8080;
/**
 * Admission bounds. Requests in progress include sync invocations waiting for a slow engine, so
 * that bound is wide; the store's queue is what grows when the instance itself is the bottleneck
 * (docs/performance.md has the measurements behind 64).
 */
const DEFAULT_MAX_IN_FLIGHT = 1024;
const DEFAULT_MAX_STORE_QUEUE = 256;

export function loadConfig(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): ServerConfig {
  const certFile = flags['tls-cert'] ?? env.TLS_CERT;
  const keyFile = flags['tls-key'] ?? env.TLS_KEY;
  if (Boolean(certFile) !== Boolean(keyFile)) throw new ConfigError('--tls-cert and --tls-key go together: give both or neither.');
  const headersTimeoutMs = parseMs(env.HEADERS_TIMEOUT_MS, 10_000, 'HEADERS_TIMEOUT_MS');
  const requestTimeoutMs = parseMs(env.REQUEST_TIMEOUT_MS, 30_000, 'REQUEST_TIMEOUT_MS');
  if (headersTimeoutMs > requestTimeoutMs) throw new ConfigError('HEADERS_TIMEOUT_MS must not be above REQUEST_TIMEOUT_MS.');
  return {
    dataDir: resolve(cwd, flags['data-dir'] ?? env.DATA_DIR ?? './data'),
    databaseUrl: env.DATABASE_URL || undefined,
    databaseListenUrl: env.DATABASE_URL ? env.DATABASE_LISTEN_URL || undefined : undefined,
    databasePoolSize: parsePoolSize(env.DATABASE_POOL_SIZE),
    redisUrl: env.REDIS_URL || undefined,
    port: parsePort(flags.port ?? env.PORT),
    workers: parseWorkers(flags.workers ?? env.WORKERS, Boolean(env.DATABASE_URL && env.REDIS_URL)),
    host: flags.host ?? env.HOST ?? '127.0.0.1',
    tls: certFile && keyFile ? { certFile: resolve(cwd, certFile), keyFile: resolve(cwd, keyFile) } : undefined,
    trustProxy: parseCount(env.TRUST_PROXY),
    secretKey: env.SECRET_KEY || undefined,
    webhookAllowHosts: list(env.WEBHOOK_ALLOW_HOSTS),
    webhookPollMs: parseMs(env.WEBHOOK_POLL_MS, 1_000, 'WEBHOOK_POLL_MS'),
    webhookTimeoutMs: parseMs(env.WEBHOOK_DELIVERY_TIMEOUT_MS, 10_000, 'WEBHOOK_DELIVERY_TIMEOUT_MS'),
    runLeaseMs: parseMs(env.RUN_LEASE_MS, 60_000, 'RUN_LEASE_MS'),
    streamResumeMs: parseMs(env.STREAM_RESUME_MS, 10_000, 'STREAM_RESUME_MS'),
    runEventRetentionHours: parseHours(env.RUN_EVENT_RETENTION_HOURS, 168, 'RUN_EVENT_RETENTION_HOURS'),
    auditRetentionDays: parseDays(env.AUDIT_RETENTION_DAYS, 365, 'AUDIT_RETENTION_DAYS'),
    corsOrigins: corsOrigins(env.CORS_ORIGINS),
    operatorToken: operatorToken(env.OPERATOR_TOKEN),
    metricsPort: env.METRICS_PORT ? parsePort(env.METRICS_PORT) : undefined,
    metricsHost: env.METRICS_HOST ?? flags.host ?? env.HOST ?? '127.0.0.1',
    admission: {
      maxInFlight: parseBound(env.MAX_REQUESTS_IN_FLIGHT, DEFAULT_MAX_IN_FLIGHT, 'MAX_REQUESTS_IN_FLIGHT'),
      maxStoreQueue: parseBound(env.MAX_STORE_QUEUE, DEFAULT_MAX_STORE_QUEUE, 'MAX_STORE_QUEUE'),
    },
    shutdownGraceMs: parseMs(env.SHUTDOWN_GRACE_MS, 10_000, 'SHUTDOWN_GRACE_MS'),
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: parseMs(env.KEEP_ALIVE_TIMEOUT_MS, 5_000, 'KEEP_ALIVE_TIMEOUT_MS'),
    inboundBodyTimeoutMs: parseMs(env.INBOUND_BODY_TIMEOUT_MS, 10_000, 'INBOUND_BODY_TIMEOUT_MS'),
    log: logSettings(env),
    privateBeta: env.PRIVATE_BETA === 'true',
    engines: setting(() => readEngineConfig(env)),
    redactTerms: list(env.REDACT_TERMS),
    stuRates: setting(() => readStuRates(env)),
    serviceUrl: env.SERVICE_URL || undefined,
    oldSecretKey: env.OLD_SECRET_KEY || undefined,
    traces: setting(() => readTraceSettings(env)),
  };
}

/** A setting read by its own module's reader, whose error becomes a ConfigError (one line, exit 2). */
function setting<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw new ConfigError(messageOf(err));
  }
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function logSettings(env: NodeJS.ProcessEnv): { level: LogLevel; format: LogFormat } {
  return setting(() => readLogSettings(env));
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

function operatorToken(value: string | undefined): string | undefined {
  if (!value) return undefined;
  if (value.length < MIN_ENV_TOKEN_LENGTH) throw new ConfigError(`OPERATOR_TOKEN needs at least ${MIN_ENV_TOKEN_LENGTH} characters.`);
  return value;
}

function corsOrigins(value: string | undefined): string[] {
  return setting(() => parseCorsOrigins(value));
}

function parsePort(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_PORT;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`Not a port number: ${value}`);
  return port;
}

function parseCount(value: string | undefined): number {
  if (!value) return 0;
  if (value === 'true') return 1;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new ConfigError(`TRUST_PROXY must be a number of proxies: ${value}`);
  return n;
}

/** DATABASE_POOL_SIZE: 1 to 1,000 connections per process. */
function parsePoolSize(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_POOL_SIZE;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1_000) throw new ConfigError(`DATABASE_POOL_SIZE must be a whole number of connections from 1 to 1000: ${value}`);
  return n;
}

/** A count bound: an integer from 0 (no bound) to 1,000,000. */
function parseBound(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 1_000_000) throw new ConfigError(`${name} must be a whole number from 0 (no bound) to 1000000: ${value}`);
  return n;
}

function parseHours(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 87_600) throw new ConfigError(`${name} must be a whole number of hours from 1 to 87600: ${value}`);
  return n;
}

function parseDays(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 36_500) throw new ConfigError(`${name} must be a whole number of days from 1 to 36500: ${value}`);
  return n;
}

function parseMs(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 10 || n > 3_600_000) throw new ConfigError(`${name} must be milliseconds between 10 and 3600000: ${value}`);
  return n;
}

/** `--workers N` / WORKERS: 1 to 64 processes; by default the cores when the store and limits can be shared. */
function parseWorkers(value: string | undefined, shareable: boolean): number {
  if (value === undefined || value === '') return shareable ? availableParallelism() : 1;
  const workers = Number(value);
  if (!Number.isInteger(workers) || workers < 1 || workers > 64) throw new ConfigError(`--workers (WORKERS) is a whole number from 1 to 64, not ${value}.`);
  return workers;
}
