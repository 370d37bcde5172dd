/**
 * @module String formats (`date-time`, `email`, `uri`, `uuid`, ...) as fast-check arbitraries whose values
 * ajv-formats accepts; an unknown format falls back to a plain string.
 */
import fc from 'fast-check';

const MIN_DATE = new Date('1970-01-01T00:00:00.000Z');
const MAX_DATE = new Date('2099-12-31T23:59:59.999Z');
const date = fc.date({ min: MIN_DATE, max: MAX_DATE, noInvalidDate: true });
const base62 = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.split(''));

// fc.webUrl can produce authorities ajv-formats' RFC 3986 check rejects; build plain, valid URLs instead.
const segment = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,7}$/);
const webUrl = () =>
  fc
    .tuple(fc.constantFrom('https', 'http'), fc.domain({ size: 'small' }), fc.array(segment, { maxLength: 3, size: 'small' }))
    .map(([scheme, host, path]) => `${scheme}://${host}${path.length > 0 ? `/${path.join('/')}` : ''}`);

const FORMATS: Record<string, () => fc.Arbitrary<string>> = {
  'date-time': () => date.map((d) => d.toISOString()),
  date: () => date.map((d) => d.toISOString().slice(0, 10)),
  time: () => date.map((d) => `${d.toISOString().slice(11, 19)}Z`),
  duration: () => fc.tuple(fc.nat({ max: 99 }), fc.nat({ max: 23 })).map(([d, h]) => `P${d}DT${h}H`),
  email: () => fc.emailAddress(),
  'idn-email': () => fc.emailAddress(),
  uri: webUrl,
  url: webUrl,
  iri: webUrl,
  'uri-reference': () => fc.oneof(webUrl(), fc.constantFrom('/a', 'b/c', '#x', '?q=1')),
  'iri-reference': webUrl,
  'uri-template': () => fc.constantFrom('/runs/{run_id}', 'https://example.com/{x}'),
  uuid: () => fc.uuid(),
  hostname: () => fc.domain({ size: 'small' }),
  'idn-hostname': () => fc.domain({ size: 'small' }),
  ipv4: () => fc.ipV4(),
  ipv6: () => fc.ipV6(),
  byte: () => fc.base64String({ size: 'small' }),
  'json-pointer': () => fc.array(fc.stringMatching(/^[a-z0-9]{1,6}$/), { maxLength: 3 }).map((p) => p.map((s) => `/${s}`).join('')),
  'relative-json-pointer': () => fc.nat({ max: 9 }).map((n) => `${n}/a`),
  regex: () => fc.constantFrom('^a+$', '[0-9]{2}', '.*'),
  password: () => fc.string({ minLength: 1, size: 'small' }),
  binary: () => fc.string({ size: 'small' }),
  // The service's own identifier shapes (see the team brief) are usually patterns; this covers a `format: base62`.
  base62: () => fc.array(base62, { minLength: 16, maxLength: 32 }).map((c) => c.join('')),
};

export function formatArbitrary(format: string): fc.Arbitrary<string> | undefined {
  return FORMATS[format]?.();
}

/** Strings that break each format (for negative data); every one of them fails ajv-formats. */
export const INVALID_FORMAT_VALUES: Record<string, string[]> = {
  'date-time': ['not-a-date', '2024-13-45T99:99:99Z', '2024-01-01'],
  date: ['2024-02-30', 'yesterday', '20240101'],
  time: ['25:61:00Z', 'noon'],
  email: ['not-an-email', 'a@', '@b.c'],
  uri: ['not a uri', '://missing-scheme'],
  url: ['not a url'],
  uuid: ['not-a-uuid', '1234', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz'],
  hostname: ['-bad-.host-', 'a..b'],
  ipv4: ['999.1.1.1', '1.2.3'],
  ipv6: ['::g', '1:2'],
  byte: ['***'],
  duration: ['P', '1 day'],
};
