/**
 * @module `service serve`: the HTTP(S) server over the configured store and limiter.
 * With a certificate and key it serves HTTPS, TLS 1.2 at least; without, plain HTTP for local use
 * or behind a TLS-terminating proxy, and it says so at start.
 */
import { readFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import { serve as serveNode, type ServerType } from '@hono/node-server';
import { createApp } from '../app.ts';
import { ConfigError, type ServerConfig } from '../config.ts';
import { inboundRunExecutor } from '../domain/runs/index.ts';
import { readStuRates } from '../domain/usage/index.ts';
import { listWorkspaces } from '../domain/workspaces/index.ts';
import { createEngines, readEngineConfig } from '../engine/index.ts';
import { connectRedis, createRedisLimiter } from '../middleware/rate-limit/index.ts';
import { startWorker, type Worker } from '../worker/index.ts';
import { resolveSecretKey, SHARED_KEY_WARNING } from './secret-key.ts';
import { openCliStore } from './store.ts';

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

export async function startServer(config: ServerConfig, say: (line: string) => void): Promise<RunningServer> {
  const tls = config.tls
    ? { cert: await readPem(config.tls.certFile, 'certificate'), key: await readPem(config.tls.keyFile, 'key') }
    : undefined;
  const secretKey = await resolveSecretKey(config);
  const store = await openCliStore(config, 'serve');
  const redis = config.redisUrl ? connectRedis(config.redisUrl) : undefined;
  let worker: Worker | undefined;
  try {
    const { app, services } = createApp({
      db: store.db,
      config: { trustProxy: config.trustProxy, privateBeta: process.env.PRIVATE_BETA === 'true' },
      // Aliases -> engines (ENGINE_<ALIAS>, OPENAI_COMPATIBLE_*) and STU rates (STU_RATE_<ALIAS>).
      engines: createEngines(readEngineConfig(process.env)),
      stuRates: readStuRates(process.env),
      ...(redis ? { limiter: createRedisLimiter({ redis }) } : {}),
      webhooks: { secretKey, allowList: config.webhookAllowHosts, wake: () => worker?.wake() },
    });
    // Outbound deliveries (and inbound runs) survive restarts: the worker resumes from the store.
    worker = startWorker({
      db: store.db,
      clock: services.clock,
      secretBox: services.webhooks.secretBox,
      policy: { allowList: services.webhooks.allowList },
      pollMs: config.webhookPollMs,
      timeoutMs: config.webhookTimeoutMs,
      executeInboundRun: inboundRunExecutor(services.runs, (error) => console.error('inbound run failed:', error)),
    });
    const server = await listen(config, app.fetch, tls);
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `${tls ? 'https' : 'http'}://${hostForUrl(config.host)}:${port}`;

    say(`Store: ${store.description}.`);
    say(`Rate limits: ${redis ? 'shared through Redis (REDIS_URL)' : 'in memory (this process only)'}.`);
    if (config.databaseUrl && !config.secretKey) say(SHARED_KEY_WARNING);
    say(
      `Webhook deliveries: worker polling every ${config.webhookPollMs} ms` +
        (config.webhookAllowHosts.length ? `; allow-listed hosts: ${config.webhookAllowHosts.join(', ')}.` : '.'),
    );
    if ((await listWorkspaces(store.db)).length === 0) {
      say('No workspace yet: stop the server and run `service init --json` to create the admin and a first key.');
    }
    say(
      tls
        ? `Listening on ${url} (HTTPS, TLS 1.2 minimum).`
        : `Listening on ${url} (plain HTTP, no TLS: use it locally or behind a TLS-terminating proxy; pass --tls-cert and --tls-key to serve HTTPS).`,
    );
    return {
      url,
      async close() {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Idle keep-alive connections would otherwise hold the close for seconds.
        (server as { closeIdleConnections?: () => void }).closeIdleConnections?.();
        await closed;
        await worker?.stop();
        await redis?.quit().catch(() => {});
        await store.close();
      },
    };
  } catch (err) {
    await worker?.stop();
    redis?.disconnect();
    await store.close();
    throw err;
  }
}

function listen(
  config: ServerConfig,
  fetch: (request: Request) => Response | Promise<Response>,
  tls: { cert: Buffer; key: Buffer } | undefined,
): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = serveNode({
      fetch,
      port: config.port,
      hostname: config.host,
      ...(tls
        ? { createServer: createHttpsServer, serverOptions: { cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2' as const } }
        : {}),
    });
    server.once('listening', () => resolve(server));
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new ConfigError(`Port ${config.port} on ${config.host} is already in use: is another server running? Pick another --port.`)
          : err,
      ),
    );
  });
}

async function readPem(file: string, what: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    throw new ConfigError(`Cannot read the TLS ${what} ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
