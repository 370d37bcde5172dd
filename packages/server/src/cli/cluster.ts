/**
 * @module `service serve --workers N`: N server processes behind one port (node:cluster). The
 * primary process only forks, restarts and stops the workers; each worker is a whole server
 * (`startServer`): its own store pool and background worker, sharing the store through PostgreSQL
 * and the rate limits through Redis, which is why more than one worker needs both (config.ts).
 *
 * The primary accepts the connections and hands them to the workers in turn (Node's round-robin
 * scheduling). The first worker prints the start-up lines; the others print only what goes wrong.
 * A worker that dies after it listened is replaced; one that fails before it listened (a wrong
 * setting, a port in use) stops the whole server with its exit code, instead of a fork loop.
 * SIGTERM or SIGINT stops every worker gracefully (each drains its own requests), then the primary.
 */
import cluster, { type Worker } from 'node:cluster';
import { ConfigError, type ServerConfig } from '../config.ts';

/** How a worker learns its place (1…N) from the primary: metrics port offset, who prints. */
const INDEX_ENV = 'SERVICE_WORKER_INDEX';

/** Messages a worker sends its primary. */
type WorkerMessage = { kind: 'listening'; url: string };

/** Whether this process is one of `--workers N`'s server processes, and which (1…N); undefined in a lone server. */
export function workerIndex(env: NodeJS.ProcessEnv): number | undefined {
  if (!cluster.isWorker) return undefined;
  const index = Number(env[INDEX_ENV]);
  return Number.isInteger(index) && index > 0 ? index : undefined;
}

/** Whether `serve` should fork workers in this process instead of serving itself. */
export function isClusterPrimary(config: ServerConfig): boolean {
  return config.workers > 1 && cluster.isPrimary;
}

/**
 * Refuses more than one worker where the processes could not share what must be shared: the
 * embedded store belongs to one process, and without Redis each process would keep its own
 * rate limits (N times the published limits).
 */
export function assertWorkersPossible(config: ServerConfig): void {
  if (config.workers <= 1) return;
  if (!config.databaseUrl)
    throw new ConfigError(
      `--workers ${config.workers}: the embedded store is one process. Set DATABASE_URL (PostgreSQL) and REDIS_URL to run several, or use --workers 1.`,
    );
  if (!config.redisUrl)
    throw new ConfigError(`--workers ${config.workers} needs REDIS_URL: the processes must share the rate limits. Set it, or use --workers 1.`);
}

/** A lone server's start-up line: one process, and how to have more (the primary of several says so itself). */
export function workersLine(config: ServerConfig): string {
  return config.databaseUrl
    ? 'Workers: 1 server process (--workers N or WORKERS for more; N processes need REDIS_URL too).'
    : 'Workers: 1 server process (the embedded store is one process; DATABASE_URL and REDIS_URL allow --workers N).';
}

/** In a worker: tells the primary the server listens (the primary prints the summary line). */
export function reportListening(url: string): void {
  const message: WorkerMessage = { kind: 'listening', url };
  if (cluster.isWorker) process.send?.(message);
}

/** The settings of worker `index`: the same, but its own metrics port (METRICS_PORT + index − 1). */
export function workerConfig(config: ServerConfig, index: number | undefined): ServerConfig {
  if (index === undefined || config.metricsPort === undefined || config.metricsPort === 0) return config;
  return { ...config, metricsPort: config.metricsPort + index - 1 };
}

/**
 * Runs the primary: forks `config.workers` workers, replaces one that dies after listening, and
 * resolves with the exit code once every worker has stopped (after SIGTERM/SIGINT, or after a
 * worker failed to start).
 */
export function runPrimary(config: ServerConfig, say: (line: string) => void): Promise<number> {
  const count = config.workers;
  const slots = new Map<Worker, number>();
  const listening = new Set<number>();
  let stopping = false;
  let exitCode = 0;

  let announced = false;

  const fork = (index: number) => {
    const worker = cluster.fork({ [INDEX_ENV]: String(index) });
    slots.set(worker, index);
    worker.on('message', (message: WorkerMessage) => {
      if (message?.kind !== 'listening') return;
      listening.add(index);
      if (!announced && listening.size === count) {
        announced = true;
        say(`Workers: ${count} server processes share ${message.url} (node:cluster; --workers or WORKERS).`);
      }
    });
    worker.on('exit', (code, signal) => {
      slots.delete(worker);
      const started = listening.has(index);
      listening.delete(index);
      if (stopping) return;
      if (!started) {
        // Failed before it could serve: the others would fail the same way.
        say(`Worker ${index} stopped before it listened (${signal ?? `exit code ${code}`}); stopping.`);
        exitCode = code && code > 0 ? code : 1;
        stop();
        return;
      }
      say(`Worker ${index} exited (${signal ?? `exit code ${code}`}); starting another.`);
      fork(index);
    });
  };

  const stop = () => {
    if (stopping) return;
    stopping = true;
    for (const worker of slots.keys()) worker.process.kill('SIGTERM');
  };

  return new Promise((resolve) => {
    const onSignal = () => {
      say('Stopping the workers.');
      stop();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const done = () => {
      if (!stopping || slots.size > 0) return;
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      cluster.off('exit', done);
      resolve(exitCode);
    };
    cluster.on('exit', done);
    for (let index = 1; index <= count; index += 1) fork(index);
  });
}
