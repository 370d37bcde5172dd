/**
 * @module The server-side request forgery guard of outbound destinations: HTTPS only, no
 * credentials in the URL, and no private, loopback, link-local, CGNAT, multicast, unspecified,
 * IPv4-mapped or cloud metadata address, both for literal addresses and after DNS resolution at
 * delivery time. The resolved address is pinned for the connection itself, so a DNS rebind
 * between the check and the connect cannot reach a refused address. An allow-list from server
 * configuration (host names or CIDRs) admits loopback test receivers; metadata stays refused.
 */
import { promises as dnsPromises, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Why a destination was refused. Safe to show to the admin who configured it. */
type DestinationRefusal = 'invalid_url' | 'not_https' | 'credentials_in_url' | 'metadata_address' | 'blocked_host' | 'blocked_address' | 'dns_failed';

/** A refused destination; `reason` is one of {@link DestinationRefusal}. */
export class DestinationRefusedError extends Error {
  override readonly name = 'DestinationRefusedError';
  constructor(
    readonly reason: DestinationRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** A resolver with the shape of `dns.promises.lookup(host, { all: true })` (injectable in tests). */
export type ResolveAll = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

/** The guard's configuration: the server's allow-list and, optionally, the resolver. */
export interface DestinationPolicy {
  /**
   * Host names (exact, case-insensitive) or IP addresses / CIDRs that may be private or loopback,
   * as configuration strings or already parsed.
   */
  allowList?: readonly string[] | DestinationAllowList;
  /** Defaults to `dns.promises.lookup` with `all: true`, in the resolver's own order. */
  resolveAll?: ResolveAll;
}

/** A destination checked at delivery time, with the one address the connection must use. */
export interface PinnedDestination {
  url: URL;
  /** The address every resolved address was checked against the rules; this one is connected to. */
  address: string;
  family: 4 | 6;
  /** A `lookup` for `https.request` / `tls.connect` that always answers the pinned address. */
  lookup: PinnedLookup;
}

/** The `lookup` option of node's socket APIs, answering both single and `all: true` calls. */
type PinnedLookup = (hostname: string, options: { all?: boolean } | number | undefined, callback: (...args: unknown[]) => void) => void;

/** The cloud metadata addresses, refused even when an allow-list entry would cover them. */
const METADATA_ADDRESSES: readonly string[] = [
  '169.254.169.254', // AWS, GCP, Azure, OpenStack instance metadata
  'fd00:ec2::254', // AWS instance metadata over IPv6
  '169.254.170.2', // AWS ECS task metadata
  '100.100.100.200', // Alibaba Cloud metadata
  '168.63.129.16', // Azure wire server (a public address, so named explicitly)
];
/** Metadata service host names: refused without resolving them, allow-list or not. */
const METADATA_HOST_NAMES: readonly string[] = ['metadata.google.internal', 'metadata.goog', 'metadata'];
/** Other names that are never public hosts (refused unless the allow-list names them). */
const BLOCKED_HOST_NAMES: readonly string[] = ['localhost'];
// Whole reserved domains: `.localhost` is loopback by definition, `.internal` is private-use.
const BLOCKED_HOST_SUFFIXES = ['.localhost', '.internal'];

// Everything that is not a public unicast address, by range.
const BLOCKED_RANGES: readonly [string, number, 'ipv4' | 'ipv6'][] = [
  ['0.0.0.0', 8, 'ipv4'], // "this network", unspecified
  ['10.0.0.0', 8, 'ipv4'], // private
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT
  ['127.0.0.0', 8, 'ipv4'], // loopback
  ['169.254.0.0', 16, 'ipv4'], // link-local (metadata lives here)
  ['172.16.0.0', 12, 'ipv4'], // private
  ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments
  ['192.0.2.0', 24, 'ipv4'], // documentation
  ['192.88.99.0', 24, 'ipv4'], // 6to4 relay anycast
  ['192.168.0.0', 16, 'ipv4'], // private
  ['198.18.0.0', 15, 'ipv4'], // benchmarking
  ['198.51.100.0', 24, 'ipv4'], // documentation
  ['203.0.113.0', 24, 'ipv4'], // documentation
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved, broadcast
  ['::', 96, 'ipv6'], // unspecified, loopback, IPv4-compatible
  ['::ffff:0:0', 96, 'ipv6'], // IPv4-mapped
  ['64:ff9b::', 96, 'ipv6'], // NAT64: would reach an IPv4 address we never checked
  ['64:ff9b:1::', 48, 'ipv6'], // local-use NAT64
  ['100::', 64, 'ipv6'], // discard
  ['2001::', 32, 'ipv6'], // Teredo (embeds IPv4)
  ['2001:db8::', 32, 'ipv6'], // documentation
  ['2002::', 16, 'ipv6'], // 6to4 (embeds IPv4)
  ['fc00::', 7, 'ipv6'], // unique local (fd00:ec2::254 lives here)
  ['fe80::', 10, 'ipv6'], // link-local
  ['fec0::', 10, 'ipv6'], // site-local (deprecated)
  ['ff00::', 8, 'ipv6'], // multicast
];

// One list per family: a BlockList matches IPv4 addresses against IPv6 rules through their mapped
// form, so a single list holding ::ffff:0:0/96 would refuse every IPv4 address.
const BLOCKED = { ipv4: new BlockList(), ipv6: new BlockList() };
for (const [network, prefix, type] of BLOCKED_RANGES) BLOCKED[type].addSubnet(network, prefix, type);
const METADATA = new BlockList();
for (const address of METADATA_ADDRESSES) METADATA.addAddress(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');

/** How one address is treated by the rules, before the allow-list. */
export function classifyAddress(address: string): 'public' | 'blocked' | 'metadata' {
  const ip = stripZone(address);
  const family = isIP(ip);
  if (family === 0) return 'blocked';
  const type = family === 6 ? 'ipv6' : 'ipv4';
  // BlockList matches an IPv4 rule against the IPv4-mapped IPv6 form too (::ffff:169.254.169.254).
  if (METADATA.check(ip, type)) return 'metadata';
  return BLOCKED[type].check(ip, type) ? 'blocked' : 'public';
}

/** The allow-list of the server configuration, parsed once. Throws on a malformed entry. */
export class DestinationAllowList {
  private readonly hosts = new Set<string>();
  private readonly networks = { ipv4: new BlockList(), ipv6: new BlockList() };

  constructor(entries: readonly string[] = []) {
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      if (entry === '') continue;
      const [network, prefixText] = entry.split('/');
      const family = isIP(network ?? '');
      if (family === 0) {
        if (prefixText !== undefined) throw new Error(`allow-list entry ${raw} is not a CIDR`);
        this.hosts.add(normalizeHostName(entry));
        continue;
      }
      const max = family === 4 ? 32 : 128;
      const prefix = prefixText === undefined ? max : Number(prefixText);
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) throw new Error(`allow-list entry ${raw} has a bad prefix`);
      const type = family === 4 ? 'ipv4' : 'ipv6';
      this.networks[type].addSubnet(network!, prefix, type);
    }
  }

  /** Whether a host name is listed as such (its addresses are then accepted, metadata excepted). */
  allowsHost(hostname: string): boolean {
    return this.hosts.has(normalizeHostName(hostname));
  }

  /** Whether an address falls inside a listed address or CIDR. */
  allowsAddress(address: string): boolean {
    const ip = stripZone(address);
    const family = isIP(ip);
    if (family === 0) return false;
    const type = family === 6 ? 'ipv6' : 'ipv4';
    return this.networks[type].check(ip, type);
  }
}

/**
 * The creation-time check (no DNS): an absolute `https:` URL without credentials whose host is
 * not a refused name and, when it is a literal address, not a refused address. Throws
 * {@link DestinationRefusedError}; returns the parsed URL.
 */
export function checkDestinationUrl(raw: string, policy: DestinationPolicy = {}): URL {
  return checkUrl(raw, allowListOf(policy));
}

/**
 * The delivery-time check: {@link checkDestinationUrl}, then every address the host resolves to
 * must pass the rules (one bad address refuses the destination, so a mixed answer cannot win).
 * Returns the first address, pinned for the connection. Throws {@link DestinationRefusedError}
 * (`dns_failed` when the name does not resolve, which the delivery treats as unreachable).
 */
export async function resolveDestination(raw: string, policy: DestinationPolicy = {}): Promise<PinnedDestination> {
  const allowList = allowListOf(policy);
  const url = checkUrl(raw, allowList);
  const host = bareHost(url);
  const literal = isIP(host);
  if (literal !== 0) return pin(url, host, literal === 6 ? 6 : 4);

  let answers: readonly { address: string; family: number }[];
  try {
    answers = await (policy.resolveAll ?? defaultResolveAll)(host);
  } catch {
    throw new DestinationRefusedError('dns_failed', 'The destination host name does not resolve');
  }
  if (answers.length === 0) throw new DestinationRefusedError('dns_failed', 'The destination host name does not resolve');
  const hostAllowed = allowList.allowsHost(host);
  for (const answer of answers) checkAddress(answer.address, allowList, hostAllowed);
  const first = answers[0]!;
  return pin(url, stripZone(first.address), first.family === 6 ? 6 : 4);
}

function checkUrl(raw: string, allowList: DestinationAllowList): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DestinationRefusedError('invalid_url', 'The destination is not an absolute URL');
  }
  if (url.protocol !== 'https:') throw new DestinationRefusedError('not_https', 'The destination must use https://');
  if (url.username !== '' || url.password !== '') {
    throw new DestinationRefusedError('credentials_in_url', 'The destination URL must not carry credentials');
  }
  const host = bareHost(url);
  if (isIP(host) !== 0) {
    checkAddress(host, allowList, false);
    return url;
  }
  const name = normalizeHostName(host);
  if (name === '') throw new DestinationRefusedError('invalid_url', 'The destination has no host');
  if (METADATA_HOST_NAMES.includes(name)) throw new DestinationRefusedError('metadata_address', 'The destination is a metadata service');
  const reservedName = BLOCKED_HOST_NAMES.includes(name) || BLOCKED_HOST_SUFFIXES.some((suffix) => name.endsWith(suffix));
  if (reservedName && !allowList.allowsHost(name)) {
    throw new DestinationRefusedError('blocked_host', 'The destination host is not a public host');
  }
  return url;
}

