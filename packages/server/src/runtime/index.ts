/**
 * @module The composition root of a running server: `createRuntime(config)` builds, from the one
 * `ServerConfig` (config.ts), everything `service serve` runs: the store (behind its secret key),
 * the logger, the metrics, Redis and its rate limiter, the engines, the STU rates, the cancel bus,
 * the app and its services (`buildServices`, services.ts), and the worker with the inbound run
 * executor and the sweeper of interrupted runs. `cli/serve.ts` only starts it (HTTP(S) listener,
 * metrics listener, start-up lines, first start, signals and the graceful stop) and stops it.
 *
 * Nothing here reads the environment: every setting comes from `config`.
 */
import { auditRetentionSweeper } from '../domain/audit/index.ts';
import type { OpenDb } from '../store/db.ts';
import { embeddedStoreUpkeep } from '../store/upkeep.ts';
import type { Redis } from 'ioredis';
import { createApp, type CreatedApp } from '../app.ts';
import { systemClock, type Clock } from '../clock.ts';
import type { ServerConfig } from '../config.ts';
import { createCancelBus, type CancelBus } from '../domain/runs/cancel-bus.ts';
import { createRunEventHub, runLogCompactor, type RunEventHub } from '../domain/run-events/index.ts';
import { InboundRunWaits, inboundRunExecutor, sweepInterruptedRuns, type SweepResult } from '../domain/runs/index.ts';
import { sealClearTotpSecrets } from '../domain/sessions/totp-secret.ts';
import { SEALED_SECRET_HINT, SealedSecretUnreadable } from '../domain/webhooks/secret-box.ts';
import { closeEngines, createEngines, type Engines, loadTokenizer } from '../engine/index.ts';
import { createLogger, flushLog, type Logger } from '../log/index.ts';
import { createMetrics, type Metrics } from '../metrics/index.ts';
import { connectRedis, createRedisLimiter } from '../rate-limits/index.ts';
import type { Services } from '../services.ts';
import { startWorker, type Worker } from '../worker/index.ts';
import { logDeliveryAttempt } from '../worker/attempt-log.ts';
import type { InboundRunExecutor } from '../worker/inbound-runs.ts';
import { startResumer, type Resumer } from '../worker/resumer.ts';
import type { ResumeRun } from '../domain/runs/index.ts';
import { randomBase62 } from '../random.ts';
import { resolveSecretKey } from './secret-key.ts';
import { unopenableSecret } from './sealed-secrets.ts';
import { openCliStore, type CliStore } from './store.ts';

interface Runtime {
  app: CreatedApp['app'];
  services: Services;
  store: CliStore;
  /** Redis when REDIS_URL is set: the shared rate-limit windows. */
  redis: Redis | undefined;
  /** Prometheus metrics when METRICS_PORT is set. */
  metrics: Metrics | undefined;
  logger: Logger;
  /** Outbound deliveries and inbound runs; already started (it resumes from the store). */
  worker: Worker;
  /** The column holding a secret the configured SECRET_KEY cannot open, if any (said at start). */
  unopenableSecret: string | undefined;
  /** Whether spans are sent (the `OTEL_*` settings turned traces on; said at start). */
  traces: boolean;
  /**
   * After the graceful stop (cli/shutdown.ts), which stopped the worker: closes the kept MCP sessions, the engines'
   * kept-alive connections, Redis and the store.
   */
  close(): Promise<void>;
  /** A start that failed half-way: stops the worker and drops the connections at once. */
  abort(): Promise<void>;
}

export interface RuntimeOptions {
  /**
   * The continuation of a run resumed after an approval: the run service's (`runs.resume`: the agent loop goes on)
   * unless a test gives its own. This instance's resumer claims the runs whose approval was decided or expired
   * (worker/resumer.ts).
   */
  resume?: ResumeRun;
}

