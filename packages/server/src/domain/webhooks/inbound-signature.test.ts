import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../errors.ts';
import { assertInboundSignature, signInboundBody, SignatureInvalidError, verifyInboundSignature, type InboundSignatureInput } from './inbound-signature.ts';

const SECRET = 'whsec_test_secret_for_inbound';
const NOW = Date.UTC(2026, 10, 22, 6, 0, 0);
const NOW_S = NOW / 1000;
const BODY = new TextEncoder().encode('{"event":"contact.created","id":"c_1","contact":{"name":"Ada"}}');

// Computed independently of the module under test, as an external sender would.
function senderSign(body: Uint8Array | string, secret = SECRET, algorithm: 'sha256' | 'sha512' = 'sha256'): string {
  return createHmac(algorithm, secret).update(body).digest('hex');
}

function input(overrides: Partial<InboundSignatureInput> = {}, headers: Record<string, string> = {}): InboundSignatureInput {
  return {
    rawBody: BODY,
    headers: { 'x-service-signature': senderSign(BODY), ...headers },
    secret: SECRET,
    now: () => NOW,
    ...overrides,
  };
}

describe('verifyInboundSignature', () => {
  it('accepts a SHA-256 signature over the raw bytes', () => {
    expect(verifyInboundSignature(input())).toEqual({ ok: true, timestampMs: null });
  });

  it('accepts a SHA-512 signature (128 hex) when the webhook is configured for it', () => {
    const headers = new Headers({ 'X-SERVICE-Signature': senderSign(BODY, SECRET, 'sha512') });
    expect(verifyInboundSignature(input({ headers, algorithm: 'sha512' }))).toEqual({ ok: true, timestampMs: null });
  });

  it('reads the configured header name, case-insensitively, and ignores the default one then', () => {
    const headers = { 'X-Acme-Sig': senderSign(BODY) };
    expect(verifyInboundSignature(input({ headers, signatureHeader: 'x-acme-sig' })).ok).toBe(true);
    const onlyDefault = { 'X-SERVICE-Signature': senderSign(BODY) };
    expect(verifyInboundSignature(input({ headers: onlyDefault, signatureHeader: 'X-Acme-Sig' }))).toMatchObject({
      ok: false,
      reason: 'missing_signature',
    });
  });

  it('verifies the bytes, not the JSON: the same object re-serialized differently fails', () => {
    const reserialized = new TextEncoder().encode(JSON.stringify(JSON.parse(new TextDecoder().decode(BODY)), null, 2));
    expect(verifyInboundSignature(input({ rawBody: reserialized }))).toEqual({
      ok: false,
      error: 'signature_invalid',
      reason: 'signature_mismatch',
    });
  });

  it('covers non-UTF-8 bytes exactly as sent', () => {
    const raw = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]);
    expect(verifyInboundSignature(input({ rawBody: raw, headers: { 'X-SERVICE-Signature': senderSign(raw) } })).ok).toBe(true);
  });

  const refusals: [string, Partial<InboundSignatureInput>, Record<string, string> | undefined, string][] = [
    ['no secret configured (fail-closed)', { secret: undefined }, undefined, 'missing_secret'],
    ['an empty secret', { secret: '' }, undefined, 'missing_secret'],
    ['no signature header', { headers: {} }, undefined, 'missing_signature'],
    ['an empty signature header', { headers: { 'X-SERVICE-Signature': '' } }, undefined, 'missing_signature'],
    ['uppercase hex', { headers: { 'X-SERVICE-Signature': senderSign(BODY).toUpperCase() } }, undefined, 'malformed_signature'],
    ['a truncated signature', { headers: { 'X-SERVICE-Signature': senderSign(BODY).slice(0, 63) } }, undefined, 'malformed_signature'],
    ['a SHA-512 signature on a SHA-256 webhook', { headers: { 'X-SERVICE-Signature': senderSign(BODY, SECRET, 'sha512') } }, undefined, 'malformed_signature'],
    ['a SHA-256 signature on a SHA-512 webhook', { algorithm: 'sha512' }, undefined, 'malformed_signature'],
    [
      'base64 instead of hex',
      { headers: { 'X-SERVICE-Signature': createHmac('sha256', SECRET).update(BODY).digest('base64') } },
      undefined,
      'malformed_signature',
    ],
    ['a sha1= scheme', { headers: { 'X-SERVICE-Signature': `sha1=${senderSign(BODY)}` } }, undefined, 'unsupported_scheme'],
    ['a v1= scheme', { headers: { 'X-SERVICE-Signature': `v1=${senderSign(BODY)}` } }, undefined, 'unsupported_scheme'],
    ['a sha512= scheme on a SHA-256 webhook', { headers: { 'X-SERVICE-Signature': `sha512=${senderSign(BODY)}` } }, undefined, 'unsupported_scheme'],
    ['a wrong secret', { headers: { 'X-SERVICE-Signature': senderSign(BODY, 'another-secret') } }, undefined, 'signature_mismatch'],
    ['a tampered body', { rawBody: new TextEncoder().encode('{"event":"contact.created","id":"c_2"}') }, undefined, 'signature_mismatch'],
    ['a repeated signature header', { headers: { 'X-SERVICE-Signature': [senderSign(BODY), senderSign(BODY)] as never } }, undefined, 'malformed_signature'],
  ];

  it.each(refusals)('refuses %s', (_name, overrides, headers, reason) => {
    const verdict = verifyInboundSignature(input(overrides, headers));
    expect(verdict).toEqual({ ok: false, error: 'signature_invalid', reason });
  });

  it('accepts a sha256= (or sha512=) scheme prefix naming the configured algorithm', () => {
    expect(verifyInboundSignature(input({ headers: { 'X-SERVICE-Signature': `sha256=${senderSign(BODY)}` } })).ok).toBe(true);
    const sha512 = { 'X-SERVICE-Signature': `sha512=${senderSign(BODY, SECRET, 'sha512')}` };
    expect(verifyInboundSignature(input({ headers: sha512, algorithm: 'sha512' })).ok).toBe(true);
  });

  describe('timestamp', () => {
    const withTs = (ts: string, overrides: Partial<InboundSignatureInput> = {}) => verifyInboundSignature(input(overrides, { 'X-SERVICE-Timestamp': ts }));

    it('is required only when the webhook says so', () => {
      expect(verifyInboundSignature(input({ timestampRequired: true }))).toMatchObject({ ok: false, reason: 'missing_timestamp' });
      expect(verifyInboundSignature(input({ timestampRequired: false })).ok).toBe(true);
    });

    it('accepts unix seconds and ISO 8601 inside the window and reports the instant', () => {
      expect(withTs(String(NOW_S), { timestampRequired: true })).toEqual({ ok: true, timestampMs: NOW });
      expect(withTs('2026-11-22T06:00:00Z')).toEqual({ ok: true, timestampMs: NOW });
      expect(withTs('2026-11-22T07:00:00.000+01:00')).toEqual({ ok: true, timestampMs: NOW });
      expect(withTs('2026-11-22T05:58:00.250Z')).toEqual({ ok: true, timestampMs: NOW - 119_750 });
    });

    const window: [string, string, string | null][] = [
      ['300 s old (edge)', String(NOW_S - 300), null],
      ['301 s old', String(NOW_S - 301), 'timestamp_too_old'],
      ['60 s ahead (edge)', String(NOW_S + 60), null],
      ['61 s ahead', String(NOW_S + 61), 'timestamp_in_future'],
      ['120 s ahead, inside ±300 but past the future tolerance', String(NOW_S + 120), 'timestamp_in_future'],
      ['ISO 301 s old', '2026-11-22T05:54:59Z', 'timestamp_too_old'],
      ['ISO 61 s ahead', '2026-11-22T06:01:01Z', 'timestamp_in_future'],
      ['milliseconds', String(NOW), 'malformed_timestamp'],
      ['ISO without an offset', '2026-11-22T06:00:00', 'malformed_timestamp'],
      ['an impossible date', '2026-02-31T06:00:00Z', 'malformed_timestamp'],
      ['text', 'yesterday', 'malformed_timestamp'],
      ['a negative number', '-5', 'malformed_timestamp'],
    ];
    it.each(window)('%s', (_name, ts, reason) => {
      const verdict = withTs(ts);
      if (reason === null) expect(verdict.ok).toBe(true);
      else expect(verdict).toEqual({ ok: false, error: 'signature_invalid', reason });
    });

    it('is checked when present even if not required, and before the HMAC', () => {
      // Wrong signature and stale timestamp: the timestamp is what is reported, no hashing needed.
      const verdict = verifyInboundSignature(
        input({ headers: { 'X-SERVICE-Signature': senderSign(BODY, 'wrong'), 'X-SERVICE-Timestamp': String(NOW_S - 1000) } }),
      );
      expect(verdict).toMatchObject({ ok: false, reason: 'timestamp_too_old' });
    });

    it('uses the injected clock', () => {
      const later = () => NOW + 3_600_000;
      expect(withTs(String(NOW_S), { now: later })).toMatchObject({ ok: false, reason: 'timestamp_too_old' });
      expect(withTs(String(NOW_S + 3600), { now: later }).ok).toBe(true);
    });
  });
});

describe('assertInboundSignature', () => {
  it('throws a 401 signature_invalid ServiceError whose reason is not part of the public body', () => {
    let caught: unknown;
    try {
      assertInboundSignature(input({ secret: null }));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SignatureInvalidError);
    expect(caught).toBeInstanceOf(ServiceError);
    const error = caught as SignatureInvalidError;
    expect([error.code, error.status, error.publicMessage, error.extras]).toEqual(['signature_invalid', 401, undefined, {}]);
    expect(error.reason).toBe('missing_secret');
  });

  it('returns the timestamp when the request verifies', () => {
    expect(assertInboundSignature(input({}, { 'X-SERVICE-Timestamp': String(NOW_S) }))).toEqual({ timestampMs: NOW });
  });
});

describe('signInboundBody', () => {
  it('produces what an external sender computes', () => {
    expect(signInboundBody(BODY, SECRET)).toBe(senderSign(BODY));
    expect(signInboundBody(BODY, SECRET, 'sha512')).toBe(senderSign(BODY, SECRET, 'sha512'));
  });
});
