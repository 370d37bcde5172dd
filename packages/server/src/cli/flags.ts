/**
 * @module Command-line flags checked by the contract's own schemas: a command builds the request
 * body the HTTP route would receive from its flags, and the generated zod schema of that body
 * decides, exactly as the route does. A refusal names the flag, never a copy of the contract's rule.
 */
import type { ZodType } from 'zod';
import { UsageError } from './usage.ts';

/**
 * Parses `input` (fields named as in the contract) with `schema`. `flagOf` maps each field to its
 * flag for the message; `help` is appended to it.
 */
export function bodyFromFlags<T>(schema: ZodType<T>, input: Record<string, unknown>, flagOf: Record<string, string>, help: string): T {
  const present = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
  const result = schema.safeParse(present);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = String(issue.path[0] ?? '');
  const flag = flagOf[field] ?? field;
  const allowed = 'values' in issue && Array.isArray(issue.values) ? ` must be one of ${issue.values.join(', ')}` : ' is not valid';
  const what = issue.code === 'invalid_type' && present[field] === undefined ? ' is required' : allowed;
  throw new UsageError(`${flag}${what}.\n\n${help}`);
}

/** A whole-number flag as a number (or the text itself, which the schema then refuses). */
export function wholeNumber(value: string | boolean | undefined): number | string | undefined {
  return typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : typeof value === 'string' ? value : undefined;
}
