import { describe, expect, it } from 'vitest';
import { checkDestinationUrl, classifyAddress, DestinationAllowList, DestinationRefusedError, resolveDestination, type ResolveAll } from './ssrf-guard.ts';

function refusal(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof DestinationRefusedError) return error.reason;
    throw error;
  }
  return undefined;
}

async function asyncRefusal(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DestinationRefusedError) return error.reason;
    throw error;
  }
  return undefined;
}

/** A resolver answering from a fixed table, counting calls (no real DNS in these tests). */
function table(entries: Record<string, string[]>): ResolveAll & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const answer = entries[hostname];
    if (!answer) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

describe('classifyAddress', () => {
  const cases: [string, 'public' | 'blocked' | 'metadata'][] = [
    ['93.184.215.14', 'public'],
    ['8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['10.1.2.3', 'blocked'],
    ['172.16.0.1', 'blocked'],
    ['172.31.255.255', 'blocked'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'blocked'],
    ['127.0.0.1', 'blocked'],
    ['127.255.255.254', 'blocked'],
    ['169.254.1.1', 'blocked'],
    ['100.64.0.1', 'blocked'],
    ['100.127.255.255', 'blocked'],
    ['100.128.0.1', 'public'],
    ['0.0.0.0', 'blocked'],
    ['224.0.0.1', 'blocked'],
    ['239.255.255.250', 'blocked'],
    ['255.255.255.255', 'blocked'],
    ['::', 'blocked'],
    ['::1', 'blocked'],
    ['fe80::1', 'blocked'],
    ['fe80::1%eth0', 'blocked'],
    ['fc00::1', 'blocked'],
    ['fd12:3456::1', 'blocked'],
    ['ff02::1', 'blocked'],
    ['::ffff:127.0.0.1', 'blocked'],
    ['::ffff:8.8.8.8', 'blocked'],
    ['64:ff9b::a00:1', 'blocked'],
    ['2002:a00:1::1', 'blocked'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['not-an-ip', 'blocked'],
  ];
  it.each(cases)('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });
});

describe('checkDestinationUrl (creation time, no DNS)', () => {
  const refused: [string, string][] = [
    ['http://hooks.example.com/x', 'not_https'],
    ['ftp://hooks.example.com/x', 'not_https'],
    ['hooks.example.com/x', 'invalid_url'],
    ['https://user:pass@hooks.example.com/x', 'credentials_in_url'],
    ['https://user@hooks.example.com/x', 'credentials_in_url'],
    ['https://127.0.0.1/x', 'blocked_address'],
    ['https://2130706433/x', 'blocked_address'], // 127.0.0.1 in decimal
    ['https://0x7f.1/x', 'blocked_address'],
    ['https://10.0.0.5:8443/x', 'blocked_address'],
    ['https://[::1]/x', 'blocked_address'],
    ['https://[::ffff:127.0.0.1]/x', 'blocked_address'],
    ['https://[::ffff:7f00:1]/x', 'blocked_address'],
    ['https://[fe80::1]/x', 'blocked_address'],
    ['https://100.64.1.1/x', 'blocked_address'],
    ['https://224.0.0.1/x', 'blocked_address'],
    ['https://0.0.0.0/x', 'blocked_address'],
    ['https://169.254.169.254/latest/meta-data/', 'metadata_address'],
    ['https://[fd00:ec2::254]/x', 'metadata_address'],
    ['https://metadata.google.internal/computeMetadata/v1/', 'metadata_address'],
    ['https://METADATA.GOOGLE.INTERNAL./x', 'metadata_address'],
    ['https://localhost/x', 'blocked_host'],
    ['https://api.localhost/x', 'blocked_host'],
    ['https://db.corp.internal/x', 'blocked_host'],
  ];
  it.each(refused)('refuses %s (%s)', (url, reason) => {
    expect(refusal(() => checkDestinationUrl(url))).toBe(reason);
  });

  it('accepts a public https URL', () => {
    expect(checkDestinationUrl('https://hooks.example.com:8443/in?x=1').href).toBe('https://hooks.example.com:8443/in?x=1');
    expect(checkDestinationUrl('https://93.184.215.14/x').hostname).toBe('93.184.215.14');
  });

  it('lets the allow-list admit loopback, by CIDR or by host name, but never http or metadata', () => {
    const policy = { allowList: ['127.0.0.0/8', '::1', 'localhost', '169.254.0.0/16'] };
    expect(checkDestinationUrl('https://127.0.0.1:9443/x', policy).port).toBe('9443');
    expect(checkDestinationUrl('https://[::1]/x', policy).hostname).toBe('[::1]');
    expect(checkDestinationUrl('https://localhost/x', policy).hostname).toBe('localhost');
    expect(refusal(() => checkDestinationUrl('http://127.0.0.1/x', policy))).toBe('not_https');
    expect(refusal(() => checkDestinationUrl('https://169.254.169.254/x', policy))).toBe('metadata_address');
    expect(refusal(() => checkDestinationUrl('https://10.0.0.1/x', policy))).toBe('blocked_address');
  });

  it('refuses a malformed allow-list entry at configuration time', () => {
    expect(() => new DestinationAllowList(['127.0.0.1/33'])).toThrow();
    expect(() => new DestinationAllowList(['example.com/8'])).toThrow();
  });
});

describe('resolveDestination (delivery time)', () => {
  it('resolves, checks every address and pins the first', async () => {
    const resolveAll = table({ 'hooks.example.com': ['93.184.215.14', '2606:4700:4700::1111'] });
    const pinned = await resolveDestination('https://hooks.example.com/in', { resolveAll });
    expect([pinned.address, pinned.family]).toEqual(['93.184.215.14', 4]);
    expect(resolveAll.calls).toEqual(['hooks.example.com']);
  });

  it('refuses a name that resolves to a private address (DNS rebinding to the inside)', async () => {
    const resolveAll = table({ 'evil.example.com': ['10.0.0.7'] });
    expect(await asyncRefusal(resolveDestination('https://evil.example.com/', { resolveAll }))).toBe('blocked_address');
  });

  it('refuses when any one of the answers is bad, whatever its position', async () => {
    const resolveAll = table({ 'mixed.example.com': ['93.184.215.14', '127.0.0.1'] });
    expect(await asyncRefusal(resolveDestination('https://mixed.example.com/', { resolveAll }))).toBe('blocked_address');
  });

  it('refuses a name that resolves to a metadata address, even with the range allow-listed', async () => {
    const resolveAll = table({ 'meta.example.com': ['169.254.169.254'] });
    const policy = { resolveAll, allowList: ['169.254.0.0/16', 'meta.example.com'] };
    expect(await asyncRefusal(resolveDestination('https://meta.example.com/', policy))).toBe('metadata_address');
  });

  it('refuses IPv4-mapped IPv6 answers', async () => {
    const resolveAll = table({ 'mapped.example.com': ['::ffff:10.0.0.1'] });
    expect(await asyncRefusal(resolveDestination('https://mapped.example.com/', { resolveAll }))).toBe('blocked_address');
  });

  it('reports a name that does not resolve', async () => {
    expect(await asyncRefusal(resolveDestination('https://nowhere.example.com/', { resolveAll: table({}) }))).toBe('dns_failed');
    const empty = table({ 'empty.example.com': [] });
    expect(await asyncRefusal(resolveDestination('https://empty.example.com/', { resolveAll: empty }))).toBe('dns_failed');
  });

  it('admits an allow-listed test receiver by CIDR or by host name', async () => {
    const resolveAll = table({ 'receiver.test': ['127.0.0.1'] });
    expect((await resolveDestination('https://receiver.test:9443/', { resolveAll, allowList: ['127.0.0.1/32'] })).address).toBe('127.0.0.1');
    expect((await resolveDestination('https://receiver.test:9443/', { resolveAll, allowList: ['receiver.test'] })).address).toBe('127.0.0.1');
    expect(await asyncRefusal(resolveDestination('https://receiver.test:9443/', { resolveAll }))).toBe('blocked_address');
  });

  it('does not resolve a literal address, and still checks it', async () => {
    const resolveAll = table({});
    expect(await asyncRefusal(resolveDestination('https://192.168.0.10/', { resolveAll }))).toBe('blocked_address');
    expect((await resolveDestination('https://[::1]:9443/', { resolveAll, allowList: ['::1/128'] })).family).toBe(6);
    expect(resolveAll.calls).toEqual([]);
  });

  it('answers the pinned address to any later lookup, single or all', async () => {
    const resolveAll = table({ 'hooks.example.com': ['93.184.215.14'] });
    const { lookup } = await resolveDestination('https://hooks.example.com/', { resolveAll });
    const single = await new Promise<unknown[]>((resolve) => lookup('hooks.example.com', {}, (...args) => resolve(args)));
    expect(single).toEqual([null, '93.184.215.14', 4]);
    const all = await new Promise<unknown[]>((resolve) => lookup('anything.else', { all: true }, (...args) => resolve(args)));
    expect(all).toEqual([null, [{ address: '93.184.215.14', family: 4 }]]);
  });
});
