/**
 * @module Text the store can keep. A JSON body may spell a lone UTF-16 surrogate (`"\ud800"`) or a
 * NUL (`"\u0000"`); neither is text that PostgreSQL stores (jsonb refuses the first, text and jsonb
 * the second), so such a body is refused at the door with a 400 instead of failing a write later.
 */

export type TextFault = 'lone_surrogate' | 'nul';

/**
 * The first fault in any string of a parsed JSON value, keys included; null when there is none.
 * NUL is a fault only when `nul` is set (API fields that refuse it say so in their own pattern).
 * Iterative, so a deeply nested body cannot overflow the stack.
 */
export function findTextFault(value: unknown, options: { nul: boolean }): TextFault | null {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current === 'string') {
      const fault = stringFault(current, options.nul);
      if (fault) return fault;
    } else if (Array.isArray(current)) {
      for (const item of current) pending.push(item);
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        const fault = stringFault(key, options.nul);
        if (fault) return fault;
        pending.push(item);
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
