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

/**
 * One value for each alias, made in the spec's order: a table every alias has (a new alias in the
 * contract fails `tsc` here until it is added).
 */
export function byAlias<T>(make: (alias: Alias) => T): Record<Alias, T> {
  return { Prelude: make('Prelude'), Sonata: make('Sonata'), Symphony: make('Symphony'), Concerto: make('Concerto') };
}

/** A stored alias read back; a value the contract does not know means the store is damaged. */
export function toAlias(value: string): Alias {
  if (!isAlias(value)) throw new Error('stored run has an unknown alias');
  return value;
}