function checkAddress(address: string, allowList: DestinationAllowList, hostAllowed: boolean): void {
  const kind = classifyAddress(address);
  if (kind === 'metadata') throw new DestinationRefusedError('metadata_address', 'The destination is a metadata service');
  if (kind === 'blocked' && !hostAllowed && !allowList.allowsAddress(address)) {
    throw new DestinationRefusedError('blocked_address', 'The destination resolves to a private or reserved address');
  }
}

function pin(url: URL, address: string, family: 4 | 6): PinnedDestination {
  const lookup: PinnedLookup = function pinnedLookup(_hostname, options, callback) {
    const all = typeof options === 'object' && options !== null && options.all === true;
    if (all) callback(null, [{ address, family } satisfies LookupAddress]);
    else callback(null, address, family);
  };
  return { url, address, family, lookup };
}

function allowListOf(policy: DestinationPolicy): DestinationAllowList {
  const list = policy.allowList;
  return list instanceof DestinationAllowList ? list : new DestinationAllowList(list ?? []);
}

async function defaultResolveAll(hostname: string): Promise<readonly LookupAddress[]> {
  return dnsPromises.lookup(hostname, { all: true, verbatim: true });
}

// URL keeps IPv6 literals in brackets; the rules want the bare address.
function bareHost(url: URL): string {
  const host = url.hostname;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function normalizeHostName(host: string): string {
  return host.toLowerCase().replace(/\.+$/, '');
}

function stripZone(address: string): string {
  const percent = address.indexOf('%');
  return percent === -1 ? address : address.slice(0, percent);
}