export async function createRuntime(config: ServerConfig, clock: Clock = systemClock, options: RuntimeOptions = {}): Promise<Runtime> {
  // Before the store is opened: with DATABASE_URL and no SECRET_KEY nothing is touched.
  const secretKey = await resolveSecretKey(config);
  // Traces first, so the app's request spans and the statements' spans are on from the first request; with traces
  // off (the default) the SDK is never imported and every call site finds no tracer.
  const tracing = config.traces ? await (await import('../tracing/sdk.ts')).startTracing(config.traces) : undefined;
  const store = await openCliStore(config, 'serve');
  const redis = config.redisUrl ? connectRedis(config.redisUrl) : undefined;
  const logger = createLogger(config.log);
  const metrics = config.metricsPort !== undefined ? createMetrics({ db: store.db, clock }) : undefined;
  let worker: Worker | undefined;
  let resumer: Resumer | undefined;
  let engines: Engines | undefined;
  try {
    // Several instances share PostgreSQL: a cancel answered by one reaches the one executing the run.
    let cancelBus: CancelBus | undefined;
    let runEvents: RunEventHub | undefined;
    if (config.databaseUrl) {
      cancelBus = await createCancelBus(store.db, { onDown: () => logger.warn({}, 'cancel listener lost its connection; reconnecting') });
      // A run's live events reach readers on every instance (GET /runs/{run_id}/events).
      runEvents = createRunEventHub(store.db, { logError: (err) => logger.error({ err }, 'run event notification failed') });
      await runEvents.listenToBus();
    }
    // Counting tokens is on every invocation's path: its tables are loaded now, not by the first request.
    loadTokenizer();
    // Aliases -> engines (ENGINE_<ALIAS>, OPENAI_COMPATIBLE_*) and STU rates (STU_RATE_<ALIAS>).
    engines = createEngines(config.engines);
    const { app, services } = createApp({
      clock,
      logger,
      ...(cancelBus ? { cancelBus } : {}),
      ...(runEvents ? { runEvents } : {}),
      ...(metrics ? { metrics } : {}),
      db: store.db,
      config: {
        trustProxy: config.trustProxy,
        privateBeta: config.privateBeta,
        corsOrigins: config.corsOrigins,
        inboundBodyTimeoutMs: config.inboundBodyTimeoutMs,
      },
      engines,
      // Names the redactor removes beside the engines' own (model names, provider host and key): REDACT_TERMS.
      redactTerms: config.redactTerms,
      stuRates: config.stuRates,
      ...(redis ? { limiter: createRedisLimiter({ redis }), redis } : {}),
      webhooks: { secretKey, allowList: config.webhookAllowHosts, wake: () => worker?.wake() },
      runLeaseMs: config.runLeaseMs,
      streamResumeMs: config.streamResumeMs,
      operatorToken: config.operatorToken,
      admission: config.admission,
    });
    // TOTP secrets an earlier version stored in clear are sealed now, before anyone signs in.
    await sealClearTotpSecrets(store.db, services.webhooks.secretBox);
    const unopenable = await unopenableSecret(store.db, services.webhooks.secretBox);
    // Not ready while they do not open: sign-ins and webhooks that need them would answer 503.
    services.health.recordSealedSecrets(unopenable);
    // Outbound deliveries (and inbound runs) survive restarts: the worker resumes from the store.
    worker = startWorker({
      db: store.db,
      clock: services.clock,
      secretBox: services.webhooks.secretBox,
      policy: { allowList: services.webhooks.allowList },
      pollMs: config.webhookPollMs,
      timeoutMs: config.webhookTimeoutMs,
      executeInboundRun: inboundRuns(services, logger),
      logError: (error) => {
        // A destination's signing secret sealed under another key: not the store's failure; the line says how to repair it.
        if (error instanceof SealedSecretUnreadable) return logger.error({ err: error }, SEALED_SECRET_HINT);
        metrics?.backendErrors.inc({ backend: 'store' });
        logger.error({ err: error }, 'worker tick failed; retrying at the next poll');
      },
      onAttempt: (attempt) => logDeliveryAttempt(logger, metrics, attempt),
      sweepInterruptedRuns: interruptedRunSweeper(store.db, services, logger, config.runEventRetentionHours, config.auditRetentionDays),
    });
    const started = worker;
    // Runs whose approval was decided (on any instance) or expired go on here when this instance claims them first.
    // Named in the checkpoints it claims (run_checkpoints.claimed_by); never shown to a client.
    const instance = `inst_${randomBase62(12)}`;
    resumer = await startResumer({
      db: store.db,
      claim: () => services.runs.claimResumption(instance),
      releaseLostClaims: () => services.runs.releaseLostClaims(),
      resume: options.resume ?? ((resumption) => services.runs.resume(resumption)),
      logError: (error) => logger.error({ err: error }, 'resuming a run failed'),
    });
    const resuming = resumer;
    const serving = engines;
    return {
      app,
      services,
      store,
      redis,
      metrics,
      logger,
      worker: started,
      unopenableSecret: unopenable,
      traces: tracing !== undefined,
      async close() {
        await resuming?.stop();
        await services.mcpConnector.close();
        await closeEngines(serving);
        await redis?.quit().catch(() => {});
        await store.close();
        // The spans still queued (the last requests', the worker's) go out before the process exits.
        await tracing?.stop();
        logger.info({}, 'stopped');
        // The log is written asynchronously: what is still queued goes out before the process exits.
        flushLog(logger);
      },
      async abort() {
        await resuming?.stop();
        await started.stop();
        await services.mcpConnector.close();
        await closeEngines(serving);
        redis?.disconnect();
        await store.close();
        await tracing?.stop();
      },
    };
  } catch (err) {
    await resumer?.stop();
    await worker?.stop();
    if (engines) await closeEngines(engines);
    redis?.disconnect();
    await store.close();
    await tracing?.stop();
    throw err;
  }
}

