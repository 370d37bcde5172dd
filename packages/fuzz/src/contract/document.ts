/**
 * @module The bundled OpenAPI document: loading it and following its local `$ref`s by JSON pointer.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: unknown };
export type OpenApiDocument = JsonObject & { openapi?: string; paths?: JsonObject; components?: JsonObject };

/** Reads a bundled document (JSON or YAML) from disk. */
export function loadDocument(file: string): OpenApiDocument {
  const text = readFileSync(file, 'utf8');
  const doc = (file.endsWith('.json') ? JSON.parse(text) : parseYaml(text)) as OpenApiDocument;
  if (!doc || typeof doc !== 'object' || typeof doc.openapi !== 'string') {
    throw new Error(`${file} is not an OpenAPI document (no "openapi" field)`);
  }
  return doc;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Decodes one JSON pointer token (RFC 6901). */
export function unescapePointer(token: string): string {
  return decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~');
}

export function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Value at a local reference such as `#/components/schemas/Run`; throws when it does not exist. */
export function resolvePointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) throw new Error(`only local references are supported, got ${ref}`);
  const path = ref.slice(1);
  if (path === '') return root;
  let node: unknown = root;
  for (const raw of path.split('/').slice(1)) {
    const token = unescapePointer(raw);
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node)) node = node[token];
    else node = undefined;
    if (node === undefined) throw new Error(`unresolvable reference ${ref}`);
  }
  return node;
}

/** Follows `$ref` chains of an OpenAPI object (parameter, response, ...) until a concrete object. */
export function deref<T = JsonObject>(root: unknown, value: unknown): T {
  let node = value;
  const seen = new Set<string>();
  while (isObject(node) && typeof node.$ref === 'string') {
    if (seen.has(node.$ref)) throw new Error(`reference cycle at ${node.$ref}`);
    seen.add(node.$ref);
    node = resolvePointer(root, node.$ref);
  }
  return node as T;
}

/** Value at a JSON pointer inside a plain value (used by link expressions `$response.body#/id`). */
export function valueAtPointer(value: unknown, pointer: string): unknown {
  if (pointer === '' || pointer === '/') return pointer === '' ? value : (value as JsonObject)?.[''];
  let node: unknown = value;
  for (const raw of pointer.replace(/^#/, '').split('/').slice(1)) {
    const token = unescapePointer(raw);
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node)) node = node[token];
    else return undefined;
  }
  return node;
}
