/**
 * @module The rule a value broke, in words, from a zod issue of the contract's schemas: "must be one of normal,
 * low", "must be at most 32000", "must hold at least 1 item". Only the contract's own terms are said (its allowed
 * values, bounds, lengths, formats and patterns, all public); never the value sent.
 */
import type { z } from 'zod';

type Issue = z.core.$ZodIssue;

/** What the value must be, or undefined when the issue says nothing a caller could act on. */
export function brokenRule(issue: Issue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return TYPES[issue.expected] ? `must be ${TYPES[issue.expected]}` : undefined;
    case 'invalid_value':
      return valuesRule(issue.values);
    case 'too_small':
      return bound(issue.origin, 'least', issue.minimum, issue.inclusive !== false, issue.exact === true);
    case 'too_big':
      return bound(issue.origin, 'most', issue.maximum, issue.inclusive !== false, issue.exact === true);
    case 'invalid_format':
      if (issue.format === 'regex') return patternRule(issue.pattern);
      return `must be ${FORMATS[issue.format] ?? `a valid ${issue.format}`}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'invalid_union':
      return 'must take one of the forms the contract allows';
    default:
      return undefined;
  }
}

/** Lists of allowed values longer than this are not spelled out (the error's message has 500 characters at most). */
const MAX_VALUES_TEXT = 200;

function valuesRule(values: readonly unknown[]): string {
  if (values.length === 1) return `must be ${show(values[0])}`;
  const list = values.map(show).join(', ');
  return list.length <= MAX_VALUES_TEXT ? `must be one of ${list}` : `must be one of the ${values.length} values the contract lists`;
}

/** Patterns longer than this are not quoted (the contract has them); none of ours is. */
const MAX_PATTERN = 120;

const TYPES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

const FORMATS: Record<string, string> = {
  email: 'an email address',
  url: 'a URL',
  uuid: 'a UUID',
  datetime: 'a date-time (RFC 3339)',
  date: 'a date (YYYY-MM-DD)',
};

/** The contract's pattern as written there (zod gives it as a regex literal, `/^[0-9]{6}$/`). */
function patternRule(pattern: string | undefined): string {
  const source = pattern?.replace(/^\/(.*)\/[a-z]*$/s, '$1');
  return source && source.length <= MAX_PATTERN ? `must match the pattern ${source}` : 'must match the pattern the contract sets';
}

function show(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function bound(origin: string, side: 'least' | 'most', limit: number | bigint, inclusive: boolean, exact: boolean): string | undefined {
  const n = Number(limit);
  switch (origin) {
    case 'string':
      if (exact) return `must be exactly ${n} ${n === 1 ? 'character' : 'characters'}`;
      if (side === 'least' && n === 1) return 'must not be empty';
      return `must be at ${side} ${n} ${n === 1 ? 'character' : 'characters'}`;
    case 'array':
    case 'set':
      if (exact) return `must hold exactly ${n} ${n === 1 ? 'item' : 'items'}`;
      return `must hold at ${side} ${n} ${n === 1 ? 'item' : 'items'}`;
    case 'number':
    case 'int':
    case 'bigint':
      if (inclusive) return `must be at ${side} ${n}`;
      return `must be ${side === 'least' ? 'greater' : 'less'} than ${n}`;
    default:
      return undefined;
  }
}
