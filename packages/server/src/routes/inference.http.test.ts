/**
 * Streaming over real HTTP (@hono/node-server on a loopback port): the local engine's stream, an
 * openai-compatible engine behind a fake Chat Completions server on loopback (provider text split
 * across fragments, provider errors), and a client that disconnects mid-stream.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zInferenceResponse, zRunDetail, zStreamEnd, zStreamError, zUsage } from '../../../../generated/zod.ts';
import { createEngines } from '../engine/index.ts';
import { sendCompletion, sendError, sendStream, startFakeChatServer, type FakeChatServer } from '@service/testing/fake-chat-server';
import { redactText } from '../redact/index.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { parseSse } from '@service/testing/sse';

let fake: FakeChatServer;
let t: TestApp;
let server: ServerType;
let base: string;
let key: string;

const MODEL = 'gpt-4o-mini-2024-07-18';

beforeAll(async () => {
  fake = await startFakeChatServer();
  const engines = createEngines({
    aliases: { Prelude: 'local', Sonata: 'local', Symphony: 'openai-compatible', Concerto: 'local' },
    openaiCompatible: { baseURL: fake.baseURL, apiKey: 'sk-test-secret', models: { Symphony: MODEL } },
  });
  // A client that leaves is given 50 ms to follow its run again before the run is canceled.
  t = await createTestApp({ deps: { engines, streamResumeMs: 50 } });
  key = await t.keyWith('orchestrator:invoke', 'usage:read');
  server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await fake.stop();
  await t.close();
});

function invoke(body: Record<string, unknown>, signal?: AbortSignal) {
  return fetch(`${base}/v1/inference`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

async function getJson(path: string): Promise<unknown> {
  return (await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } })).json();
}

describe('streaming over HTTP', () => {
  it('streams the local engine as SSE fragments and the end event', async () => {
    const res = await invoke({ alias: 'Sonata', agentSlug: 'hr', stream: true, messages: [{ role: 'user', content: 'Onboarding plan for a new hire' }] });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(res.headers.get('x-ratelimit-remaining')).not.toBeNull();
    const events = parseSse(await res.text());
    const end = zStreamEnd.parse(events.at(-1)!.data);
    const content = events
      .filter((e) => e.event === 'message')
      .map((e) => (e.data as { delta: string }).delta)
      .join('');
    const detail = zRunDetail.parse(await getJson(`/runs/${end.runId}`));
    expect(detail.run).toMatchObject({ status: 'completed', content });
  });

  it('redacts a provider name split across engine fragments; nothing names the provider or the model', async () => {
    fake.handle = (req, res) =>
      sendStream(res, String(req.body.model), ['I am Chat', 'GPT, built by Open', 'AI. Ask me anything.'], { prompt_tokens: 20, completion_tokens: 12 });
    const res = await invoke({ alias: 'Symphony', agentSlug: 'it', stream: true, messages: [{ role: 'user', content: 'Who are you?' }] });
    expect(res.status).toBe(200);
    const text = await res.text();
    const headers = JSON.stringify([...res.headers]);
    const events = parseSse(text);
    const fragments = events.filter((e) => e.event === 'message').map((e) => (e.data as { delta: string }).delta);
    for (const fragment of fragments) expect(fragment).not.toMatch(/gpt|open\s*ai/i);
    const joined = fragments.join('');
    expect(joined).toBe(redactText('I am ChatGPT, built by OpenAI. Ask me anything.'));
    expect(joined).toContain('Ask me anything.');
    for (const leak of [/gpt/i, /openai/i, /4o-mini/, /sk-test-secret/]) {
      expect(text).not.toMatch(leak);
      expect(headers).not.toMatch(leak);
    }
    const end = zStreamEnd.parse(events.at(-1)!.data);
    expect(end.usage).toEqual({ inputTokens: 20, outputTokens: 12 });
    const detail = zRunDetail.parse(await getJson(`/runs/${end.runId}`));
    expect(detail.run.content).toBe(joined);
    expect(detail.run.usage.stu).toBe(32 * 10);
    // The engine really was asked with the configured model, which never left the server.
    expect(fake.requests.at(-1)!.body.model).toBe(MODEL);
  });

  it('a provider error answers 503 synchronously and event: error in a stream, without provider text', async () => {
    fake.handle = (_req, res) => sendError(res, 500, { error: { message: 'OpenAI upstream overloaded at api.openai.com', type: 'server_error' } });
    const sync = await invoke({ alias: 'Symphony', agentSlug: 'it', messages: [{ role: 'user', content: 'Reset my password' }] });
    expect(sync.status).toBe(503);
    const syncText = await sync.text();
    expect(syncText).not.toMatch(/openai|overloaded|api\./i);
    expect(JSON.parse(syncText)).toMatchObject({ error: 'service_unavailable' });

    const streamed = await invoke({ alias: 'Symphony', agentSlug: 'it', stream: true, messages: [{ role: 'user', content: 'Reset my password' }] });
    expect(streamed.status).toBe(200);
    const text = await streamed.text();
    expect(text).not.toMatch(/openai|overloaded|api\./i);
    const events = parseSse(text);
    expect(events).toHaveLength(1);
    const error = zStreamError.parse(events[0]!.data);
    expect(events[0]!.event).toBe('error');
    expect(error.error).toBe('engine_error');
    const detail = zRunDetail.parse(await getJson(`/runs/${error.runId}`));
    expect(detail.run).toMatchObject({ status: 'failed', failureReason: 'engine_error' });
  });

  it('a provider answering 200 with a body that is not JSON fails the run: 503 synchronously, event: error in a stream', async () => {
    fake.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Upstream proxy at inference.internal: bad gateway</body></html>');
    };
    const sync = await invoke({ alias: 'Symphony', agentSlug: 'it', messages: [{ role: 'user', content: 'Reset my password' }] });
    expect(sync.status).toBe(503);
    expect(await sync.json()).toMatchObject({ error: 'service_unavailable' });

    const streamed = await invoke({ alias: 'Symphony', agentSlug: 'it', stream: true, messages: [{ role: 'user', content: 'Reset my password' }] });
    expect(streamed.status).toBe(200);
    const text = await streamed.text();
    expect(text).not.toMatch(/html|proxy|inference\.internal|gateway/i);
    const events = parseSse(text);
    expect(events.map((e) => e.event)).toEqual(['error']);
    const error = zStreamError.parse(events[0]!.data);
    expect(error.error).toBe('engine_error');
    const detail = zRunDetail.parse(await getJson(`/runs/${error.runId}`));
    expect(detail.run).toMatchObject({ status: 'failed', failureReason: 'engine_error' });
  });

  it('a synchronous call through the openai-compatible engine answers the contract shape', async () => {
    fake.handle = (req, res) =>
      req.body.stream
        ? sendStream(res, String(req.body.model), ['Restart the ', 'router, then ', 'try again.'], { prompt_tokens: 9, completion_tokens: 7 })
        : sendCompletion(res, String(req.body.model), 'Restart the router, then try again.', { prompt_tokens: 9, completion_tokens: 7 });
    const res = await invoke({ alias: 'Symphony', agentSlug: 'it', maxTokens: 100, effort: 'high', messages: [{ role: 'user', content: 'Wifi is down' }] });
    expect(res.status).toBe(200);
    expect(zInferenceResponse.parse(await res.json())).toMatchObject({
      agentSlug: 'it',
      alias: 'Symphony',
      content: 'Restart the router, then try again.',
      usage: { inputTokens: 9, outputTokens: 7 },
    });
    expect(fake.requests.at(-1)!.body).toMatchObject({ max_tokens: 100 });
  });

  it('a client that disconnects mid-stream and does not come back leaves a canceled run with the produced tokens billed', async () => {
    const before = zUsage.parse(await getJson('/usage/current')).consumedStu;
    const controller = new AbortController();
    const res = await invoke(
      { alias: 'Sonata', agentSlug: 'analytics', stream: true, messages: [{ role: 'user', content: 'Weekly KPI dashboard [[hang]]' }] },
      controller.signal,
    );
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toMatch(/^data: \{"delta".*\nid: \d+\n/);
    const list = (await getJson('/runs?status=in_progress')) as { data: { id: string }[] };
    expect(list.data).toHaveLength(1);
    const runId = list.data[0]!.id;
    controller.abort();
    await reader.cancel().catch(() => {});

    let run = zRunDetail.parse(await getJson(`/runs/${runId}`)).run;
    while (run.status === 'in_progress') {
      await new Promise((resolve) => setTimeout(resolve, 20));
      run = zRunDetail.parse(await getJson(`/runs/${runId}`)).run;
    }
    expect(run.status).toBe('canceled');
    expect(run.usage.outputTokens).toBeGreaterThan(0);
    expect(run.usage.stu).toBe((run.usage.inputTokens + run.usage.outputTokens) * 3);
    const after = zUsage.parse(await getJson('/usage/current')).consumedStu;
    expect(after - before).toBe(run.usage.stu);
  });
});