/** The inbound run executor the worker hands claimed inbound events to: the run service executes them. */
function inboundRuns(services: Services, logger: Logger): InboundRunExecutor {
  const execute = inboundRunExecutor(services.runs, (error) => logger.error({ err: error }, 'inbound run failed'));
  return async (run) => {
    const fields = { runId: run.runId, workspaceId: run.workspaceId, eventId: run.eventId };
    try {
      await execute(run);
    } catch (error) {
      if (error instanceof InboundRunWaits) {
        logger.info({ ...fields, budget: error.budget, retryAfterMs: error.retryAfterMs }, 'inbound run waits: runs in progress hold the budget it needs');
      }
      throw error;
    }
    logger.info(fields, 'inbound run handed over');
  };
}

/**
 * Every worker tick: runs whose instance died (kill -9, a crash), failed or handed over again once their lease ran
 * out; at most once a minute, the run event logs past their retention, the audit log past its own, and on the
 * embedded store one table's vacuum or analysis (store/upkeep.ts).
 */
function interruptedRunSweeper(db: OpenDb, services: Services, logger: Logger, retentionHours: number, auditRetentionDays: number): () => Promise<SweepResult> {
  const compact = runLogCompactor({ db, clock: services.clock, retentionMs: retentionHours * 3_600_000 });
  // The audit log past AUDIT_RETENTION_DAYS, at most once a minute like the compaction.
  const expireAudit = auditRetentionSweeper({ db, clock: services.clock, retentionDays: auditRetentionDays });
  const upkeep = embeddedStoreUpkeep({ db, clock: services.clock });
  return async () => {
    const swept = await sweepInterruptedRuns({ db, clock: services.clock, limits: services.budget.limits });
    if (swept.failed > 0 || swept.retried > 0) logger.warn({ ...swept }, 'runs of a stopped instance swept (lease ran out)');
    await compact();
    await expireAudit();
    await upkeep();
    return swept;
  };
}
