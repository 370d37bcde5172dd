/**
 * @module Case-insensitive header reading over both shapes the webhook code meets: a fetch
 * `Headers` (what Hono hands a route) and a plain record (node's IncomingHttpHeaders, tests).
 */

/** Request headers as a fetch `Headers` object or a plain record (any key case). */
export type HeaderBag = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * The value of one header, or undefined when absent. Repeated headers are joined with ", "
 * exactly as fetch does, so a duplicated signature header never passes a strict format check.
 */
export function readHeader(headers: HeaderBag, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    return typeof value === 'string' ? value : value.join(', ');
  }
  return undefined;
}
