/**
 * @module The benchmark's baseline: a bare Hono app on @hono/node-server, with no middleware,
 * `GET /json` answering a small JSON object and `POST /json` parsing the JSON body. Run as its
 * own process so that it gets a core the way the service does; prints `Listening on URL`.
 *
 * With UPSTREAM_URL (the loopback model server), also the bare proxy: `POST /v1/chat/completions`
 * forwarded as it came, on a kept-alive undici `Pool`, and the answer handed back (an event stream as
 * it arrives, anything else read whole). No authentication, limit, validation, record or redaction:
 * the least a gateway does to forward the call, beside what Portkey and the service do.
 */
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';

// hono and its Node adapter are dependencies of packages/server, not of the workspace root.
const fromServer = createRequire(new URL('../../packages/server/package.json', import.meta.url));
const load = async <T>(name: string): Promise<T> => (await import(pathToFileURL(fromServer.resolve(name)).href)) as T;

interface Context {
  json(body: unknown, status?: number): Response;
  req: { json(): Promise<unknown>; text(): Promise<string> };
}
interface App {
  get(path: string, handler: (c: Context) => Response | Promise<Response>): unknown;
  post(path: string, handler: (c: Context) => Response | Promise<Response>): unknown;
  fetch: (request: Request) => Response | Promise<Response>;
}
const { Hono } = await load<{ Hono: new () => App }>('hono');
const { serve } = await load<{
  serve(options: { fetch: App['fetch']; port: number; hostname: string }, listening: (info: { port: number }) => void): unknown;
}>('@hono/node-server');

const app = new Hono();
app.get('/json', (c) => c.json({ ok: true, service: 'baseline', at: Date.now() }));
app.post('/json', async (c) => {
  const body = (await c.req.json()) as { messages?: unknown[] };
  return c.json({ ok: true, messages: Array.isArray(body.messages) ? body.messages.length : 0 });
});

const upstreamUrl = process.env.UPSTREAM_URL;
if (upstreamUrl) {
  interface Pool {
    request(options: { path: string; method: 'POST'; headers: Record<string, string>; body: string }): Promise<{
      statusCode: number;
      headers: Record<string, string | string[] | undefined>;
      body: Readable & { bytes(): Promise<Uint8Array> };
    }>;
  }
  const { Pool } = await load<{ Pool: new (origin: string) => Pool }>('undici');
  const pool = new Pool(new URL(upstreamUrl).origin);
  app.post('/v1/chat/completions', async (c) => {
    const { statusCode, headers, body } = await pool.request({
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: await c.req.text(),
    });
    const type = String(headers['content-type'] ?? 'application/json');
    const answer = type.startsWith('text/event-stream') ? (Readable.toWeb(body) as ReadableStream<Uint8Array>) : await body.bytes();
    return new Response(answer, { status: statusCode, headers: { 'content-type': type } });
  });
}

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 0), hostname: '127.0.0.1' }, (info) => {
  process.stdout.write(`Listening on http://127.0.0.1:${info.port}\n`);
});
