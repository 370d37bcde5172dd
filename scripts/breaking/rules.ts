/**
 * @module The rules of `pnpm check:breaking`: what in a new contract (`head`) breaks a client generated from
 * an older one (`base`). `compareContracts(base, head)` returns one `Finding` per break, in the base
 * document's order (operations of `paths`, then `webhooks`; per operation: parameters, request body,
 * responses). Document navigation and `$ref` resolution are in walk.ts.
 *
 * What counts as breaking (and nothing else):
 * - `operation-removed`: a path + method (or a webhook) of base is gone. Path parameter names do not count:
 *   `/runs/{id}` and `/runs/{run_id}` are the same path (the renamed parameter is reported as a new one).
 * - `response-field-removed`: a property of a response body schema is gone (removed or renamed), at any
 *   depth: through `$ref`, object properties, array items, map values, `allOf`, `oneOf`/`anyOf` members
 *   (paired by `$ref`, else by title, else by position) and `$defs` (this contract's event stream payloads).
 * - `response-field-optional`: a response property that was required is no longer required.
 * - `request-field-required`: a request body property became required, or a new required one appeared.
 * - `request-body-required`: a request body became required (or a required one appeared).
 * - `parameter-required`: a required parameter appeared, or an optional one became required.
 * - `enum-narrowed`: a value is no longer allowed by an `enum` (or `const`), in a request, response or
 *   parameter schema. Adding a value is never reported.
 * - `type-changed`: the set of `type`s differs (compared only where both versions declare one), in a
 *   request, response or parameter schema. Widening counts too: `string` to `[string, null]` is reported.
 *
 * Webhook payloads are what the service sends, so their request bodies follow the response rules (their
 * parameters and responses, written or read by the receiver, are not compared).
 * Deliberately not checked: removed response statuses or media types, response headers, removed request
 * fields, new constraints (length, pattern, format), security. Each `(direction, schema pair)` is compared
 * once per operation, which also ends recursive schemas; a shared schema is reported under every operation
 * that uses it, at the first place the operation reaches it.
 */
import type { Json } from '../generate-common.ts';
import { allowedValues, child, isObject, operationsOf, parameterSchema, parametersOf, resolve, same, viewOf, type OperationEntry, type Site } from './walk.ts';

export const RULES = {
  'operation-removed': 'an operation (path + method) or webhook was removed',
  'response-field-removed': 'a response body field was removed or renamed',
  'response-field-optional': 'a required response body field became optional',
  'request-field-required': 'a request body field became required, or a new required one appeared',
  'request-body-required': 'a request body became required',
  'parameter-required': 'a required parameter was added, or a parameter became required',
  'enum-narrowed': 'a value was removed from an enum (request, response or parameter)',
  'type-changed': 'a schema type changed (request, response or parameter)',
} as const;

export type Rule = keyof typeof RULES;

export interface Finding {
  rule: Rule;
  /** The operation as a reader knows it from the base contract: `GET /runs/{run_id}`, `webhook ping (POST)`. */
  operation: string;
  /** Where inside the operation: `response 200 application/json body.data[].status`; empty for a removed operation. */
  where: string;
  message: string;
  /** JSON pointer of what changed: in base for something removed, in head otherwise. */
  pointer: string;
}

/** One line per finding: `GET /runs — response 200 application/json body.total: type changed … (#/…)`. */
export function formatFinding(finding: Finding): string {
  const where = finding.where ? ` — ${finding.where}` : '';
  return `${finding.operation}${where}: ${finding.message} (${finding.pointer})`;
}

type Direction = 'request' | 'response';

interface Context {
  base: Json;
  head: Json;
  operation: string;
  findings: Finding[];
  /** `(direction, base parts, head parts)` already compared within this operation. */
  compared: Set<string>;
}

