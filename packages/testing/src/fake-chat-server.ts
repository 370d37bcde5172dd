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
  /** Which TCP connection it came on: 1 for the server's first, 2 for the next, … (a kept-alive connection repeats). */
  readonly connection: number;
}

export type Handler = (request: RecordedRequest, res: ServerResponse) => void;

export interface FakeChatServer {
  readonly baseURL: string;
  readonly requests: RecordedRequest[];
  handle: Handler;
  /** Resolves when the client closes the connection of the latest request. */
  closed(): Promise<void>;
  /** The TCP connections open now (kept-alive ones included). */
  openConnections(): number;
  stop(): Promise<void>;
}

export async function startFakeChatServer(): Promise<FakeChatServer> {
  let closedResolve: () => void = () => {};
  let closedPromise = Promise.resolve();
  const sockets = new Set<import('node:net').Socket>();
  const connectionOf = new WeakMap<import('node:net').Socket, number>();
  let accepted = 0;
  const fake: FakeChatServer = {
    baseURL: '',
    requests: [],
    handle: (_request, res) => sendError(res, 500, { error: { message: 'no handler' } }),
    closed: () => closedPromise,
    openConnections: () => sockets.size,
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
      const recorded = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: raw ? JSON.parse(raw) : {},
        connection: connectionOf.get(req.socket) ?? 0,
      };
      fake.requests.push(recorded);
      fake.handle(recorded, res);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    connectionOf.set(socket, (accepted += 1));
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

/** A tool call a scripted answer asks for: `arguments` is sent as JSON text (a string as it is). */
export interface FakeToolCall {
  readonly id: string;
  /** The function's name as the server sends it (`crm__search` for `crm.search`). */
  readonly name: string;
  readonly arguments: Record<string, unknown> | string;
}

const argumentsText = (call: FakeToolCall) => (typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments));

/** A non-streamed chat.completion, with the tool calls it asks for when given. */
export function sendCompletion(res: ServerResponse, model: string, content: string | null, usage?: FakeUsage, toolCalls: readonly FakeToolCall[] = []): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const calls = toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: argumentsText(call) } }));
  res.end(
    JSON.stringify({
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: 1_700_000_000,
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, ...(calls.length > 0 ? { tool_calls: calls } : {}) },
          finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
          logprobs: null,
        },
      ],
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
    /** One piece of a tool call: its id and name in the first piece of an index, its arguments' JSON in any number of pieces. */
    toolCall: (index: number, piece: { id?: string; name?: string; arguments?: string }) =>
      frame({
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                {
                  index,
                  ...(piece.id ? { id: piece.id, type: 'function' } : {}),
                  function: { ...(piece.name ? { name: piece.name } : {}), arguments: piece.arguments ?? '' },
                },
              ],
            },
            finish_reason: null,
          },
        ],
      }),
    raw: (line: string) => res.write(line),
    usage: (usage: FakeUsage) => frame({ choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }),
    done: () => res.end('data: [DONE]\n\n'),
  };
}

/**
 * A streamed answer in the given fragments, then the tool calls it asks for when given (each in
 * pieces, as servers send them: id and name first, the arguments' JSON split in two, the calls'
 * pieces interleaved), with a final usage chunk when given.
 */
export function sendStream(res: ServerResponse, model: string, fragments: readonly string[], usage?: FakeUsage, toolCalls: readonly FakeToolCall[] = []): void {
  const stream = openStream(res, model);
  stream.raw(
    `data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`,
  );
  for (const fragment of fragments) stream.text(fragment);
  for (const [index, call] of toolCalls.entries()) stream.toolCall(index, { id: call.id, name: call.name });
  for (const [index, call] of toolCalls.entries()) {
    const json = argumentsText(call);
    stream.toolCall(index, { arguments: json.slice(0, Math.floor(json.length / 2)) });
  }
  for (const [index, call] of toolCalls.entries()) {
    const json = argumentsText(call);
    stream.toolCall(index, { arguments: json.slice(Math.floor(json.length / 2)) });
  }
  if (usage) stream.usage(usage);
  stream.done();
}

/** One scripted answer: its text, the tool calls it asks for, its usage. */
export interface ScriptedAnswer {
  readonly content?: string;
  readonly toolCalls?: readonly FakeToolCall[];
  readonly usage?: FakeUsage;
}

/**
 * A handler that answers the requests in order with `answers` (the last one again once they run
 * out), streamed when the request asks for a stream (its text in fragments of a few words), whole otherwise.
 */
export function scripted(answers: readonly ScriptedAnswer[]): Handler {
  let next = 0;
  return (request, res) => {
    const answer = answers[Math.min(next, answers.length - 1)] ?? {};
    next += 1;
    const model = String(request.body.model ?? 'model');
    const content = answer.content ?? '';
    if (request.body.stream === true)
      sendStream(
        res,
        model,
        content.split(/(?<= )/).filter((f) => f !== ''),
        answer.usage,
        answer.toolCalls,
      );
    else sendCompletion(res, model, content === '' && answer.toolCalls?.length ? null : content, answer.usage, answer.toolCalls);
  };
}

export function sendError(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
