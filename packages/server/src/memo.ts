/**
 * @module A small memo keyed by text, bounded in entries and in the characters of its keys, for pure work
 * that the same request repeats on the same text (token counts, the router's scores): the least recently
 * used entries go first. A text longer than a quarter of the character budget is never kept.
 */

export interface TextMemo<V> {
  /** The value for `text`, computed by `compute` unless kept from an earlier call. */
  get(text: string, compute: (text: string) => V): V;
  /** The kept value, if any (for work that is computed elsewhere, such as with pauses). */
  peek(text: string): V | undefined;
  /** Keeps `value` for `text` (unless the text is too long to keep). */
  set(text: string, value: V): void;
  /** Entries kept now (tests). */
  readonly size: number;
  /** Characters of the kept texts now (tests). */
  readonly chars: number;
}

export interface TextMemoOptions {
  maxEntries: number;
  maxChars: number;
}

export function createTextMemo<V>(options: TextMemoOptions): TextMemo<V> {
  const entries = new Map<string, V>();
  let chars = 0;
  const longest = Math.floor(options.maxChars / 4);

  function set(text: string, value: V): void {
    if (text.length > longest) return;
    if (entries.has(text)) entries.delete(text);
    else chars += text.length;
    entries.set(text, value);
    while (entries.size > options.maxEntries || chars > options.maxChars) {
      const oldest = entries.keys().next().value as string;
      entries.delete(oldest);
      chars -= oldest.length;
    }
  }

  function peek(text: string): V | undefined {
    const value = entries.get(text);
    if (value === undefined) return undefined;
    // Most recently used last: the oldest is the first key.
    entries.delete(text);
    entries.set(text, value);
    return value;
  }

  return {
    get(text, compute) {
      const kept = peek(text);
      if (kept !== undefined) return kept;
      const value = compute(text);
      set(text, value);
      return value;
    },
    peek,
    set,
    get size() {
      return entries.size;
    },
    get chars() {
      return chars;
    },
  };
}
