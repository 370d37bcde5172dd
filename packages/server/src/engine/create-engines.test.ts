import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from './collect.ts';
import { readEngineConfig } from './config.ts';
import { createEngines } from './create-engines.ts';
import type { EngineRequest } from './engine.ts';
import { sendCompletion, startFakeChatServer, type FakeChatServer } from '@service/testing/fake-chat-server';

let fake: FakeChatServer;
beforeAll(async () => {
  fake = await startFakeChatServer();
  fake.handle = (req, res) =>
    sendCompletion(res, String(req.body.model), `remote answer from ${String(req.body.model)}`, { prompt_tokens: 4, completion_tokens: 5 });
});
afterAll(async () => {
  await fake.stop();
});

const ask = (alias: EngineRequest['alias']): EngineRequest => ({
  alias,
  agentSlug: 'finance',
  messages: [{ role: 'user', content: 'Check the budget' }],
  stream: false,
});

describe('createEngines', () => {
  it('serves every alias with one local engine by default', async () => {
    const engines = createEngines();
    expect(Object.keys(engines)).toEqual(['Prelude', 'Sonata', 'Symphony', 'Concerto']);
    for (const alias of ['Prelude', 'Sonata', 'Symphony', 'Concerto'] as const) {
      const result = await collect(engines[alias].stream(ask(alias)));
      expect(result.content).toMatch(/Finance/);
    }
    expect(engines.Prelude).toBe(engines.Concerto);
  });

  it('routes aliases to the configured engine and model', async () => {
    const engines = createEngines(
      readEngineConfig({
        ENGINE_SYMPHONY: 'openai-compatible',
        ENGINE_CONCERTO: 'openai-compatible',
        OPENAI_COMPATIBLE_BASE_URL: fake.baseURL,
        OPENAI_COMPATIBLE_MODEL_SYMPHONY: 'large-model',
        OPENAI_COMPATIBLE_MODEL_CONCERTO: 'local-cluster-model',
      }),
    );
    expect((await collect(engines.Symphony.stream(ask('Symphony')))).content).toBe('remote answer from large-model');
    expect((await collect(engines.Concerto.stream(ask('Concerto')))).content).toBe('remote answer from local-cluster-model');
    expect((await collect(engines.Sonata.stream(ask('Sonata')))).content).toMatch(/Finance/);
    expect(fake.requests.map((r) => r.body.model)).toEqual(['large-model', 'local-cluster-model']);
  });

  it('refuses an openai-compatible alias without a model', () => {
    expect(() =>
      createEngines({
        aliases: { Prelude: 'openai-compatible', Sonata: 'local', Symphony: 'local', Concerto: 'local' },
        openaiCompatible: { baseURL: fake.baseURL, models: {} },
      }),
    ).toThrow('no openai-compatible model configured for Prelude');
  });
});
