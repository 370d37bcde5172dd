/**
 * @module Navigation over one OpenAPI 3.1 document for `pnpm check:breaking` (the rules live in rules.ts).
 *
 * Every node is carried as a `Site`: the node and the JSON pointer where it lives, so that a finding can name
 * the exact place in the contract. `resolve` follows local `$ref`s (the bundle has no other kind);
 * `operationsOf` lists the operations of `paths` and `webhooks`; `parametersOf` merges path-level and
 * operation-level parameters; `viewOf` flattens a schema and its `allOf` members (through `$ref`s) into one
 * view: declared types, enums, properties, required names, array items, map values, `oneOf`/`anyOf` variants
 * and `$defs`. The functions only read the document and never throw on a shape they do not know; they
 * throw on an unresolved, external or circular `$ref`, which the contract's lint would refuse anyway.
 */
import { HTTP_METHODS, type Json } from '../generate-common.ts';

/** A node of a document and the JSON pointer (URI fragment form, `#/...`) where it lives. */
export interface Site {
  node: Json;
  pointer: string;
}

/** One JSON pointer token: `~` and `/` escaped as RFC 6901 says. */
export function escapeToken(key: string | number): string {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The child `keys` of a site (undefined node when absent); the pointer grows by one token per key. */
export function child(site: Site, ...keys: (string | number)[]): Site {
  let { node, pointer } = site;
  for (const key of keys) {
    node = node != null && typeof node === 'object' ? node[key] : undefined;
    pointer += `/${escapeToken(key)}`;
  }
  return { node, pointer };
}

/** The node a pointer `#/a/b` designates in `doc`, or undefined. */
export function atPointer(doc: Json, pointer: string): Json {
  if (pointer === '#') return doc;
  if (!pointer.startsWith('#/')) throw new Error(`not a local reference: ${pointer} (bundle the contract first)`);
  return pointer
    .slice(2)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<Json>((node, key) => (node != null && typeof node === 'object' ? node[key] : undefined), doc);
}

/** Follows `$ref`s from a site until a node that is not a reference; the result carries the target's pointer. */
export function resolve(doc: Json, site: Site): Site {
  let current = site;
  const seen = new Set<string>();
  while (isObject(current.node) && typeof current.node.$ref === 'string') {
    const ref: string = current.node.$ref;
    if (seen.has(ref)) throw new Error(`circular reference ${ref} at ${site.pointer}`);
    seen.add(ref);
    const node = atPointer(doc, ref);
    if (node === undefined) throw new Error(`unresolved reference ${ref} at ${current.pointer}`);
    current = { node, pointer: ref };
  }
  return current;
}

export function isObject(value: unknown): value is Record<string, Json> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** An operation of `paths` (method + path) or of `webhooks` (method + event name). */
export interface OperationEntry {
  /** Matches the same operation in two documents: path parameters' names do not count (`/runs/{}`). */
  key: string;
  /** What a reader sees: `GET /runs/{run_id}`, or `webhook run.completed (POST)`. */
  label: string;
  kind: 'path' | 'webhook';
  operation: Site;
  pathItem: Site;
}

/** The operations of `paths`, then of `webhooks`, in document order. */
export function operationsOf(doc: Json): OperationEntry[] {
  const entries: OperationEntry[] = [];
  for (const kind of ['path', 'webhook'] as const) {
    const section = kind === 'path' ? 'paths' : 'webhooks';
    for (const name of Object.keys(doc?.[section] ?? {})) {
      const pathItem = resolve(doc, child({ node: doc, pointer: '#' }, section, name));
      for (const method of HTTP_METHODS) {
        if (!isObject(pathItem.node?.[method])) continue;
        const upper = method.toUpperCase();
        entries.push({
          key: kind === 'path' ? `${upper} ${name.replace(/\{[^}]*\}/g, '{}')}` : `webhook ${name} ${upper}`,
          label: kind === 'path' ? `${upper} ${name}` : `webhook ${name} (${upper})`,
          kind,
          operation: child(pathItem, method),
          pathItem,
        });
      }
    }
  }
  return entries;
}

/** A parameter, resolved, keyed by `<in> <name>` (header names lower-cased: they are case-insensitive). */
export interface ParameterEntry {
  key: string;
  in: string;
  name: string;
  site: Site;
}

/** The parameters that apply to an operation: those of the path item, overridden by the operation's own. */
export function parametersOf(doc: Json, entry: OperationEntry): Map<string, ParameterEntry> {
  const parameters = new Map<string, ParameterEntry>();
  for (const owner of [entry.pathItem, entry.operation]) {
    const list = child(owner, 'parameters');
    if (!Array.isArray(list.node)) continue;
    list.node.forEach((_, index) => {
      const site = resolve(doc, child(list, index));
      if (!isObject(site.node) || typeof site.node.name !== 'string' || typeof site.node.in !== 'string') return;
      const name = site.node.in === 'header' ? site.node.name.toLowerCase() : site.node.name;
      const key = `${site.node.in} ${name}`;
      parameters.set(key, { key, in: site.node.in, name: site.node.name, site });
    });
  }
  return parameters;
}

/** The schema of a parameter: `schema`, or the schema of its first `content` media type. */
export function parameterSchema(parameter: Site): Site | undefined {
  if (parameter.node?.schema !== undefined) return child(parameter, 'schema');
  const mediaType = Object.keys(parameter.node?.content ?? {})[0];
  return mediaType === undefined ? undefined : child(parameter, 'content', mediaType, 'schema');
}

/** A `oneOf` / `anyOf` member: `key` pairs it with its counterpart in the other document. */
export interface Variant {
  key: string;
  label: string;
  site: Site;
}

/**
 * One schema seen whole: the schema itself and, recursively, its `allOf` members, through `$ref`s. Child
 * schemas (properties, items, ...) stay lists of unresolved sites, since one property may be declared by
 * several `allOf` members; `viewOf` accepts such a list.
 */
export interface SchemaView {
  /** The resolved nodes the view was built from (the cycle guard of the rules uses their pointers). */
  parts: Site[];
  /** The allowed `type`s (intersection of every part that declares one), sorted; undefined when none does. */
  types?: { values: string[]; pointer: string };
  /** Every `enum` (or `const`, a one-value enum) of the parts; the allowed values are their intersection. */
  enums: { values: unknown[]; pointer: string }[];
  properties: Map<string, Site[]>;
  /** Required property names, each with the pointer of the `required` array that declares it. */
  required: Map<string, string>;
  items: Site[];
  /** `additionalProperties` when it is a schema (a map's values). */
  additional: Site[];
  variants: Variant[];
  defs: Map<string, Site[]>;
}

export function viewOf(doc: Json, sites: Site[]): SchemaView {
  const view: SchemaView = { parts: [], enums: [], properties: new Map(), required: new Map(), items: [], additional: [], variants: [], defs: new Map() };
  const seen = new Set<string>();
  const add = (raw: Site) => {
    const site = resolve(doc, raw);
    if (!isObject(site.node) || seen.has(site.pointer)) return;
    seen.add(site.pointer);
    view.parts.push(site);
    const node = site.node;

    if (node.type !== undefined) {
      const declared = (Array.isArray(node.type) ? node.type : [node.type]).map(String).sort();
      view.types = view.types
        ? { values: view.types.values.filter((type) => declared.includes(type)), pointer: view.types.pointer }
        : { values: declared, pointer: `${site.pointer}/type` };
    }
    if (Array.isArray(node.enum)) view.enums.push({ values: node.enum, pointer: `${site.pointer}/enum` });
    if (node.const !== undefined) view.enums.push({ values: [node.const], pointer: `${site.pointer}/const` });
    for (const name of Object.keys(isObject(node.properties) ? node.properties : {})) {
      push(view.properties, name, child(site, 'properties', name));
    }
    if (Array.isArray(node.required)) {
      for (const name of node.required) if (!view.required.has(name)) view.required.set(String(name), `${site.pointer}/required`);
    }
    if (isObject(node.items)) view.items.push(child(site, 'items'));
    if (isObject(node.additionalProperties)) view.additional.push(child(site, 'additionalProperties'));
    for (const name of Object.keys(isObject(node.$defs) ? node.$defs : {})) push(view.defs, name, child(site, '$defs', name));
    for (const keyword of ['oneOf', 'anyOf'] as const) {
      if (!Array.isArray(node[keyword])) continue;
      node[keyword].forEach((member: Json, index: number) => {
        const memberSite = child(site, keyword, index);
        const ref = typeof member?.$ref === 'string' ? (member.$ref as string) : undefined;
        const title = typeof member?.title === 'string' ? (member.title as string) : undefined;
        view.variants.push({
          key: ref ? `ref ${ref}` : title ? `title ${title}` : `${keyword} ${index}`,
          label: ref ? ref.slice(ref.lastIndexOf('/') + 1) : (title ?? `${keyword}[${index}]`),
          site: memberSite,
        });
      });
    }
    if (Array.isArray(node.allOf)) {
      for (let index = 0; index < node.allOf.length; index += 1) add(child(site, 'allOf', index));
    }
  };
  for (const site of sites) add(site);
  return view;
}

/** The values every enum of a view allows (their intersection), or undefined when the view has no enum. */
export function allowedValues(view: SchemaView): unknown[] | undefined {
  if (view.enums.length === 0) return undefined;
  const [first, ...rest] = view.enums;
  return first!.values.filter((value) => rest.every((other) => other.values.some((candidate) => same(candidate, value))));
}

/** Deep equality of JSON values (enum members may be objects). */
export function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function push(map: Map<string, Site[]>, key: string, site: Site): void {
  const list = map.get(key);
  if (list) list.push(site);
  else map.set(key, [site]);
}
