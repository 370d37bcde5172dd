import { describe, expect, it } from 'vitest';
import { BASE62_ALPHABET, randomBase62 } from '../../random.ts';
import { generateSecret, hashSecret, isSecretShaped, visiblePrefix } from './secret.ts';

describe('API key secret', () => {
  it('is service_sk_live_ followed by 24 base62 characters, different every time', () => {
    const secrets = Array.from({ length: 200 }, generateSecret);
    for (const s of secrets) expect(s).toMatch(/^service_sk_live_[0-9A-Za-z]{24}$/);
    expect(new Set(secrets).size).toBe(200);
  });

  it('shows only the fixed prefix plus 6 characters', () => {
    const secret = 'service_sk_live_abcdefGHIJKLmnopqrST123456';
    expect(visiblePrefix(secret)).toBe('service_sk_live_abcdef');
  });

  it('is stored as a hash that is not the secret', () => {
    const secret = generateSecret();
    expect(hashSecret(secret)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashSecret(secret)).not.toContain(secret.slice(16));
  });

  it('recognises only the exact secret shape', () => {
    expect(isSecretShaped(generateSecret())).toBe(true);
    for (const bad of ['service_sk_live_short', 'service_sk_test_abcdefGHIJKLmnopqrST123456', `${generateSecret()}x`]) {
      expect(isSecretShaped(bad)).toBe(false);
    }
  });

  it('draws base62 characters without modulo bias', () => {
    // 620,000 draws: 10,000 expected per character, standard deviation about 99. A plain
    // `byte % 62` would give the first 8 characters about 12,400 each; the bounds sit at 8 sigma.
    const counts = new Map<string, number>();
    for (const ch of randomBase62(620_000)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect([...counts.keys()].sort().join('')).toBe([...BASE62_ALPHABET].sort().join(''));
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan(9_200);
      expect(n).toBeLessThan(10_800);
    }
  });
});
