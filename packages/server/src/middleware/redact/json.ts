/**
 * @module A JSON body serialised with its strings redacted on the way: one `JSON.stringify` whose
 * replacer redacts each string value, with JSON's own semantics (`toJSON`, so a `Date` becomes its
 * ISO text first; `undefined` and functions left out), and no copy of the value. Object keys are kept.
 * Exact values the route asked to show (`keep`) and the customer's own fields (`tree`, the contract's
 * `x-customer-data`) are left as they are.
 */
import type { Redactor } from '../../redact/index.ts';

/** Exact string values to leave as they are: a set, or what the middleware composes (the request's own id too). */
export interface Kept {
  has(value: string): boolean;
}

/** The customer-data paths of a body as a tree: a leaf (`true`) is left as it is; `*` is every item of an array. */
export type KeepTree = true | { readonly [key: string]: KeepTree };

export function redactedJson(redactor: Redactor, value: unknown, keep: Kept | undefined, tree: KeepTree | undefined): string {
  const text = (s: string) => (keep?.has(s) ? s : redactor.text(s));
  if (tree === undefined) {
    return JSON.stringify(value, (_key, item: unknown) => (typeof item === 'string' ? text(item) : item));
  }
  // The tree node of each object or array met so far; JSON.stringify walks depth first, so a holder's
  // node is set before its members are visited (a value met twice is set again before its members).
  const nodes = new Map<object, KeepTree | undefined>();
  let root = true;
  return JSON.stringify(value, function replace(this: unknown, key: string, item: unknown) {
    let node: KeepTree | undefined;
    if (root) {
      root = false;
      node = tree;
    } else {
      node = childOf(nodes.get(this as object), Array.isArray(this), key);
    }
    if (typeof item === 'string') return node === true ? item : text(item);
    if (item !== null && typeof item === 'object') nodes.set(item, node);
    return item;
  });
}

/** The node of a member: under a leaf (a customer field that is not text) everything is redacted. */
function childOf(parent: KeepTree | undefined, inArray: boolean, key: string): KeepTree | undefined {
  if (parent === undefined || parent === true) return undefined;
  if (inArray) return parent['*'];
  return Object.hasOwn(parent, key) ? parent[key] : undefined;
}
