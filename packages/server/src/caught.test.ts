import { describe, expect, it } from 'vitest';
import { errnoOf, messageOf } from './caught.ts';

describe('caught values', () => {
  it("gives an Error's message, and anything else as text", () => {
    expect(messageOf(new TypeError('bad input'))).toBe('bad input');
    expect(messageOf('plain')).toBe('plain');
    expect(messageOf(42)).toBe('42');
    expect(messageOf(undefined)).toBe('undefined');
  });

  it("gives a system error's code, and undefined for anything without a text code", () => {
    expect(errnoOf(Object.assign(new Error('exists'), { code: 'EEXIST' }))).toBe('EEXIST');
    expect(errnoOf({ code: 'ENOENT' })).toBe('ENOENT');
    expect(errnoOf({ code: 7 })).toBeUndefined();
    expect(errnoOf(new Error('no code'))).toBeUndefined();
    expect(errnoOf(null)).toBeUndefined();
    expect(errnoOf('EEXIST')).toBeUndefined();
  });
});
