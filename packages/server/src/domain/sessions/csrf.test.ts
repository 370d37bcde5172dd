import { describe, expect, it } from 'vitest';
import { randomBase62 } from '../../random.ts';
import { CSRF_TOKEN_LENGTH, csrfTokenOf } from './csrf.ts';

describe('csrfTokenOf', () => {
  it('is 43 base62 characters, the same for one cookie every time, another for another cookie', () => {
    const cookies = Array.from({ length: 200 }, () => randomBase62(43));
    const tokens = cookies.map(csrfTokenOf);
    for (const token of tokens) expect(token).toMatch(new RegExp(`^[0-9A-Za-z]{${CSRF_TOKEN_LENGTH}}$`));
    expect(cookies.map(csrfTokenOf)).toEqual(tokens);
    expect(new Set(tokens).size).toBe(cookies.length);
  });

  it('shows nothing of the cookie it comes from', () => {
    const cookie = randomBase62(43);
    const token = csrfTokenOf(cookie);
    expect(token).not.toBe(cookie);
    // No run of 8 characters of the cookie appears in the token (a copy or a slice of it would).
    for (let at = 0; at + 8 <= cookie.length; at += 1) expect(token).not.toContain(cookie.slice(at, at + 8));
  });
});
