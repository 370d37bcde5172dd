/**
 * @module A fake Chat Completions server on loopback, for tests only: the test double at a boundary
 * we do not own. Each test sets `handle` to script one answer; every request body is recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
}

export type Handler = (request: RecordedRequest, res: ServerResponse) => void;

export interface FakeChatServer {
  readonly baseURL: string;
  readonly requests: RecordedRequest[];
  handle: Handler;
  /** Resolves when the client closes the connection of the latest request. */
  closed(): Promise<void>;
  stop(): Promise<void>;
}

export async function startFakeChatServer(): Promise<FakeChatServer> {
  let closedResolve: () => void = () => {};
  let closedPromise = Promise.resolve();
  const sockets = new Set<import('node:net').Socket>();
  const fake: FakeChatServer = {
    baseURL: '',
    requests: [],
    handle: (_request, res) => sendError(res, 500, { error: { message: 'no handler' } }),
    closed: () => closedPromise,
    stop: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      closedPromise = new Promise((resolve) => (closedResolve = resolve));
      res.on('close', () => closedResolve());
      const raw = Buffer.concat(chunks).toString('utf8');
      const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: raw ? JSON.parse(raw) : {} };
      fake.requests.push(recorded);
      fake.handle(recorded, res);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, { baseURL: `http://127.0.0.1:${port}/v1` });
}

export interface FakeUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
}

/** A non-streamed chat.completion. */
export function sendCompletion(res: ServerResponse, model: string, content: string, usage?: FakeUsage): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: 1_700_000_000,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
      ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
    }),
  );
}

/** Opens an SSE response and returns a writer of chat.completion.chunk events. */
export function openStream(res: ServerResponse, model: string) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  // One chat.completion.chunk event: a delta, or (no choices) the closing usage.
  const frame = (fields: Record<string, unknown>) =>
    res.write(`data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model, ...fields })}\n\n`);
  return {
    text: (content: string) => frame({ choices: [{ index: 0, delta: { content }, finish_reason: null }] }),
    raw: (line: string) => res.write(line),
    usage: (usage: FakeUsage) => frame({ choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }),
    done: () => res.end('data: [DONE]\n\n'),
  };
}

/** A streamed answer in the given fragments, with a final usage chunk when given. */
export function sendStream(res: ServerResponse, model: string, fragments: readonly string[], usage?: FakeUsage): void {
  const stream = openStream(res, model);
  stream.raw(
    `data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`,
  );
  for (const fragment of fragments) stream.text(fragment);
  if (usage) stream.usage(usage);
  stream.done();
}

export function sendError(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
