import { describe, expect, it, vi } from 'vitest';
import { useFakeChatServer } from '@service/testing/fake-chat-fixture';
import { openStream, sendCompletion, startFakeChatServer, type FakeChatServer } from '@service/testing/fake-chat-server';
import { collect } from '../collect.ts';
import type { EngineRequest } from '../engine.ts';
import { EngineError } from '../engine-error.ts';
import { createOpenAICompatibleEngine, type OpenAICompatibleOptions } from './index.ts';

const fake = useFakeChatServer();

const engine = (options: Partial<OpenAICompatibleOptions> = {}) =>
  createOpenAICompatibleEngine({ baseURL: fake().baseURL, apiKey: 'test-key', models: { Sonata: 'fake-model-medium' }, ...options });

const request = (extra: Partial<EngineRequest> = {}): EngineRequest => ({
  alias: 'Sonata',
  agentSlug: 'sales',
  messages: [{ role: 'user', content: 'Draft a follow-up for the lead.' }],
  ...extra,
});

const answer: FakeChatServer['handle'] = (req, res) => {
  if (req.body.stream === true) {
    const stream = openStream(res, String(req.body.model));
    stream.text('Streamed.');
    stream.usage({ prompt_tokens: 3, completion_tokens: 2 });
    stream.done();
  } else sendCompletion(res, String(req.body.model), 'Whole.', { prompt_tokens: 3, completion_tokens: 1 });
};

describe('the openai-compatible engine’s transport', () => {
  it('keeps its connections alive: calls one after another, whole or streamed, reuse them', async () => {
    fake().handle = answer;
    const one = engine();
    for (const stream of [false, true, false, true, false, true]) await collect(one.stream(request({ stream })));
    expect(fake().requests).toHaveLength(6);
    // A connection goes back to the pool a moment after its answer is read, so the next call, made at once, may open
    // a second one (Node's global fetch does the same); after that, both are reused.
    expect(new Set(fake().requests.map((r) => r.connection)).size).toBeLessThanOrEqual(2);
    await one.close?.();
  });

  it('close() drops the kept-alive connection', async () => {
    fake().handle = answer;
    await vi.waitFor(() => expect(fake().openConnections()).toBe(0));
    const one = engine();
    expect((await collect(one.stream(request({ stream: false })))).content).toBe('Whole.');
    expect(fake().openConnections()).toBe(1);
    await one.close?.();
    await vi.waitFor(() => expect(fake().openConnections()).toBe(0));
  });

  it('an answer whose body stalls after its headers is a timeout: the timeout covers the whole answer', async () => {
    fake().handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":"chatcmpl-fake",'); // and nothing more
    };
    const events = engine({ timeoutMs: 50 }).stream(request({ stream: false }));
    const error = await collect(events).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).reason).toBe('timeout');
    await fake().closed();
  });

  it('follows no redirect: a 3xx is a failed call, and the place it points to is not asked', async () => {
    const elsewhere = await startFakeChatServer();
    elsewhere.handle = answer;
    try {
      fake().handle = (_req, res) => {
        res.writeHead(307, { location: `${elsewhere.baseURL}/chat/completions` });
        res.end();
      };
      for (const stream of [false, true]) {
        const error = await collect(engine().stream(request({ stream }))).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(EngineError);
        expect((error as EngineError).reason).toBe('engine_error');
      }
      expect(elsewhere.requests).toEqual([]);
    } finally {
      await elsewhere.stop();
    }
  });

  it('hands a stream on as it arrives, pausing the server while the reader is behind, and loses nothing', async () => {
    const fragments = Array.from({ length: 80 }, (_, i) => ` word${i}`);
    fake().handle = (req, res) => {
      const stream = openStream(res, String(req.body.model));
      let i = 0;
      // One fragment per write, spread out so that they arrive as separate chunks.
      const next = () => {
        if (i === fragments.length) return stream.done();
        stream.text(fragments[i++]!);
        setTimeout(next, 1);
      };
      next();
    };
    let text = '';
    for await (const event of engine().stream(request())) {
      if (event.type !== 'text') continue;
      text += event.delta;
      // A slow reader: the chunks queue up behind it.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(text).toBe(fragments.join(''));
  });
});

describe('what the transport sends', () => {
  it('only the headers a call needs: the host’s OPENAI_CUSTOM_HEADERS, which the client reads by itself, never leave', async () => {
    fake().handle = answer;
    vi.stubEnv('OPENAI_CUSTOM_HEADERS', 'x-host-leak: from-env\nx-other: value');
    try {
      const one = engine();
      await collect(one.stream(request({ stream: false, traceHeaders: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } })));
      await one.close?.();
    } finally {
      vi.unstubAllEnvs();
    }
    const [sent] = fake().requests;
    expect(sent?.headers.authorization).toBe('Bearer test-key');
    expect(sent?.headers['content-type']).toBe('application/json');
    expect(sent?.headers.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    expect(sent?.headers['x-host-leak']).toBeUndefined();
    expect(sent?.headers['x-other']).toBeUndefined();
    // Nor the client's description of this host (operating system, architecture, runtime version).
    expect(Object.keys(sent?.headers ?? {}).filter((name) => name.startsWith('x-stainless'))).toEqual([]);
  });
});
