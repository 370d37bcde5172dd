/** Whether `value` is one of `values` (a `const` list of names): narrows it to their union. */
export function isOneOf<V extends string>(values: readonly V[], value: unknown): value is V {
  return typeof value === 'string' && values.some((v) => v === value);
}
