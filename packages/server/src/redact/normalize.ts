/**
 * @module Removes invisible format characters (soft hyphen, zero-width space/joiners, word
 * joiner, BOM) that follow a letter or digit, so that "Open\u200bAI" or "c\u00adlaude" cannot
 * slip a name past the rules. Elsewhere they are kept: a zero-width joiner between emoji is
 * part of the emoji.
 */

const INVISIBLE = /[\u00ad\u200b-\u200d\u2060\ufeff]/;

/** A normalizer for one text, fed in order; fragments may split the text anywhere. */
export function createNormalizer(): (fragment: string) => string {
  // Whether the last visible character seen was an ASCII letter or digit.
  let afterWord = false;
  return (fragment) => {
    if (!INVISIBLE.test(fragment)) {
      if (fragment.length > 0) afterWord = isAsciiWord(fragment.charCodeAt(fragment.length - 1));
      return fragment;
    }
    let out = '';
    for (const ch of fragment) {
      if (INVISIBLE.test(ch)) {
        if (!afterWord) out += ch;
        continue;
      }
      afterWord = isAsciiWord(ch.charCodeAt(0));
      out += ch;
    }
    return out;
  };
}

function isAsciiWord(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}
