import { describe, expect, it } from 'vitest';
import { redactText } from '../../redact/index.ts';
import { newWebhookPublicId } from './public-id.ts';

describe('webhook public ids', () => {
  it('have the contract shape and pass the redactor unchanged', () => {
    for (const prefix of ['dst', 'int', 'evt', 'run'] as const) {
      for (let i = 0; i < 2_000; i += 1) {
        const id = newWebhookPublicId(prefix);
        expect(id).toMatch(new RegExp(`^${prefix}_[0-9A-Za-z]{20,24}$`));
        expect(redactText(id)).toBe(id);
      }
    }
  });
});