export function compareContracts(base: Json, head: Json): Finding[] {
  const findings: Finding[] = [];
  const headOperations = new Map(operationsOf(head).map((entry) => [entry.key, entry]));
  for (const entry of operationsOf(base)) {
    const counterpart = headOperations.get(entry.key);
    if (!counterpart) {
      const id = typeof entry.operation.node.operationId === 'string' ? ` (operationId ${entry.operation.node.operationId})` : '';
      const what = entry.kind === 'webhook' ? 'webhook removed' : 'operation removed';
      findings.push({ rule: 'operation-removed', operation: entry.label, where: '', message: `${what}${id}`, pointer: entry.operation.pointer });
      continue;
    }
    const context: Context = { base, head, operation: entry.label, findings, compared: new Set() };
    compareOperation(context, entry, counterpart);
  }
  return findings;
}

function compareOperation(context: Context, base: OperationEntry, head: OperationEntry): void {
  const webhook = base.kind === 'webhook';
  if (!webhook) compareParameters(context, base, head);

  const baseBody = resolve(context.base, child(base.operation, 'requestBody'));
  const headBody = resolve(context.head, child(head.operation, 'requestBody'));
  if (!webhook && headBody.node?.required === true && baseBody.node?.required !== true) {
    context.findings.push({
      rule: 'request-body-required',
      operation: context.operation,
      where: 'request body',
      message: isObject(baseBody.node) ? 'the request body became required' : 'a new required request body',
      pointer: `${headBody.pointer}/required`,
    });
  }
  compareContent(context, webhook ? 'response' : 'request', webhook ? 'payload' : 'request', baseBody, headBody);
  if (webhook) return; // a webhook's responses are written by the receiver, not by the service

  const baseResponses = child(base.operation, 'responses');
  const headResponses = child(head.operation, 'responses');
  for (const status of Object.keys(isObject(baseResponses.node) ? baseResponses.node : {})) {
    if (!isObject(headResponses.node?.[status])) continue;
    const baseResponse = resolve(context.base, child(baseResponses, status));
    const headResponse = resolve(context.head, child(headResponses, status));
    compareContent(context, 'response', `response ${status}`, baseResponse, headResponse);
  }
}

/** The schemas of the media types both versions of a request body or response declare. */
function compareContent(context: Context, direction: Direction, prefix: string, base: Site, head: Site): void {
  const baseContent = child(base, 'content');
  const headContent = child(head, 'content');
  for (const mediaType of Object.keys(isObject(baseContent.node) ? baseContent.node : {})) {
    const baseSchema = child(baseContent, mediaType, 'schema');
    const headSchema = child(headContent, mediaType, 'schema');
    if (baseSchema.node === undefined || headSchema.node === undefined) continue;
    compareSchemas(context, direction, `${prefix} ${mediaType} body`, [baseSchema], [headSchema]);
  }
}

function compareParameters(context: Context, base: OperationEntry, head: OperationEntry): void {
  const baseParameters = parametersOf(context.base, base);
  const headParameters = parametersOf(context.head, head);
  for (const [key, parameter] of headParameters) {
    const before = baseParameters.get(key);
    const where = `parameter ${parameter.in} ${parameter.name}`;
    if (parameter.site.node.required === true && before?.site.node.required !== true) {
      context.findings.push({
        rule: 'parameter-required',
        operation: context.operation,
        where,
        message: before ? 'the parameter became required' : 'a new required parameter',
        pointer: `${parameter.site.pointer}/required`,
      });
    }
    if (!before) continue;
    const baseSchema = parameterSchema(before.site);
    const headSchema = parameterSchema(parameter.site);
    if (baseSchema && headSchema) compareSchemas(context, 'request', where, [baseSchema], [headSchema]);
  }
}

