/**
 * @module Model aliases: the only way a caller selects a model. The real model behind an alias
 * lives in server configuration (see src/engine/config.ts) and never in a response.
 */

/** The four aliases, in growing capacity and cost, as the spec lists them. */
export const ALIASES = ['Prelude', 'Sonata', 'Symphony', 'Concerto'] as const;

export type Alias = (typeof ALIASES)[number];

export function isAlias(value: unknown): value is Alias {
  return typeof value === 'string' && (ALIASES as readonly string[]).includes(value);
}
