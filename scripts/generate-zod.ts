/**
 * @module Step 3 of `pnpm generate`: generated/zod.ts, zod 4 validators for every component schema and
 * every request part and success response of every operation, from @hey-api/openapi-ts and its zod plugin.
 *
 * Five gaps of the plugin are closed here, each checked again when the output is imported (see
 * generate-verify.ts):
 * - `additionalProperties: false` becomes `z.strictObject`, so unknown fields are refused (an object resolver);
 * - integer and number parameters of the path, query and headers are coerced from strings with the same
 *   bounds (`z.coerce.number().int().gte(1)...`), because they arrive as text: the generator is given their
 *   schemas marked `x-from-text` and the plugin's number and boolean resolvers write the coercion, after a
 *   check that the text is plain decimal (`Number()` alone reads '0x10', ' 5', '1e1' and '+5');
 * - `minProperties` / `maxProperties` become a `.refine` on the number of fields (the plugin drops them);
 * - a branch of `anyOf`/`oneOf` without its own `type` (Scope's `pattern` branch) would become
 *   `z.unknown()` and accept anything, `*:*` included; the branch gets its parent's `type` first, which
 *   JSON Schema already implies (the parent's `type` applies to every value);
 * - header names are lowercase, because Fetch `Headers` and Hono's `c.req.header()` present them so
 *   (a mixed-case key would never be found, and an optional header would silently pass unchecked): the
 *   generator is given the header parameters under lowercase names, so it writes them so itself.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@hey-api/openapi-ts';
import { type Json, tsHeader, writeGenerated } from './generate-common.ts';

export async function generateZod(doc: Json): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), 'ais-zod-'));
  try {
    const input = join(scratch, 'input.json');
    await writeFile(input, JSON.stringify(markParametersFromText(lowercaseHeaderNames(typeBranches(structuredClone(doc))))));
    const output = join(scratch, 'out');
    await createClient({
      input,
      output: { path: output, entryFile: false, clean: true },
      logs: { level: 'silent', file: false },
      plugins: [
        {
          name: 'zod',
          definitions: true,
          // `format: date-time` is RFC 3339: `Z` or a numeric offset such as `+02:00`; zod's default takes `Z` only.
          dates: { offset: true },
          requests: true,
          responses: true,
          '~resolvers': { object: strictWhenClosed, number: coerceNumberFromText, boolean: boolFromText },
        },
      ],
    } as Parameters<typeof createClient>[0]);
    const files = await readdir(output);
    if (files.length !== 1 || files[0] !== 'zod.gen.ts') {
      throw new Error(`@hey-api/openapi-ts wrote ${files.join(', ') || 'nothing'}, expected zod.gen.ts only`);
    }
    const raw = await readFile(join(output, 'zod.gen.ts'), 'utf8');
    const source = boundPropertyCounts(postProcess(raw), doc);
    await writeGenerated('zod.ts', source);
    return source;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Calls `edit` on every object of a JSON document, depth first, and returns the document. */
function eachObject(doc: Json, edit: (node: Json) => void): Json {
  const visit = (node: Json): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (!node || typeof node !== 'object') return;
    edit(node);
    for (const value of Object.values(node)) visit(value);
  };
  visit(doc);
  return doc;
}

/**
 * Header parameters under lowercase names in the generator's input (HTTP header names ignore case),
 * so the plugin writes lowercase keys itself.
 */
function lowercaseHeaderNames(doc: Json): Json {
  return eachObject(doc, (node) => {
    if (node.in === 'header' && typeof node.name === 'string') node.name = node.name.toLowerCase();
  });
}

/** Gives each untyped inline branch of `anyOf`/`oneOf` the `type` of the schema that holds it. */
function typeBranches(doc: Json): Json {
  return eachObject(doc, (node) => {
    if (node.type !== undefined) {
      for (const keyword of ['anyOf', 'oneOf']) {
        for (const branch of Array.isArray(node[keyword]) ? node[keyword] : []) {
          if (
            branch &&
            typeof branch === 'object' &&
            branch.type === undefined &&
            branch.$ref === undefined &&
            branch.const === undefined &&
            branch.enum === undefined
          ) {
            branch.type = node.type;
          }
        }
      }
    }
  });
}

/**
 * Object resolver of the zod plugin. In the plugin's intermediate form `additionalProperties: false` is an
 * additional-properties schema of type `never`; the plugin itself ignores it when the object has
 * properties and emits a plain (stripping) `z.object`.
 */
function strictWhenClosed(ctx: Json): unknown {
  if (ctx.schema?.additionalProperties?.type !== 'never') return undefined;
  return ctx.$(ctx.symbols.z).attr('strictObject').call(ctx.nodes.shape(ctx));
}

/**
 * `minProperties` / `maxProperties`, which the plugin drops (an empty `PATCH /operator/workspaces/{id}` passed):
 * each component schema with one gets a `.refine` on the number of its fields. A bound anywhere else (an
 * inline schema) fails the generation, so none is dropped silently.
 */
