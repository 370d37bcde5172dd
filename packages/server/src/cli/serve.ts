/**
 * @module `service serve`: starts the runtime (runtime/index.ts, the composition root) and stops it.
 * It listens (HTTP, or HTTPS with a certificate and key: TLS 1.2 at least; without, plain HTTP for
 * local use or behind a TLS-terminating proxy, and it says so at start), serves the metrics
 * listener, prints the start-up lines and the first start's credentials, and stops gracefully.
 */
import { readFile } from 'node:fs/promises';
import type { Duplex } from 'node:stream';
import { createServer as createHttpsServer } from 'node:https';
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import { ConfigError, type ServerConfig } from '../config.ts';
import { AlreadyInitialised } from '../domain/workspaces/init.ts';
import { SEALED_SECRET_HINT } from '../domain/webhooks/secret-box.ts';
import { newRequestId } from '../middleware/request-id/index.ts';
import { startMetricsServer, type MetricsServer } from '../metrics/server.ts';
import { createRuntime } from '../runtime/index.ts';
import { flushLogOnCrash } from '../log/index.ts';
import { reportListening, workersLine } from './cluster.ts';
import { firstStartLines, initialiseOnFirstStart } from './first-start.ts';
import { gracefulStop } from './shutdown.ts';
import { errnoOf } from '../caught.ts';

interface RunningServer {
  url: string;
  close(): Promise<void>;
}

interface StartOptions {
  /** stdout is a terminal: the first start's secrets may be printed (see first-start.ts). */
  terminal?: boolean;
  /** Which of `--workers N`'s processes this is (1…N; cli/cluster.ts); undefined for a lone server. */
  worker?: number | undefined;
}

/** Builds the runtime (runtime/index.ts) from `config`, listens, and says how it runs. */
export async function startServer(config: ServerConfig, say: (line: string) => void, options: StartOptions = {}): Promise<RunningServer> {
  const tls = config.tls ? { cert: await readPem(config.tls.certFile, 'certificate'), key: await readPem(config.tls.keyFile, 'key') } : undefined;
  const runtime = await createRuntime(config);
  const { services, store, redis, metrics, logger, worker } = runtime;
  // A crash still writes every log line it queued, the one in flight included.
  flushLogOnCrash(logger);
  let metricsServer: MetricsServer | undefined;
  try {
    const server = await listen(config, runtime.app.fetch, tls);
    if (metrics && config.metricsPort !== undefined) metricsServer = await startMetricsServer(metrics, config.metricsHost, config.metricsPort);
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `${tls ? 'https' : 'http'}://${hostForUrl(config.host)}:${port}`;

    say(`Store: ${store.description}.`);
    if (options.worker === undefined) say(workersLine(config));
    say(metricsServer ? `Metrics: ${metricsServer.url} (Prometheus; METRICS_PORT).` : 'Metrics: off (set METRICS_PORT to serve /metrics).');
    say(
      runtime.traces
        ? 'Traces: sent over OTLP/HTTP (OTEL_* variables).'
        : 'Traces: off (set OTEL_TRACES_EXPORTER=otlp or OTEL_EXPORTER_OTLP_ENDPOINT to send them).',
    );
    say(`Rate limits: ${redis ? 'shared through Redis (REDIS_URL)' : 'in memory (this process only)'}.`);
    if (redis && !(await answers(redis))) {
      say(
        'WARNING: Redis (REDIS_URL) does not answer. Rate-limited routes fail closed with 503 service_unavailable ' +
          'until it does; check REDIS_URL and that Redis is running.',
      );
    }
    const unopenable = runtime.unopenableSecret;
    if (unopenable) {
      say(`WARNING: ${SEALED_SECRET_HINT} (found in ${unopenable}; sign-ins and webhooks that need it answer 503 until then.)`);
      logger.error({ column: unopenable }, SEALED_SECRET_HINT);
    }
    say(
      `Webhook deliveries: worker polling every ${config.webhookPollMs} ms` +
        (config.webhookAllowHosts.length ? `; allow-listed hosts: ${config.webhookAllowHosts.join(', ')}.` : '.'),
    );
    const firstStart = await initialiseOnFirstStart(store.db, services.webhooks.secretBox, config.dataDir).catch((err: unknown) => {
      // Another instance initialised the same store at the same moment: it printed the credentials.
      if (err instanceof AlreadyInitialised) return undefined;
      throw err;
    });
    if (firstStart) for (const line of firstStartLines(firstStart, url, options.terminal === true)) say(line);
    say(
      tls
        ? `Listening on ${url} (HTTPS, TLS 1.2 minimum).`
        : `Listening on ${url} (plain HTTP, no TLS: use it locally or behind a TLS-terminating proxy; pass --tls-cert and --tls-key to serve HTTPS).`,
    );
    if (options.worker !== undefined) reportListening(url);
    const stop = gracefulStop({ server, services, worker, graceMs: config.shutdownGraceMs, logger });
    return {
      url,
      async close() {
        await stop();
        await metricsServer?.close();
        await runtime.close();
      },
    };
  } catch (err) {
    await metricsServer?.close();
    await runtime.abort();
    throw err;
  }
}

