import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildDeliveryHeaders, signOutboundBody } from './outbound-signature.ts';

const BODY = new TextEncoder().encode('{"id":"evt_ABCDEFGHIJKLMNOP","type":"ping"}');

describe('buildDeliveryHeaders', () => {
  it('carries the five spec headers, signed with the destination secret over the raw body', () => {
    const headers = buildDeliveryHeaders({ body: BODY, secret: 'dest-secret', eventId: 'evt_ABCDEFGHIJKLMNOP', eventType: 'ping', nowMs: 1_795_500_000_999 });
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'X-SERVICE-Signature': createHmac('sha256', 'dest-secret').update(BODY).digest('hex'),
      'X-SERVICE-Timestamp': '1795500000',
      'X-SERVICE-Event-Id': 'evt_ABCDEFGHIJKLMNOP',
      'X-SERVICE-Event-Type': 'ping',
    });
    expect(headers['X-SERVICE-Signature']).toMatch(/^[0-9a-f]{64}$/);
  });

  it('signs with the new secret after a rotation, and a fresh timestamp per attempt', () => {
    const before = buildDeliveryHeaders({ body: BODY, secret: 'old', eventId: 'e', eventType: 'ping', nowMs: 1_000_000 });
    const after = buildDeliveryHeaders({ body: BODY, secret: 'new', eventId: 'e', eventType: 'ping', nowMs: 2_000_000 });
    expect(after['X-SERVICE-Signature']).not.toBe(before['X-SERVICE-Signature']);
    expect(after['X-SERVICE-Signature']).toBe(signOutboundBody(BODY, 'new'));
    expect([before['X-SERVICE-Timestamp'], after['X-SERVICE-Timestamp']]).toEqual(['1000', '2000']);
  });

  it('refuses to sign without a secret', () => {
    expect(() => signOutboundBody(BODY, '')).toThrow();
  });
});