function boundPropertyCounts(source: string, doc: Json): string {
  let out = source;
  let handled = 0;
  for (const [name, schema] of Object.entries<Json>(doc.components?.schemas ?? {})) {
    const { minProperties: min, maxProperties: max } = schema;
    if (min === undefined && max === undefined) continue;
    const start = out.indexOf(`export const z${name} = z.`);
    const end = out.indexOf('\n});\n', start);
    if (start < 0 || end < 0 || out.slice(start + 1, end).includes('\nexport ')) {
      throw new Error(`schema ${name}: minProperties/maxProperties on a schema that is not one object statement`);
    }
    const checks = [
      min === undefined
        ? undefined
        : `.refine((value) => Object.keys(value).length >= ${Number(min)}, { message: 'at least ${Number(min)} field${min === 1 ? '' : 's'}' })`,
      max === undefined
        ? undefined
        : `.refine((value) => Object.keys(value).length <= ${Number(max)}, { message: 'at most ${Number(max)} field${max === 1 ? '' : 's'}' })`,
    ].filter(Boolean);
    out = `${out.slice(0, end)}\n})${checks.join('')};\n${out.slice(end + '\n});\n'.length)}`;
    handled += 1;
  }
  let bounded = 0;
  eachObject(doc, (node) => {
    if (typeof node.type === 'string' && (node.minProperties !== undefined || node.maxProperties !== undefined)) bounded += 1;
  });
  if (bounded !== handled) throw new Error(`${bounded - handled} inline schema(s) with minProperties/maxProperties: move them to components/schemas`);
  return out;
}

function postProcess(raw: string): string {
  const lines = raw.replace(/\r\n/g, '\n').split('\n');
  if (!lines[0]?.startsWith('// This file is auto-generated by @hey-api/openapi-ts')) {
    throw new Error('unexpected first line from @hey-api/openapi-ts; check the header replacement still applies');
  }
  lines[0] = tsHeader('generate-zod.ts', 'generated/openapi.json (@hey-api/openapi-ts zod plugin, post-processed)').trimEnd();
  // The coercion after the decimal check takes a string (see coerceNumberFromText): say so to the types.
  return lines.join('\n').replace(/\n+$/, '\n').replaceAll('.pipe(z.coerce.number()', '.pipe(z.coerce.number<string>()');
}

/** The vendor extension that marks a parameter's schema as read from text (kept by the generator's IR). */
const FROM_TEXT = 'x-from-text';

/**
 * Marks the number, integer and boolean schemas of every path, query and header parameter (inline, its
 * array items included) with {@link FROM_TEXT}, for the resolvers below. A parameter whose schema is a
 * `$ref` to such a schema is refused: the shared component is also a body schema, which must not coerce.
 */
function markParametersFromText(doc: Json): Json {
  return eachObject(doc, (node) => {
    if (!['path', 'query', 'header'].includes(node.in) || typeof node.name !== 'string' || !node.schema) return;
    eachObject(node.schema, (schema) => {
      if (typeof schema.$ref === 'string' && isScalarFromText(resolveRef(doc, schema.$ref))) {
        throw new Error(`parameter ${node.name}: a $ref to a number or boolean schema is not coerced; write the schema inline`);
      }
      if (isScalarFromText(schema)) schema[FROM_TEXT] = true;
    });
  });
}

function isScalarFromText(schema: Json): boolean {
  return ['integer', 'number', 'boolean'].includes(schema?.type);
}

function resolveRef(doc: Json, ref: string): Json {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .reduce((node: Json, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

/**
 * Number resolver of the zod plugin: a marked schema starts from `z.coerce.number()` (`.int()` for an
 * integer) and keeps the plugin's own bounds; others get the plugin's default.
 */
function coerceNumberFromText(ctx: Json): unknown {
  if (ctx.schema?.[FROM_TEXT] !== true) return undefined;
  if (ctx.schema.format !== undefined || ctx.schema.const !== undefined) {
    throw new Error(`a ${ctx.schema.format ?? 'const'} parameter: a numeric form the coercion does not handle`);
  }
  const z = ctx.$(ctx.symbols.z);
  let chain = z.attr('coerce').attr('number').call();
  if (ctx.schema.type === 'integer') chain = chain.attr('int').call();
  ctx.chain.current = chain;
  for (const bound of [ctx.nodes.min, ctx.nodes.max]) {
    const next = bound(ctx);
    if (next) ctx.chain.current = next;
  }
  // Number() reads '0x10', ' 5', '1e1' and '+5' as numbers: the text must be plain decimal first.
  const text = ctx
    .$(ctx.symbols.z)
    .attr('string')
    .call()
    .attr('regex')
    .call(ctx.$.regexp(ctx.schema.type === 'integer' ? DECIMAL_INTEGER : DECIMAL_NUMBER));
  ctx.chain.current = text.attr('pipe').call(ctx.chain.current);
  return ctx.chain.current;
}

/** The text of a number parameter: decimal digits, an optional minus, for a number an optional fraction. */
const DECIMAL_INTEGER = '^-?[0-9]+$';
const DECIMAL_NUMBER = '^-?[0-9]+(\\.[0-9]+)?$';

/** Boolean resolver: z.coerce.boolean() would read "false" as true; stringbool accepts true/false, 1/0, yes/no, on/off. */
function boolFromText(ctx: Json): unknown {
  if (ctx.schema?.[FROM_TEXT] !== true) return undefined;
  return ctx.$(ctx.symbols.z).attr('stringbool').call();
}
