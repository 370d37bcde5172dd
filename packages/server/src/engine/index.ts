/**
 * @module Engines behind the aliases: the interface, the two engines, configuration and helpers.
 */
export * from './engine.ts';
export * from './engine-error.ts';
export * from './collect.ts';
export * from './tokens.ts';
export * from './model-input.ts';
export * from './config.ts';
export * from './create-engines.ts';
export { createLocalEngine, type LocalEngineOptions } from './local/index.ts';
export { TRIGGERS, type Trigger } from './local/triggers.ts';
export { createOpenAICompatibleEngine, type OpenAICompatibleOptions } from './openai-compatible/index.ts';
