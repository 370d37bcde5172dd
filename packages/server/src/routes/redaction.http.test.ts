/**
 * Issue 20, item 6: the real model behind an alias never leaves. An openai-compatible engine behind a
 * loopback Chat Completions server answers with the deployment's own model names, its provider key
 * and host, providers and families outside the old lists, credentials and JVM/Go traces, streamed one
 * character per fragment. Every output path is checked over real HTTP: the synchronous body, every
 * stream fragment, the run detail, the runs list and MCP (its direct answer and its SSE push).
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zRunDetail, zStreamEnd } from '../../../../generated/zod.ts';
import { createEngines } from '../engine/index.ts';
import { sendCompletion, sendStream, startFakeChatServer, type FakeChatServer } from '@service/testing/fake-chat-server';
import { REDACTED } from '../redact/index.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { parseSse } from '@service/testing/sse';

const MODELS = { Symphony: 'acme-sonata-v2', Concerto: 'acme-concerto-large-0601' } as const;
const PROVIDER_KEY = 'prov-Xk29fLq0Zt7Wm3Np8Rv5';
const INTERNAL_HOST = 'inference.acme-prod.net';

/** What the provider says, one term a line, and each term's tell-tale part that must not come out. */
const TERMS: readonly (readonly [said: string, tell: string])[] = [
  [`I am ${MODELS.Symphony}.`, 'sonata-v2'],
  [`Also ${MODELS.Concerto} and ACME Sonata V2.`, 'acme'],
  [`Key ${PROVIDER_KEY}`, 'xk29flq0'],
  [`Served from https://${INTERNAL_HOST}/v1`, 'acme-prod'],
  ['IBM Granite 3.1 on watsonx', 'granite'],
  ['watsonx.ai', 'watsonx'],
  ['Kimi by Moonshot AI', 'kimi'],
  ['moonshot-v1-8k', 'moonshot'],
  ['amazon.nova-pro-v1:0', 'nova'],
  ['Amazon Titan', 'titan'],
  ['Jamba 1.5 by AI21 Labs', 'jamba'],
  ['AI21', 'ai21'],
  ['DBRX from Databricks', 'dbrx'],
  ['Databricks', 'databricks'],
  ['yi-34b-chat', 'yi-34b'],
  ['falcon-180b', 'falcon'],
  ['Perplexity sonar-pro', 'sonar'],
  ['Together AI', 'together'],
  ['Fireworks AI', 'fireworks'],
  ['NVIDIA NIM', 'nim'],
  ['replicate.com', 'replicate'],
  ['AIzaSyD-1234567890abcdefghijklmnopqrstu', 'aizasy'],
  ['hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567', 'hf_'],
  ['glpat-AbCdEfGhIjKlMnOpQrSt', 'glpat'],
  ['java.lang.NullPointerException', 'nullpointer'],
  ['panic: runtime error: index out of range [3]', 'panic'],
];
const ANSWER = `${TERMS.map(([said]) => said).join('\n')}\nAll good.`;

let fake: FakeChatServer;
let t: TestApp;
let server: ServerType;
let base: string;
let key: string;

beforeAll(async () => {
  fake = await startFakeChatServer();
  // Streamed one character per fragment: every term is split across fragments.
  fake.handle = (req, res) =>
    req.body.stream
      ? sendStream(res, String(req.body.model), Array.from(ANSWER), { prompt_tokens: 10, completion_tokens: 50 })
      : sendCompletion(res, String(req.body.model), ANSWER, { prompt_tokens: 10, completion_tokens: 50 });
  const engines = createEngines({
    aliases: { Prelude: 'local', Sonata: 'local', Symphony: 'openai-compatible', Concerto: 'openai-compatible' },
    openaiCompatible: { baseURL: fake.baseURL, apiKey: PROVIDER_KEY, models: MODELS },
  });
  // The model names and the key come from the engines by themselves; the internal host an operator adds.
  t = await createTestApp({ deps: { engines, redactTerms: [INTERNAL_HOST] } });
  key = await t.keyWith('orchestrator:invoke', 'usage:read', 'mcp:tenant', 'departments:read');
  server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await fake.stop();
  await t.close();
});

