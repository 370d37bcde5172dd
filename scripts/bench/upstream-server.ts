/**
 * @module The benchmark's loopback model server: an OpenAI-compatible `POST /v1/chat/completions`
 * in its own process (so it gets a core the way the service and Portkey do), on plain node:http.
 * The model name chooses how it answers:
 *
 * - `bench-instant`: at once, a short answer (ANSWER_TOKENS fragments), as one JSON completion or,
 *   with `stream: true`, as one burst of `chat.completion.chunk` events, usage and `[DONE]`.
 * - `bench-slow`: streamed like a model: nothing for SLOW_FIRST_MS (default 300), then the first
 *   fragment, then SLOW_RATE fragments a second (default 40) for SLOW_SECONDS (default 10).
 *
 * Every fragment is ` tok<i>.` (i from 1), so a client can count what it received in order; the
 * totals this server sent (fragments, streams started, finished, cut by the client) are at
 * `GET /stats`, and `POST /stats/reset` zeroes them. Prints `Listening on URL` (the origin; the
 * Chat Completions base URL is that plus `/v1`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const ANSWER_TOKENS = 20;
const firstMs = Number(process.env.SLOW_FIRST_MS ?? 300);
const rate = Number(process.env.SLOW_RATE ?? 40);
const slowTokens = Math.max(1, Math.round(rate * Number(process.env.SLOW_SECONDS ?? 10)));
const intervalMs = 1000 / rate;

const stats = { slowStreams: 0, slowFinished: 0, slowCut: 0, slowFragments: 0, requests: 0 };
const USAGE = (completion: number) => ({ prompt_tokens: 16, completion_tokens: completion, total_tokens: 16 + completion });
const fragment = (i: number) => ` tok${i}.`;
const instantText = Array.from({ length: ANSWER_TOKENS }, (_, i) => fragment(i + 1)).join('');

function chunk(model: string, delta: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  const choices = extra.usage ? [] : [{ index: 0, delta, finish_reason: null }];
  return `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices, ...extra })}\n\n`;
}

function completion(res: ServerResponse, model: string): void {
  const body = JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: instantText }, finish_reason: 'stop', logprobs: null }],
    usage: USAGE(ANSWER_TOKENS),
  });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

function instantStream(res: ServerResponse, model: string): void {
  res.writeHead(200, SSE_HEADERS);
  let body = chunk(model, { role: 'assistant', content: '' });
  for (let i = 1; i <= ANSWER_TOKENS; i += 1) body += chunk(model, { content: fragment(i) });
  res.end(`${body}${chunk(model, {}, { usage: USAGE(ANSWER_TOKENS) })}data: [DONE]\n\n`);
}

/** The first fragment (with the role) after `firstMs`, then one every `intervalMs`, on schedule (late ticks catch up). */
function slowStream(_req: IncomingMessage, res: ServerResponse, model: string): void {
  stats.slowStreams += 1;
  const started = performance.now();
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  let cut = false;
  res.on('close', () => {
    clearTimeout(timer);
    if (sent < slowTokens && !cut) {
      cut = true;
      stats.slowCut += 1;
    }
  });
  const tick = () => {
    if (cut || res.destroyed) return;
    const due = Math.min(slowTokens, Math.floor((performance.now() - started - firstMs) / intervalMs) + 1);
    let out = sent === 0 ? chunk(model, { role: 'assistant', content: '' }) : '';
    while (sent < due) {
      sent += 1;
      stats.slowFragments += 1;
      out += chunk(model, { content: fragment(sent) });
    }
    if (sent >= slowTokens) {
      stats.slowFinished += 1;
      res.end(`${out}${chunk(model, {}, { usage: USAGE(slowTokens) })}data: [DONE]\n\n`);
      return;
    }
    res.write(out);
    timer = setTimeout(tick, Math.max(0, started + firstMs + sent * intervalMs - performance.now()));
  };
  res.writeHead(200, SSE_HEADERS);
  // Headers go out with the first fragment, as a model server's do once it has its first token.
  timer = setTimeout(tick, firstMs);
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...stats, slowTokensPerStream: slowTokens }));
    return;
  }
  if (req.method === 'POST' && req.url === '/stats/reset') {
    for (const key of Object.keys(stats) as (keyof typeof stats)[]) stats[key] = 0;
    res.writeHead(204).end();
    return;
  }
  if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
    return;
  }
  stats.requests += 1;
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let body: { model?: string; stream?: boolean };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"invalid JSON"}}');
      return;
    }
    const model = body.model ?? 'bench-instant';
    if (model === 'bench-slow') slowStream(req, res, model);
    else if (body.stream === true) instantStream(res, model);
    else completion(res, model);
  });
});
server.keepAliveTimeout = 65_000;
// Each write goes out at once (no Nagle), as a model server streaming tokens sends them.
server.on('connection', (socket) => socket.setNoDelay(true));
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`Listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
