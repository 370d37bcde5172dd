/**
 * @module Case generation shared by the phases: valid cases from the operation's schemas (checked with Ajv after
 * serialization), and negative cases made by mutating one part of a valid case.
 */
import fc from 'fast-check';
import type { Body, Case, Phase } from '../case.ts';
import type { OpenApiDocument } from '../contract/document.ts';
import { jsonMediaType, type Operation, type Parameter } from '../contract/operations.ts';
import { mutate, NON_JSON_BODIES } from '../negative/mutate.ts';
import { Rng } from '../random.ts';
import { schemaArbitrary } from '../schema/arbitrary.ts';
import { AMBIGUOUS, deserializeParameter, serializeParameter } from '../schema/serialize.ts';
import type { Validator } from '../schema/validator.ts';

export interface Generator {
  doc: OpenApiDocument;
  validator: Validator;
  /** Known-good values by parameter name, or by `operationId.name` for one operation only; used in half of the cases. */
  parameters: Record<string, unknown>;
}

/** Headers a client library owns; OpenAPI says parameters with these names are ignored. */
const IGNORED_HEADERS = new Set(['authorization', 'accept', 'content-type']);

export function generatedParameters(op: Operation): Parameter[] {
  return op.parameters.filter((p) => !(p.in === 'header' && IGNORED_HEADERS.has(p.name.toLowerCase())));
}

/** The request body media type the fuzzer sends: JSON when offered. */
export function bodyMedia(op: Operation): { type: string; schema: unknown; examples: unknown[] } | undefined {
  if (!op.requestBody) return undefined;
  const content = op.requestBody.content;
  const type = jsonMediaType(content) ?? Object.keys(content)[0];
  if (!type) return undefined;
  const media = content[type]!;
  return { type: type === '*/*' ? 'application/json' : type, schema: media.schema ?? {}, examples: media.examples };
}

const arbCache = new WeakMap<Operation, fc.Arbitrary<Omit<Case, 'operation' | 'phase' | 'kind' | 'description'>>>();

function caseArbitrary(op: Operation, g: Generator) {
  let arb = arbCache.get(op);
  if (arb) return arb;
  const parts: Record<Parameter['in'], Record<string, fc.Arbitrary<unknown>>> = { path: {}, query: {}, header: {}, cookie: {} };
  for (const p of generatedParameters(op)) {
    const a = schemaArbitrary(p.schema, { root: g.doc, location: p.in });
    parts[p.in][p.name] = p.required ? a : fc.option(a, { nil: undefined, freq: 2 });
  }
  const media = bodyMedia(op);
  let body: fc.Arbitrary<Body | undefined> = fc.constant(undefined);
  if (media) {
    const value = schemaArbitrary(media.schema, { root: g.doc, location: 'body' }).map((v): Body => ({ mediaType: media.type, value: v }));
    body = op.requestBody!.required ? value : fc.option(value, { nil: undefined, freq: 4 });
  }
  arb = fc.record({
    path: fc.record(parts.path),
    query: fc.record(parts.query),
    headers: fc.record(parts.header),
    cookies: fc.record(parts.cookie),
    body,
  });
  arbCache.set(op, arb);
  return arb;
}

/** Up to `n` valid cases (fewer when generation misses; Ajv has the last word). Deterministic for a seed. */
export function positiveCases(op: Operation, n: number, seed: number, g: Generator, phase: Phase = 'fuzzing', knownRate = 0.5): Case[] {
  if (n <= 0) return [];
  const rng = new Rng(seed);
  const values = fc.sample(caseArbitrary(op, g), { numRuns: n, seed });
  const out: Case[] = [];
  for (const v of values) {
    const c: Case = { operation: op, phase, kind: 'positive', description: 'valid data', ...v };
    useKnownValues(c, g, rng, knownRate);
    if (isValidCase(c, g)) out.push(c);
  }
  return out;
}

