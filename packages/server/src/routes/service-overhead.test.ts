/**
 * `X-Service-Overhead-Ms` on an invocation's answers: the time since the request arrived less the time the model
 * took, with two decimals. A model that takes 600 ms answers a synchronous call whose header leaves those 600 ms out;
 * a stream's header is sent with its first byte (the time to begin it); a `background` answer and a replay carry it
 * too; a refused invocation does not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@service/testing/app';
import { useFakeChatServer } from '@service/testing/fake-chat-fixture';
import { sendCompletion, sendStream } from '@service/testing/fake-chat-server';
import { createEngines } from '../engine/index.ts';

const MODEL = 'loopback-model';
/** How long the loopback model takes to answer. */
const MODEL_MS = 600;
const OVERHEAD = /^\d+\.\d{2}$/;

describe('X-Service-Overhead-Ms', { timeout: 60_000 }, () => {
  const fake = useFakeChatServer();
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    fake().handle = (request, res) => {
      const usage = { prompt_tokens: 12, completion_tokens: 3 };
      setTimeout(
        () => (request.body.stream ? sendStream(res, MODEL, ['Dana ', 'renewed.'], usage) : sendCompletion(res, MODEL, 'Dana renewed.', usage)),
        MODEL_MS,
      );
    };
    const engines = createEngines({
      aliases: { Prelude: 'local', Sonata: 'local', Symphony: 'openai-compatible', Concerto: 'local' },
      openaiCompatible: { baseURL: fake().baseURL, apiKey: 'sk-test', models: { Symphony: MODEL } },
    });
    t = await createTestApp({ deps: { engines } });
    key = await t.keyWith('orchestrator:invoke');
  });
  afterAll(async () => {
    await t?.close();
  });

  const invoke = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ alias: 'Symphony', agentSlug: 'sales', messages: [{ role: 'user', content: 'Did Dana renew?' }], ...body }),
    });

  it('leaves the model’s time out of a synchronous answer’s figure', async () => {
    const began = performance.now();
    const res = await invoke({});
    const total = performance.now() - began;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ content: 'Dana renewed.' });
    const overhead = res.headers.get('x-service-overhead-ms');
    expect(overhead).toMatch(OVERHEAD);
    // The whole answer took the model's 600 ms and more; the figure is what is left once those are taken out.
    expect(total).toBeGreaterThanOrEqual(MODEL_MS);
    expect(Number(overhead)).toBeLessThanOrEqual(total - MODEL_MS + 1);
  });

  it('is sent with a stream’s first byte, before the model answers', async () => {
    const began = performance.now();
    const res = await invoke({ stream: true });
    const toHeaders = performance.now() - began;
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const overhead = res.headers.get('x-service-overhead-ms');
    expect(overhead).toMatch(OVERHEAD);
    expect(Number(overhead)).toBeLessThanOrEqual(toHeaders);
    expect(await res.text()).toContain('event: end');
  });

  it('is on a background answer and on a replay, and not on a refusal', async () => {
    const background = await invoke({ background: true });
    expect(background.status).toBe(202);
    expect(background.headers.get('x-service-overhead-ms')).toMatch(OVERHEAD);

    const first = await invoke({}, { 'idempotency-key': 'overhead-replay' });
    expect(first.status).toBe(200);
    const replay = await invoke({}, { 'idempotency-key': 'overhead-replay' });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('x-run-id')).toBe(first.headers.get('x-run-id'));
    expect(replay.headers.get('x-service-overhead-ms')).toMatch(OVERHEAD);

    const refused = await invoke({ alias: 'Fortissimo' });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'invalid_body' });
    expect(refused.headers.get('x-service-overhead-ms')).toBeNull();
  });
});
