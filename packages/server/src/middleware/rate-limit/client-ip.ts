/**
 * @module The client address a per-IP limit counts against. It comes from the socket; the
 * `X-Forwarded-For` header is believed only when the deployment says a proxy sets it
 * (`trustProxy`), since any client can send one.
 */
import { isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';

export interface ClientIpOptions {
  /**
   * Number of reverse proxies in front of the server that append to `X-Forwarded-For`
   * (`true` = 1). The client is the entry that many places from the right: entries further
   * left were written by the client and can be forged. Default: none, use the socket.
   */
  trustProxy?: boolean | number;
}

/** The client's address, or undefined when neither the socket nor a trusted header gives one. */
export function clientIp(c: Context, options: ClientIpOptions = {}): string | undefined {
  const hops = options.trustProxy === true ? 1 : options.trustProxy === false ? 0 : (options.trustProxy ?? 0);
  if (hops > 0) {
    const forwarded = forwardedClient(c.req.header('x-forwarded-for'), hops);
    if (forwarded !== undefined) return forwarded;
  }
  return socketAddress(c);
}

/**
 * The key of a client for limiting: IPv4 addresses as they are, IPv6 addresses by their /64
 * network, because one subscriber usually holds a whole /64 and could rotate through it.
 */
export function clientKey(address: string | undefined): string {
  if (address === undefined) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (isIP(address) !== 6) return address;
  const groups = ipv6Groups(address);
  return `${groups.slice(0, 4).join(':')}::/64`;
}

function forwardedClient(header: string | undefined, hops: number): string | undefined {
  if (!header) return undefined;
  const entries = header
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const candidate = entries[Math.max(0, entries.length - hops)];
  return candidate !== undefined && isIP(candidate) !== 0 ? candidate : undefined;
}

function socketAddress(c: Context): string | undefined {
  try {
    const address = getConnInfo(c).remote.address;
    return address ? address.replace(/%.*$/, '') : undefined;
  } catch {
    // No Node socket behind this request (app.request in tests, another runtime).
    return undefined;
  }
}

/** The eight 16-bit groups of a valid IPv6 address, lowercase and without leading zeros. */
function ipv6Groups(address: string): string[] {
  let text = address.replace(/%.*$/, '').toLowerCase();
  const embedded = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (embedded) {
    const [a, b, c, d] = embedded.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, embedded.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const middle = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((group) => parseInt(group, 16).toString(16));
}