function call(path: string, body?: unknown, bearer = key): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** Nothing of any term is in `text`, and the harmless rest is. */
function expectClean(text: string, where: string): void {
  const lower = text.toLowerCase();
  for (const [said, tell] of TERMS) {
    expect(lower, `${where}: ${said}`).not.toContain(said.toLowerCase());
    expect(lower, `${where}: ${tell}`).not.toContain(tell);
  }
  expect(lower, where).not.toContain(PROVIDER_KEY.toLowerCase());
}

const message = (alias: string) => ({ alias, agentSlug: 'it', messages: [{ role: 'user', content: 'Who serves you?' }] });

describe('the deployment names and the new terms never leave, on any path', () => {
  it('the synchronous body, the run detail and the runs list', async () => {
    const res = await call('/v1/inference', message('Symphony'));
    expect(res.status).toBe(200);
    const text = await res.text();
    expectClean(text, 'sync body');
    const body = JSON.parse(text) as { runId: string; content: string };
    expect(body.content).toContain('All good.');
    expect(body.content).toContain(REDACTED);
    expect(fake.requests.at(-1)!.body.model).toBe(MODELS.Symphony);

    const detail = await call(`/v1/runs/${body.runId}`);
    expect(detail.status).toBe(200);
    const detailText = await detail.text();
    expectClean(detailText, 'run detail');
    expect(zRunDetail.parse(JSON.parse(detailText)).run.content).toBe(body.content);

    const list = await call('/v1/runs');
    expect(list.status).toBe(200);
    const listText = await list.text();
    expectClean(listText, 'runs list');
    expect(listText).toContain(body.runId);
  });

  it('every stream fragment, with every term split into one-character fragments', async () => {
    const res = await call('/v1/inference', { ...message('Symphony'), stream: true });
    expect(res.status).toBe(200);
    const raw = await res.text();
    expectClean(raw, 'SSE body');
    const events = parseSse(raw);
    const fragments = events.filter((e) => e.event === 'message').map((e) => (e.data as { delta: string }).delta);
    expect(fragments.length).toBeGreaterThan(1);
    for (const fragment of fragments) expectClean(fragment, `fragment ${JSON.stringify(fragment)}`);
    const joined = fragments.join('');
    expectClean(joined, 'joined fragments');
    expect(joined).toContain('All good.');
    const end = zStreamEnd.parse(events.at(-1)!.data);
    const detail = zRunDetail.parse(await (await call(`/v1/runs/${end.runId}`)).json());
    expect(detail.run.content).toBe(joined);
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: MODELS.Symphony, stream: true });
  });

  it('MCP: the direct answer and the one pushed on the SSE session', async () => {
    const issued = await fetch(`${base}/v1/mcp/tenant/tokens`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    expect(issued.status).toBe(201);
    const { token } = (await issued.json()) as { token: string };
    const abort = new AbortController();
    const sse = await fetch(`${base}/v1/mcp/tenant/sse`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
    const reader = sse.body!.getReader();
    const decoder = new TextDecoder();
    let pushed = '';
    const readUntil = async (needle: string) => {
      while (!pushed.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) break;
        pushed += decoder.decode(value, { stream: true });
      }
    };
    await readUntil('sessionId=');
    const endpoint = /data: (\/v1\/mcp\/tenant\/rpc\?sessionId=\S+)/.exec(pushed)![1]!;

    const rpc = {
      jsonrpc: '2.0',
      id: 41,
      method: 'tools/call',
      params: { name: 'invoke_agent', arguments: { alias: 'Symphony', agentSlug: 'it', message: 'Who?' } },
    };
    const direct = await call(endpoint, rpc, token);
    expect(direct.status).toBe(200);
    const directText = await direct.text();
    expectClean(directText, 'MCP direct answer');
    expect(directText).toContain('All good.');
    await readUntil('"id":41');
    expectClean(pushed, 'MCP SSE push');
    abort.abort();
  });
});
