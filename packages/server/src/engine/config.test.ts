import { describe, expect, it } from 'vitest';
import { DEFAULT_ENGINE_CONFIG, EngineConfigError, readEngineConfig } from './config.ts';

describe('readEngineConfig', () => {
  it('defaults every alias to the local engine', () => {
    expect(readEngineConfig({})).toEqual({ ...DEFAULT_ENGINE_CONFIG, local: { fragmentDelayMs: 0, triggers: true } });
  });

  it('reads an openai-compatible setup', () => {
    const config = readEngineConfig({
      ENGINE_SONATA: 'openai-compatible',
      ENGINE_SYMPHONY: 'openai-compatible',
      OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:11434/v1',
      OPENAI_COMPATIBLE_API_KEY: 'k',
      OPENAI_COMPATIBLE_MODEL_SONATA: 'small-model',
      OPENAI_COMPATIBLE_MODEL_SYMPHONY: 'large-model',
      OPENAI_COMPATIBLE_TIMEOUT_MS: '5000',
      OPENAI_COMPATIBLE_MAX_TOKENS_PARAM: 'max_completion_tokens',
      OPENAI_COMPATIBLE_SEND_EFFORT: 'false',
      OPENAI_COMPATIBLE_STREAM: '0',
      LOCAL_ENGINE_TRIGGERS: 'false',
    });
    expect(config).toEqual({
      aliases: { Prelude: 'local', Sonata: 'openai-compatible', Symphony: 'openai-compatible', Concerto: 'local' },
      local: { fragmentDelayMs: 0, triggers: false },
      openaiCompatible: {
        baseURL: 'http://127.0.0.1:11434/v1',
        apiKey: 'k',
        models: { Sonata: 'small-model', Symphony: 'large-model' },
        timeoutMs: 5000,
        maxRetries: 0,
        maxTokensParam: 'max_completion_tokens',
        sendEffort: false,
        stream: false,
      },
    });
  });

  it.each([
    [{ ENGINE_PRELUDE: 'remote' }, 'ENGINE_PRELUDE must be one of local, openai-compatible'],
    [{ ENGINE_PRELUDE: 'openai-compatible', OPENAI_COMPATIBLE_MODEL_PRELUDE: 'm' }, 'OPENAI_COMPATIBLE_BASE_URL must be an http(s) URL'],
    [{ ENGINE_PRELUDE: 'openai-compatible', OPENAI_COMPATIBLE_BASE_URL: 'ftp://x' }, 'OPENAI_COMPATIBLE_BASE_URL must be an http(s) URL'],
    [
      {
        ENGINE_PRELUDE: 'openai-compatible',
        ENGINE_CONCERTO: 'openai-compatible',
        OPENAI_COMPATIBLE_BASE_URL: 'http://x',
        OPENAI_COMPATIBLE_MODEL_PRELUDE: 'm',
      },
      'set OPENAI_COMPATIBLE_MODEL_CONCERTO',
    ],
    [
      {
        ENGINE_PRELUDE: 'openai-compatible',
        OPENAI_COMPATIBLE_BASE_URL: 'http://x',
        OPENAI_COMPATIBLE_MODEL_PRELUDE: 'm',
        OPENAI_COMPATIBLE_TIMEOUT_MS: '1.5',
      },
      'OPENAI_COMPATIBLE_TIMEOUT_MS must be a whole number',
    ],
    [
      {
        ENGINE_PRELUDE: 'openai-compatible',
        OPENAI_COMPATIBLE_BASE_URL: 'http://x',
        OPENAI_COMPATIBLE_MODEL_PRELUDE: 'm',
        OPENAI_COMPATIBLE_MAX_TOKENS_PARAM: 'tokens',
      },
      'OPENAI_COMPATIBLE_MAX_TOKENS_PARAM must be max_tokens or max_completion_tokens',
    ],
    [{ LOCAL_ENGINE_TRIGGERS: 'yes' }, 'LOCAL_ENGINE_TRIGGERS must be true or false'],
  ])('rejects %j', (env, message) => {
    expect(() => readEngineConfig(env)).toThrow(EngineConfigError);
    expect(() => readEngineConfig(env)).toThrow(message);
  });
});
