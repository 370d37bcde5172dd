import { describe, expect, it } from 'vitest';
import { redactText } from '../../redact/index.ts';
import { newPublicId } from './ids.ts';

describe('newPublicId', () => {
  it('draws ids of the contract form that the redactor leaves unchanged', () => {
    // 5,000 draws: plain random ids would have several that the redactor alters (about 1 in 1,000).
    for (let i = 0; i < 5000; i++) {
      const id = newPublicId('run');
      expect(id).toMatch(/^run_[A-Za-z0-9]{16,32}$/);
      expect(redactText(id)).toBe(id);
    }
  });
});
