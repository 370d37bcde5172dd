import { describe, expect, it } from 'vitest';
import { base32Decode, base32Encode, generateTotpSecret, matchingStep, timeStep, totpAt, totpCode } from './totp.ts';

// RFC 6238 Appendix B: the seeds are ASCII "1234567890" repeated to the hash's size.
const SEED = {
  sha1: Buffer.from('12345678901234567890'),
  sha256: Buffer.from('12345678901234567890123456789012'),
  sha512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'),
};

describe('TOTP (RFC 6238)', () => {
  it.each([
    [59, '94287082', '46119246', '90693936'],
    [1111111109, '07081804', '68084774', '25091201'],
    [1111111111, '14050471', '67062674', '99943326'],
    [1234567890, '89005924', '91819424', '93441116'],
    [2000000000, '69279037', '90698825', '38618901'],
    [20000000000, '65353130', '77737706', '47863826'],
  ])('at T=%i gives the RFC test vectors', (seconds, sha1, sha256, sha512) => {
    const step = timeStep(new Date(seconds * 1000));
    expect(totpAt(SEED.sha1, step, { digits: 8, algorithm: 'sha1' })).toBe(sha1);
    expect(totpAt(SEED.sha256, step, { digits: 8, algorithm: 'sha256' })).toBe(sha256);
    expect(totpAt(SEED.sha512, step, { digits: 8, algorithm: 'sha512' })).toBe(sha512);
  });

  it('gives RFC 4226 HOTP values for counters 0..9 with 6 digits', () => {
    const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
    expect(expected.map((_, counter) => totpAt(SEED.sha1, counter))).toEqual(expected);
  });

  it('round-trips Base32 (RFC 4648 vectors) and reads authenticator-style text', () => {
    expect(base32Encode(Buffer.from('foobar'))).toBe('MZXW6YTBOI');
    expect(base32Decode('MZXW6YTBOI======').toString()).toBe('foobar');
    expect(base32Decode('mzxw 6ytb oi').toString()).toBe('foobar');
    const secret = generateTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Encode(base32Decode(secret))).toBe(secret);
  });

  it('accepts the code of the current step and one step either side, nothing further', () => {
    const secret = base32Encode(SEED.sha1);
    const at = new Date(1111111111 * 1000);
    const step = timeStep(at);
    expect(matchingStep(secret, totpCode(secret, at), at)).toBe(step);
    expect(matchingStep(secret, totpAt(SEED.sha1, step - 1), at)).toBe(step - 1);
    expect(matchingStep(secret, totpAt(SEED.sha1, step + 1), at)).toBe(step + 1);
    expect(matchingStep(secret, totpAt(SEED.sha1, step - 2), at)).toBeUndefined();
    expect(matchingStep(secret, '000000x', at)).toBeUndefined();
  });
});
