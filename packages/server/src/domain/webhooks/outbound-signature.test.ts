import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it, vi } from 'vitest';
import { buildDeliveryHeaders, signOutboundBody, signStandardWebhook, standardWebhookKey } from './outbound-signature.ts';
import { newSigningSecret } from './secret-box.ts';

const BODY = new TextEncoder().encode('{"id":"evt_ABCDEFGHIJKLMNOP","type":"ping"}');
const SECRET = 'whsec_Zw5Hd3Xb7Qm2Lp9Tn4Vr8Kc1Ef2Gh4Jk';

/** What the `standardwebhooks` package makes of these headers at `nowMs` (its clock is `Date.now`). */
function standardVerify(secret: string, headers: Record<string, string>, nowMs: number): unknown {
  const clock = vi.spyOn(Date, 'now').mockReturnValue(nowMs);
  try {
    return new Webhook(secret).verify(Buffer.from(BODY), headers);
  } finally {
    clock.mockRestore();
  }
}

describe('buildDeliveryHeaders', () => {
  it('carries the spec headers, signed with the destination secret over the raw body, and the Standard Webhooks ones', () => {
    const headers = buildDeliveryHeaders({ body: BODY, secret: SECRET, eventId: 'evt_ABCDEFGHIJKLMNOP', eventType: 'ping', nowMs: 1_795_500_000_999 });
    const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'X-SERVICE-Signature': createHmac('sha256', SECRET).update(BODY).digest('hex'),
      'X-SERVICE-Timestamp': '1795500000',
      'X-SERVICE-Event-Id': 'evt_ABCDEFGHIJKLMNOP',
      'X-SERVICE-Event-Type': 'ping',
      'webhook-id': 'evt_ABCDEFGHIJKLMNOP',
      'webhook-timestamp': '1795500000',
      'webhook-signature': `v1,${createHmac('sha256', key)
        .update(`evt_ABCDEFGHIJKLMNOP.1795500000.${Buffer.from(BODY).toString()}`)
        .digest('base64')}`,
    });
    expect(headers['X-SERVICE-Signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('is verified by the standardwebhooks package with the secret string as shown', () => {
    const nowMs = 1_795_500_000_000;
    for (let i = 0; i < 20; i += 1) {
      const secret = newSigningSecret();
      const headers = buildDeliveryHeaders({ body: BODY, secret, eventId: 'evt_ABCDEFGHIJKLMNOP', eventType: 'ping', nowMs });
      expect(standardVerify(secret, headers, nowMs)).toEqual({ id: 'evt_ABCDEFGHIJKLMNOP', type: 'ping' });
      expect(() => standardVerify(newSigningSecret(), headers, nowMs)).toThrow(/No matching signature/);
      // The timestamp is signed: moving it breaks the signature.
      expect(() => standardVerify(secret, { ...headers, 'webhook-timestamp': String(nowMs / 1000 + 1) }, nowMs)).toThrow(/No matching signature/);
    }
  });

  it('adds the previous secret as a second v1 signature during the grace period; X-SERVICE-Signature keeps the new one', () => {
    const previous = newSigningSecret();
    const nowMs = 1_795_500_000_000;
    const headers = buildDeliveryHeaders({ body: BODY, secret: SECRET, previousSecret: previous, eventId: 'evt_ABCDEFGHIJKLMNOP', eventType: 'ping', nowMs });
    const [first, second] = headers['webhook-signature']!.split(' ');
    expect(first).toBe(signStandardWebhook({ id: 'evt_ABCDEFGHIJKLMNOP', timestamp: '1795500000', body: BODY, secret: SECRET }));
    expect(second).toBe(signStandardWebhook({ id: 'evt_ABCDEFGHIJKLMNOP', timestamp: '1795500000', body: BODY, secret: previous }));
    expect(headers['X-SERVICE-Signature']).toBe(signOutboundBody(BODY, SECRET));
    expect(standardVerify(SECRET, headers, nowMs)).toBeTruthy();
    expect(standardVerify(previous, headers, nowMs)).toBeTruthy();
  });

  it('signs with the new secret after a rotation, and a fresh timestamp per attempt', () => {
    const rotated = newSigningSecret();
    const before = buildDeliveryHeaders({ body: BODY, secret: SECRET, eventId: 'e', eventType: 'ping', nowMs: 1_000_000 });
    const after = buildDeliveryHeaders({ body: BODY, secret: rotated, eventId: 'e', eventType: 'ping', nowMs: 2_000_000 });
    expect(after['X-SERVICE-Signature']).not.toBe(before['X-SERVICE-Signature']);
    expect(after['X-SERVICE-Signature']).toBe(signOutboundBody(BODY, rotated));
    expect([before['X-SERVICE-Timestamp'], after['X-SERVICE-Timestamp']]).toEqual(['1000', '2000']);
    expect([before['webhook-timestamp'], after['webhook-timestamp']]).toEqual(['1000', '2000']);
  });

  it('refuses to sign without a secret, or with one the Standard Webhooks libraries could not read', () => {
    expect(() => signOutboundBody(BODY, '')).toThrow();
    expect(() => standardWebhookKey('whsec_')).toThrow();
    expect(() => standardWebhookKey('whsec_not-base64!')).toThrow();
    expect(standardWebhookKey(SECRET)).toHaveLength(24);
  });
});
