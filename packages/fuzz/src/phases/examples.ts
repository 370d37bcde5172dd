/**
 * @module The examples phase: every request example of the contract (body examples, parameter examples and
 * schema-level `examples`), with the parts an example does not give filled from a generated valid case.
 */
import type { Case } from '../case.ts';
import { isObject } from '../contract/document.ts';
import type { Operation } from '../contract/operations.ts';
import { expandRef } from '../schema/arbitrary.ts';
import { bagOf, bodyMedia, generatedParameters, isValidCase, type Generator } from './generate.ts';

export interface ExampleCases {
  cases: Case[];
  /** Examples that do not satisfy their own schema (a contract defect; not sent as positive data). */
  invalid: string[];
}

export function exampleCases(op: Operation, base: Case | undefined, g: Generator): ExampleCases {
  const params = generatedParameters(op);
  const paramExamples = params.map((p) => ({ p, values: [...p.examples, ...schemaExamples(p.schema, g)] }));
  const media = bodyMedia(op);
  const bodyExamples = media ? [...media.examples, ...schemaExamples(media.schema, g)] : [];
  const count = Math.max(bodyExamples.length, ...paramExamples.map((e) => e.values.length), 0);
  const cases: Case[] = [];
  const invalid: string[] = [];
  if (count === 0 || !base) return { cases, invalid };
  for (let i = 0; i < count; i++) {
    const c: Case = {
      ...base,
      phase: 'examples',
      kind: 'positive',
      description: `example #${i + 1}`,
      path: { ...base.path },
      query: { ...base.query },
      headers: { ...base.headers },
      cookies: { ...base.cookies },
    };
    // Cycle through each part's examples so every one of them is sent at least once.
    for (const { p, values } of paramExamples) if (values.length > 0) bagOf(c, p.in)[p.name] = values[i % values.length];
    if (media && bodyExamples.length > 0) c.body = { mediaType: media.type, value: bodyExamples[i % bodyExamples.length] };
    if (isValidCase(c, g)) cases.push(c);
    else invalid.push(`${op.label}: example #${i + 1} does not satisfy its schema`);
  }
  return { cases, invalid };
}

/** `examples` (2020-12) and `example` (OpenAPI) written on the schema itself. */
function schemaExamples(schema: unknown, g: Generator): unknown[] {
  if (!isObject(schema)) return [];
  const s = expandRef(schema, { root: g.doc });
  const out: unknown[] = [];
  if (Array.isArray(s.examples)) out.push(...s.examples);
  if (s.example !== undefined) out.push(s.example);
  return out;
}
