/**
 * @module Engine configuration: which engine serves each alias. `loadConfig` (config.ts) reads it
 * from the environment once, with the deployment's other settings (`ServerConfig.engines`).
 *
 * | variable                                   | meaning                                               |
 * |--------------------------------------------|-------------------------------------------------------|
 * | `ENGINE_PRELUDE` … `ENGINE_CONCERTO`        | `local` (default) or `openai-compatible`              |
 * | `OPENAI_COMPATIBLE_BASE_URL`               | Chat Completions base URL (required if one alias uses it) |
 * | `OPENAI_COMPATIBLE_API_KEY`                | bearer key, if the server needs one                   |
 * | `OPENAI_COMPATIBLE_MODEL_<ALIAS>`          | model name for each alias served that way (required)  |
 * | `OPENAI_COMPATIBLE_TIMEOUT_MS`             | per request, default 60000                            |
 * | `OPENAI_COMPATIBLE_MAX_RETRIES`            | default 0                                             |
 * | `OPENAI_COMPATIBLE_MAX_TOKENS_PARAM`       | `max_tokens` (default) or `max_completion_tokens`     |
 * | `OPENAI_COMPATIBLE_SEND_EFFORT`            | `true` (default) / `false`: send `reasoning_effort`  |
 * | `OPENAI_COMPATIBLE_STREAM`                 | `true` (default) / `false`: stream from the server    |
 * | `LOCAL_ENGINE_FRAGMENT_DELAY_MS`           | pause between local fragments, default 0              |
 * | `LOCAL_ENGINE_TRIGGERS`                    | `true` (default) / `false`: honour `[[fail]]` etc.    |
 *
 * Errors here are for the operator at start-up, so they may name variables; they never reach a client.
 */
import { isOneOf } from '../one-of.ts';
import { ALIASES, byAlias, type Alias } from '../vocabulary/alias.ts';
import type { LocalEngineOptions } from './local/index.ts';
import type { OpenAICompatibleOptions } from './openai-compatible/index.ts';

const ENGINE_KINDS = ['local', 'openai-compatible'] as const;
type EngineKind = (typeof ENGINE_KINDS)[number];

export interface EngineConfig {
  readonly aliases: Readonly<Record<Alias, EngineKind>>;
  readonly local?: LocalEngineOptions;
  /** Required when an alias is `openai-compatible`; its `models` must name a model for each such alias. */
  readonly openaiCompatible?: OpenAICompatibleOptions;
}

/** Every alias on the local engine: the embedded default. */
export const DEFAULT_ENGINE_CONFIG: EngineConfig = {
  aliases: { Prelude: 'local', Sonata: 'local', Symphony: 'local', Concerto: 'local' },
};

export class EngineConfigError extends Error {
  override readonly name = 'EngineConfigError';
}

export function readEngineConfig(env: Readonly<Record<string, string | undefined>>): EngineConfig {
  const models: Partial<Record<Alias, string>> = {};
  const aliases = byAlias((alias) => {
    const upper = alias.toUpperCase();
    const kind = env[`ENGINE_${upper}`] || 'local';
    if (!isOneOf(ENGINE_KINDS, kind)) {
      throw new EngineConfigError(`ENGINE_${upper} must be one of ${ENGINE_KINDS.join(', ')}`);
    }
    const model = env[`OPENAI_COMPATIBLE_MODEL_${upper}`];
    if (model) models[alias] = model;
    return kind;
  });
  const local: LocalEngineOptions = {
    fragmentDelayMs: integer(env, 'LOCAL_ENGINE_FRAGMENT_DELAY_MS', 0),
    triggers: flag(env, 'LOCAL_ENGINE_TRIGGERS', true),
  };
  const remote = ALIASES.filter((alias) => aliases[alias] === 'openai-compatible');
  if (remote.length === 0) return { aliases, local };

  const baseURL = env.OPENAI_COMPATIBLE_BASE_URL;
  if (!baseURL || !/^https?:\/\//.test(baseURL)) {
    throw new EngineConfigError('OPENAI_COMPATIBLE_BASE_URL must be an http(s) URL when an alias uses openai-compatible');
  }
  const missing = remote.filter((alias) => !models[alias]);
  if (missing.length > 0) {
    throw new EngineConfigError(`set ${missing.map((a) => `OPENAI_COMPATIBLE_MODEL_${a.toUpperCase()}`).join(', ')}`);
  }
  const param = env.OPENAI_COMPATIBLE_MAX_TOKENS_PARAM || 'max_tokens';
  if (param !== 'max_tokens' && param !== 'max_completion_tokens') {
    throw new EngineConfigError('OPENAI_COMPATIBLE_MAX_TOKENS_PARAM must be max_tokens or max_completion_tokens');
  }
  return {
    aliases,
    local,
    openaiCompatible: {
      baseURL,
      ...(env.OPENAI_COMPATIBLE_API_KEY ? { apiKey: env.OPENAI_COMPATIBLE_API_KEY } : {}),
      models,
      timeoutMs: integer(env, 'OPENAI_COMPATIBLE_TIMEOUT_MS', 60_000),
      maxRetries: integer(env, 'OPENAI_COMPATIBLE_MAX_RETRIES', 0),
      maxTokensParam: param,
      sendEffort: flag(env, 'OPENAI_COMPATIBLE_SEND_EFFORT', true),
      stream: flag(env, 'OPENAI_COMPATIBLE_STREAM', true),
    },
  };
}

function integer(env: Readonly<Record<string, string | undefined>>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new EngineConfigError(`${name} must be a whole number`);
  return Number(raw);
}

function flag(env: Readonly<Record<string, string | undefined>>, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new EngineConfigError(`${name} must be true or false`);
}
