/**
 * @module The metrics listener: `GET /metrics` in Prometheus text on its own port (METRICS_PORT), apart
 * from the public API so that it needs no credential and is never exposed by the API's load balancer.
 * Anything else answers 404.
 */
import { createServer } from 'node:http';
import { METRICS_CONTENT_TYPE, type Metrics } from './index.ts';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export function startMetricsServer(metrics: Metrics, host: string, port: number): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not_found', message: 'Only GET /metrics is served here.' }));
      return;
    }
    metrics.render().then(
      (text) => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(req.method === 'HEAD' ? undefined : text),
      () => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'internal_error' })),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      resolve({
        url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
