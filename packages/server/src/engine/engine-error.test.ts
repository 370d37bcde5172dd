import { describe, expect, it } from 'vitest';
import { ENGINE_ERROR_REASONS, EngineError } from './engine-error.ts';

describe('EngineError', () => {
  it.each(ENGINE_ERROR_REASONS)('%s has a neutral message and zero usage by default', (reason) => {
    const error = new EngineError(reason);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('EngineError');
    expect(error.reason).toBe(reason);
    expect(error.message).toMatch(/^The (model engine|request to the model engine) /);
    expect(error.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });

  it('carries the usage spent before the failure', () => {
    expect(new EngineError('engine_error', { inputTokens: 5, outputTokens: 7 }).usage).toEqual({ inputTokens: 5, outputTokens: 7 });
  });
});
