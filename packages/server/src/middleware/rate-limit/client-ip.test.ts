/**
 * @module Tests of client address extraction and of the per-IP bucket key.
 */
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { clientIp, clientKey, type ClientIpOptions } from './client-ip.ts';

describe('clientKey', () => {
  it.each([
    ['IPv4 as is', '203.0.113.9', '203.0.113.9'],
    ['IPv4-mapped IPv6 as IPv4', '::ffff:203.0.113.9', '203.0.113.9'],
    ['IPv6 by /64', '2001:db8:a:b:c:d:e:f', '2001:db8:a:b::/64'],
    ['compressed IPv6', '2001:db8::1', '2001:db8:0:0::/64'],
    ['loopback IPv6', '::1', '0:0:0:0::/64'],
    ['IPv6 with leading zeros and upper case', '2001:0DB8:000A:0001::1', '2001:db8:a:1::/64'],
    ['IPv6 with an embedded IPv4 tail', '64:ff9b:1:2::192.0.2.1', '64:ff9b:1:2::/64'],
    ['unknown', undefined, 'unknown'],
  ])('%s', (_name, address, want) => {
    expect(clientKey(address)).toBe(want);
  });
});

describe('clientIp', () => {
  async function seen(options: ClientIpOptions, headers: Record<string, string>, remoteAddress?: string) {
    const app = new Hono();
    app.get('/', (c) => c.text(clientIp(c, options) ?? '(none)', 200));
    const env = remoteAddress === undefined ? undefined : { incoming: { socket: { remoteAddress } } };
    return (await app.request('/', { headers }, env)).text();
  }

  it.each([
    ['the socket without trustProxy', {}, { 'X-Forwarded-For': '1.1.1.1' }, '10.0.0.2', '10.0.0.2'],
    ['the last entry with one trusted proxy', { trustProxy: true }, { 'X-Forwarded-For': '1.1.1.1, 2.2.2.2' }, '10.0.0.2', '2.2.2.2'],
    ['the second from the right with two', { trustProxy: 2 }, { 'X-Forwarded-For': '1.1.1.1, 2.2.2.2, 3.3.3.3' }, '10.0.0.2', '2.2.2.2'],
    ['the leftmost when the chain is short', { trustProxy: 3 }, { 'X-Forwarded-For': '2.2.2.2' }, '10.0.0.2', '2.2.2.2'],
    ['the socket when the header is garbage', { trustProxy: true }, { 'X-Forwarded-For': 'not-an-ip' }, '10.0.0.2', '10.0.0.2'],
    ['the socket when the header is absent', { trustProxy: true }, {}, '10.0.0.2', '10.0.0.2'],
    ['nothing without a socket', {}, {}, undefined, '(none)'],
  ])('uses %s', async (_name, options, headers, socket, want) => {
    expect(await seen(options, headers, socket)).toBe(want);
  });
});
