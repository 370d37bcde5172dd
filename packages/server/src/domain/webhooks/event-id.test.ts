import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../errors.ts';
import { deriveEventId, EVENT_ID_HEADERS, isValidEventId, resolveInboundEventId } from './event-id.ts';

const BODY = new TextEncoder().encode('{"id":"c_1"}');

describe('resolveInboundEventId', () => {
  it('prefers X-SERVICE-Event-Id over every alternative', () => {
    const headers = new Headers({
      'X-Hook-Id': 'hook-5',
      'X-Webhook-Id': 'webhook-4',
      'X-Request-Id': 'request-3',
      'X-Event-Id': 'event-2',
      'X-SERVICE-Event-Id': 'service-1',
    });
    expect(resolveInboundEventId(headers, BODY)).toEqual({ eventId: 'service-1', source: 'X-SERVICE-Event-Id' });
  });

  const order: [string, Record<string, string>, string, string][] = [
    ['X-Event-Id before X-Request-Id', { 'x-request-id': 'r', 'x-event-id': 'e' }, 'e', 'X-Event-Id'],
    ['X-Request-Id before X-Webhook-Id', { 'x-webhook-id': 'w', 'x-request-id': 'r' }, 'r', 'X-Request-Id'],
    ['X-Webhook-Id before X-Hook-Id', { 'x-hook-id': 'h', 'x-webhook-id': 'w' }, 'w', 'X-Webhook-Id'],
    ['X-Hook-Id alone', { 'X-HOOK-ID': 'h' }, 'h', 'X-Hook-Id'],
  ];
  it.each(order)('%s', (_name, headers, eventId, source) => {
    expect(resolveInboundEventId(headers, BODY)).toEqual({ eventId, source });
  });

  it('derives sha256:<hex of the raw body> when no id header is sent, stable across calls', () => {
    const expected = `sha256:${createHash('sha256').update(BODY).digest('hex')}`;
    expect(resolveInboundEventId({}, BODY)).toEqual({ eventId: expected, source: 'body' });
    expect(resolveInboundEventId(new Headers(), BODY).eventId).toBe(expected);
    expect(deriveEventId(new TextEncoder().encode('{"id":"c_2"}'))).not.toBe(expected);
  });

  const invalid: [string, string][] = [
    ['201 characters', 'a'.repeat(201)],
    ['a control character', 'evt\u0001x'],
    ['a non-ASCII character', 'évènement'],
    ['only spaces', '   '],
    ['an inner space', 'order 42'],
  ];
  it.each(invalid)('refuses a present id with %s as 400 invalid_request naming the header', (_name, value) => {
    let caught: unknown;
    try {
      resolveInboundEventId({ 'X-Event-Id': value, 'X-Hook-Id': 'fallback-must-not-be-used' }, BODY);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ServiceError);
    expect((caught as ServiceError).code).toBe('invalid_request');
    expect((caught as ServiceError).status).toBe(400);
    expect((caught as ServiceError).publicMessage).toContain('X-Event-Id');
  });

  it('accepts 1 to 200 visible ASCII characters, as the contract pattern says', () => {
    expect(isValidEventId('a'.repeat(200))).toBe(true);
    expect(isValidEventId('lead-2026-11-22-000184')).toBe(true);
    expect(isValidEventId('~!#$%&*+/=?^_`{|}')).toBe(true);
    expect(isValidEventId('order 42')).toBe(false);
    expect(isValidEventId('')).toBe(false);
  });

  it('lists the spec headers in the spec order', () => {
    expect(EVENT_ID_HEADERS).toEqual(['X-SERVICE-Event-Id', 'X-Event-Id', 'X-Request-Id', 'X-Webhook-Id', 'X-Hook-Id']);
  });
});