/** Puts known-good parameter values (from the setup hook) into a share (`rate`) of the cases. */
function useKnownValues(c: Case, g: Generator, rng: Rng, rate: number): void {
  for (const p of generatedParameters(c.operation)) {
    // `operationId.name` scopes a value to one operation (a webhook slug for ingestion, not for its revocation).
    const value = g.parameters[`${c.operation.id}.${p.name}`] ?? g.parameters[p.name];
    if (value === undefined || !rng.chance(rate)) continue;
    bagOf(c, p.in)[p.name] = value;
  }
}

export function bagOf(c: Case, where: Parameter['in']): Record<string, unknown> {
  return where === 'path' ? c.path : where === 'query' ? c.query : where === 'header' ? c.headers : c.cookies;
}

/** A parameter value as the server will read it still satisfies the parameter (presence rules included). */
export function parameterValid(p: Parameter, value: unknown, g: Generator): boolean {
  if (value === undefined) return !p.required;
  const serialized = serializeParameter(p, value);
  const read = deserializeParameter(p, serialized, g.doc);
  if (read === AMBIGUOUS) return true;
  if (read === undefined) return !p.required;
  // An empty path segment routes elsewhere; it is neither valid nor a useful invalid case.
  if (serialized.in === 'path' && (serialized.text === '' || serialized.text === '.' || serialized.text === '..')) return true;
  return g.validator.isValid(p.schema, read);
}

export function bodyValid(schema: unknown, value: unknown, g: Generator): boolean {
  if (value === undefined) return false;
  const text = JSON.stringify(value);
  return text !== undefined && g.validator.isValid(schema, JSON.parse(text));
}

export function isValidCase(c: Case, g: Generator): boolean {
  for (const p of generatedParameters(c.operation)) if (!parameterValid(p, bagOf(c, p.in)[p.name], g)) return false;
  const media = bodyMedia(c.operation);
  if (c.body && 'raw' in c.body) return false; // bytes sent as they are: not JSON, never valid
  if (media && c.body && 'value' in c.body && !bodyValid(media.schema, c.body.value, g)) return false;
  if (media && !c.body && c.operation.requestBody?.required) return false;
  return true;
}

/** A negative case from a valid one: one parameter or the body mutated until Ajv rejects it. */
export function negativeCase(base: Case, rng: Rng, g: Generator): Case | undefined {
  const op = base.operation;
  const media = bodyMedia(op);
  const targets: ('body' | 'raw' | Parameter)[] = [...generatedParameters(op)];
  if (media && base.body && 'value' in base.body) targets.push('body', 'body', 'body');
  if (media && rng.chance(0.08)) targets.push('raw');
  while (targets.length > 0) {
    const i = rng.int(0, targets.length - 1);
    const t = targets[i]!;
    targets.splice(i, 1);
    if (t === 'raw') {
      return { ...base, kind: 'negative', description: 'body is not JSON', body: { mediaType: media!.type, raw: rng.pick(NON_JSON_BODIES) } };
    }
    if (t === 'body') {
      const value = (base.body as { value: unknown }).value;
      const m = mutate(media!.schema, value, { root: g.doc, rng, stillValid: (v) => bodyValid(media!.schema, v, g) });
      if (m) return { ...base, kind: 'negative', description: `body${m.description}`, body: { mediaType: media!.type, value: m.value } };
      continue;
    }
    const bag = bagOf(base, t.in);
    const current = bag[t.name] ?? fc.sample(schemaArbitrary(t.schema, { root: g.doc, location: t.in }), { numRuns: 1, seed: rng.seed() })[0];
    const m = mutate(t.schema, current, { root: g.doc, rng, location: t.in, stillValid: (v) => parameterValid(t, v, g) });
    if (!m) continue;
    const c: Case = {
      ...base,
      kind: 'negative',
      description: `${t.in} parameter ${t.name}${m.description === '/: ' ? '' : ` ${m.description}`}`,
      path: { ...base.path },
      query: { ...base.query },
      headers: { ...base.headers },
      cookies: { ...base.cookies },
      pinned: [t.name],
    };
    bagOf(c, t.in)[t.name] = m.value;
    return c;
  }
  return undefined;
}
