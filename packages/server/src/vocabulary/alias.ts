/**
 * @module Model aliases: the only way a caller selects a model. The real model behind an alias
 * lives in server configuration (see src/engine/config.ts) and never in a response.
 */
import { zModelAlias, type Schema } from '../contract.ts';

/** The four aliases, in growing capacity and cost, as the spec lists them. */
export const ALIASES = zModelAlias.options;

export type Alias = Schema<'ModelAlias'>;

export function isAlias(value: unknown): value is Alias {
  return typeof value === 'string' && (ALIASES as readonly string[]).includes(value);
}

/** A stored alias read back; a value the contract does not know means the store is damaged. */
export function toAlias(value: string): Alias {
  if (!isAlias(value)) throw new Error('stored run has an unknown alias');
  return value;
}
