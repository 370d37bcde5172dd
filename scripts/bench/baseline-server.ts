/**
 * @module The benchmark's baseline: a bare Hono app on @hono/node-server, with no middleware,
 * `GET /json` answering a small JSON object and `POST /json` parsing the JSON body. Run as its
 * own process so that it gets a core the way the service does; prints `Listening on URL`.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

// hono and its Node adapter are dependencies of packages/server, not of the workspace root.
const fromServer = createRequire(new URL('../../packages/server/package.json', import.meta.url));
const load = async <T>(name: string): Promise<T> => (await import(pathToFileURL(fromServer.resolve(name)).href)) as T;

interface Context {
  json(body: unknown, status?: number): Response;
  req: { json(): Promise<unknown> };
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

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 0), hostname: '127.0.0.1' }, (info) => {
  process.stdout.write(`Listening on http://127.0.0.1:${info.port}\n`);
});
