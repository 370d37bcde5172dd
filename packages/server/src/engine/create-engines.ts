/**
 * @module createEngines: the alias → engine map the app receives in its Deps. Aliases on the same
 * kind share one engine instance (one HTTP client for the remote server), closed once by closeEngines.
 */
import { byAlias, type Alias } from '../vocabulary/alias.ts';
import { DEFAULT_ENGINE_CONFIG, EngineConfigError, type EngineConfig } from './config.ts';
import type { Engine } from './engine.ts';
import { createLocalEngine } from './local/index.ts';
import { createOpenAICompatibleEngine } from './openai-compatible/index.ts';

export type Engines = Readonly<Record<Alias, Engine>>;

export function createEngines(config: EngineConfig = DEFAULT_ENGINE_CONFIG): Engines {
  let local: Engine | undefined;
  let remote: Engine | undefined;
  return byAlias((alias) => {
    if (config.aliases[alias] === 'local') return (local ??= createLocalEngine(config.local));
    const options = config.openaiCompatible;
    if (!options?.models[alias]) throw new EngineConfigError(`no openai-compatible model configured for ${alias}`);
    return (remote ??= createOpenAICompatibleEngine(options));
  });
}

/** Closes each engine of the map once (aliases share instances): their kept-alive connections are dropped. */
export async function closeEngines(engines: Engines): Promise<void> {
  await Promise.all([...new Set(Object.values(engines))].map((engine) => engine.close?.()));
}