/** Compares two schemas (each a list of sites whose `allOf` makes one schema) and recurses into their children. */
function compareSchemas(context: Context, direction: Direction, where: string, baseSites: Site[], headSites: Site[]): void {
  const base = viewOf(context.base, baseSites);
  const head = viewOf(context.head, headSites);
  const key = [direction, ...base.parts.map((part) => part.pointer), '|', ...head.parts.map((part) => part.pointer)].join(' ');
  if (context.compared.has(key)) return;
  context.compared.add(key);
  const report = (rule: Rule, message: string, pointer: string, at = where) =>
    context.findings.push({ rule, operation: context.operation, where: at, message, pointer });

  // A response that became one of several alternatives (`oneOf`/`anyOf`), one of them the very schema it
  // was: what clients knew still arrives unchanged, and the other alternatives are new answers, like a new
  // enum value of a response. Only that alternative is compared.
  if (direction === 'response' && base.variants.length === 0 && head.variants.length > 0 && head.properties.size === 0) {
    const ref = baseSites.length === 1 && typeof baseSites[0]!.node?.$ref === 'string' ? `ref ${baseSites[0]!.node.$ref}` : undefined;
    const same = head.variants.find((variant) => variant.key === ref);
    if (same) {
      compareSchemas(context, direction, `${where}<${same.label}>`, baseSites, [same.site]);
      return;
    }
  }

  if (base.types && head.types && base.types.values.join() !== head.types.values.join()) {
    report('type-changed', `type changed from ${typeText(base.types.values)} to ${typeText(head.types.values)}`, head.types.pointer);
  }

  const baseValues = allowedValues(base);
  const headValues = allowedValues(head);
  if (baseValues && headValues) {
    const removed = baseValues.filter((value) => !headValues.some((candidate) => same(candidate, value)));
    if (removed.length > 0) {
      // Point at the enum (or const) of head that leaves a removed value out.
      const pointer = head.enums.find((declared) => !declared.values.some((value) => same(value, removed[0])))!.pointer;
      const values = removed.map((value) => JSON.stringify(value)).join(', ');
      report('enum-narrowed', `enum narrowed: ${values} no longer allowed`, pointer);
    }
  }

  if (direction === 'response') {
    const added = [...head.properties.keys()].filter((name) => !base.properties.has(name));
    for (const [name, sites] of base.properties) {
      if (head.properties.has(name)) continue;
      const hint = added.length > 0 ? ` (new beside it: ${added.join(', ')})` : '';
      report('response-field-removed', `response field "${name}" removed or renamed${hint}`, sites[0]!.pointer, where + fieldPath(name));
    }
    for (const name of base.required.keys()) {
      const sites = head.properties.get(name);
      if (sites && !head.required.has(name)) {
        report('response-field-optional', `response field "${name}" is no longer required`, sites[0]!.pointer, where + fieldPath(name));
      }
    }
  } else {
    for (const [name, pointer] of head.required) {
      if (base.required.has(name)) continue;
      const message = base.properties.has(name) ? `request field "${name}" became required` : `new required request field "${name}"`;
      report('request-field-required', message, pointer, where + fieldPath(name));
    }
  }

  for (const [name, sites] of base.properties) {
    const counterpart = head.properties.get(name);
    if (counterpart) compareSchemas(context, direction, `${where}${fieldPath(name)}`, sites, counterpart);
  }
  if (base.items.length > 0 && head.items.length > 0) compareSchemas(context, direction, `${where}[]`, base.items, head.items);
  if (base.additional.length > 0 && head.additional.length > 0) {
    compareSchemas(context, direction, `${where}{*}`, base.additional, head.additional);
  }
  for (const variant of base.variants) {
    const counterpart = head.variants.find((candidate) => candidate.key === variant.key);
    if (counterpart) compareSchemas(context, direction, `${where}<${variant.label}>`, [variant.site], [counterpart.site]);
  }
  for (const [name, sites] of base.defs) {
    const counterpart = head.defs.get(name);
    if (counterpart) compareSchemas(context, direction, `${where}<$defs/${name}>`, sites, counterpart);
  }
}

function typeText(types: string[]): string {
  return types.length === 1 ? types[0]! : `[${types.join(', ')}]`;
}

/** `.name` for plain names, `["odd name"]` otherwise. */
function fieldPath(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}
