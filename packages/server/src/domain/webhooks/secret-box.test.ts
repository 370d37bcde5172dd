import { describe, expect, it } from 'vitest';
import { createSecretBox, newSigningSecret } from './secret-box.ts';

const KEY = 'k'.repeat(40);

describe('secret box', () => {
  it('issues whsec_ + 32 base62 secrets, never twice the same', () => {
    const a = newSigningSecret();
    expect(a).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    expect(newSigningSecret()).not.toBe(a);
  });

  it('seals without the secret in clear, with a fresh IV, and opens it back', () => {
    const box = createSecretBox(KEY);
    const secret = newSigningSecret();
    const sealed = box.seal(secret);
    expect(sealed).not.toContain(secret.slice(6));
    expect(box.seal(secret)).not.toBe(sealed);
    expect(box.open(sealed)).toBe(secret);
  });

  it('refuses another key, an altered value and a short key', () => {
    const sealed = createSecretBox(KEY).seal('whsec_x');
    expect(() => createSecretBox('z'.repeat(40)).open(sealed)).toThrow();
    const parts = sealed.split('.');
    parts[3] = Buffer.from('whsec_y').toString('base64url');
    expect(() => createSecretBox(KEY).open(parts.join('.'))).toThrow();
    expect(() => createSecretBox('short')).toThrow('SECRET_KEY');
  });
});