function listen(
  config: ServerConfig,
  fetch: (request: Request) => Response | Promise<Response>,
  tls: { cert: Buffer; key: Buffer } | undefined,
): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    // Slow clients cannot hold a connection: headers, the whole request and idle keep-alive are bounded.
    // Node checks the header and request timeouts every `connectionsCheckingInterval` (30 s by default).
    const timeouts = {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, config.headersTimeoutMs),
    };
    const server = createAdaptorServer({
      fetch,
      hostname: config.host,
      ...(tls
        ? { createServer: createHttpsServer, serverOptions: { ...timeouts, cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2' as const } }
        : { serverOptions: timeouts }),
    });
    server.on('clientError', answerClientError);
    server.once('listening', () => resolve(server));
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new ConfigError(`Port ${config.port} on ${config.host} is already in use: is another server running? Pick another --port.`)
          : err,
      ),
    );
    server.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG });
  });
}

/**
 * Connections the kernel keeps waiting for the server to accept them (Node's default is 511; Linux caps it at
 * net.core.somaxconn, 4096 by default). Under a flood of connections (slow senders reconnecting, refused at
 * admission), a full queue drops a newcomer's SYN and its client waits a second to try again: a workspace's
 * new connection then took a second longer (docs/performance.md, "The fairness scenario over 40 s halves, and the
 * accept queue").
 */
const LISTEN_BACKLOG = 4096;

/** Largest total size of a request's headers (Node's default, 16 KiB): `431` above it. */
const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Requests that Node's HTTP parser refuses before the app sees them (headers over 16 KiB, a
 * malformed request line) get the spec's JSON error body and a request id too, not Node's empty
 * answer.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A client too slow with its headers (HEADERS_TIMEOUT_MS) or its request (REQUEST_TIMEOUT_MS): the
  // connection is closed without an answer (the error table has no 408; the client is not waiting for one).
  if (!socket.writable || err.code === 'ECONNRESET' || err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    socket.destroy();
    return;
  }
  // A response is under way on this socket (a 413 for a body not read to its end, whose rest the
  // parser then took for a new request): let it finish, then close the connection. One that has not
  // begun belongs to the request whose body broke the framing (a bad chunk size): its handler waits
  // for a body that will never come, so the 400 below answers it now, instead of the connection
  // hanging until REQUEST_TIMEOUT_MS and closing without an answer.
  const pending = (socket as Duplex & { _httpMessage?: (NodeJS.EventEmitter & { writableEnded?: boolean; headersSent?: boolean }) | null })._httpMessage;
  if (pending && pending.writableEnded === false && pending.headersSent !== false) {
    pending.once('finish', () => socket.destroy());
    pending.once('close', () => socket.destroy());
    return;
  }
  // The client ended its side mid-request with no request of it waiting for an answer: the rest of a body its
  // answer did not need (a refusal, an unknown slug), or a request never finished. Nothing is left to answer, and
  // the client is gone or done: a 400 here would be a second answer to a request already answered (and, under a
  // flood of refused slow bodies, a tenth of the event loop's time; docs/performance.md).
  if (err.code === 'HPE_INVALID_EOF_STATE' && !pending) {
    socket.destroy();
    return;
  }
  const [status, reason, body] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          { error: 'request_header_fields_too_large', message: `The request headers are larger than ${MAX_HEADER_BYTES} bytes.` },
        ]
      : [400, 'Bad Request', { error: 'invalid_request', message: 'The request is not valid HTTP.' }];
  const json = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
      `X-Request-Id: ${newRequestId()}\r\nConnection: close\r\n\r\n${json}`,
  );
}

async function readPem(file: string, what: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    throw new ConfigError(`Cannot read the TLS ${what} ${file} (${errnoOf(err) ?? 'error'}).`);
  }
}

/** Whether Redis answers a PING within a second (the limiter's own command timeout). */
async function answers(redis: { ping(): Promise<string> }): Promise<boolean> {
  try {
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  }
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
