/**
 * @module Text the store can keep, nested as deep as the server can walk. A JSON body may spell a
 * lone UTF-16 surrogate (`"\ud800"`) or a NUL (`"\u0000"`); neither is text that PostgreSQL stores
 * (jsonb refuses the first, text and jsonb the second), so such a body is refused at the door with
 * a 400 instead of failing a write later. So is a body nested deeper than {@link MAX_JSON_DEPTH}:
 * what renders, redacts or logs a value (JSON.stringify, the template's filters) recurses, and
 * 5,000 nested arrays overflowed the stack (a 500 that the sender of an inbound event retried forever).
 */

type TextFault = 'lone_surrogate' | 'nul' | 'too_deep';

/**
 * The most levels of arrays and objects a JSON body may nest (`[[1]]` is two). Far above any real
 * payload, far below what the recursive code that later sees the value can take.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The first fault in a parsed JSON value: nesting past {@link MAX_JSON_DEPTH}, or a fault in any
 * string, keys included; null when there is none. NUL is a fault only when `nul` is set (API fields
 * that refuse it say so in their own pattern). Iterative, so a deeply nested body cannot overflow
 * the stack.
 */
export function findTextFault(value: unknown, options: { nul: boolean }): TextFault | null {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const { value: current, depth } = pending.pop()!;
    if (typeof current === 'string') {
      const fault = stringFault(current, options.nul);
      if (fault) return fault;
    } else if (Array.isArray(current)) {
      if (depth + 1 > MAX_JSON_DEPTH) return 'too_deep';
      for (const item of current) pending.push({ value: item, depth: depth + 1 });
    } else if (current !== null && typeof current === 'object') {
      if (depth + 1 > MAX_JSON_DEPTH) return 'too_deep';
      for (const [key, item] of Object.entries(current)) {
        const fault = stringFault(key, options.nul);
        if (fault) return fault;
        pending.push({ value: item, depth: depth + 1 });
      }
    }
  }
  return null;
}

function stringFault(text: string, nul: boolean): TextFault | null {
  if (!text.isWellFormed()) return 'lone_surrogate';
  if (nul && text.includes('\u0000')) return 'nul';
  return null;
}
