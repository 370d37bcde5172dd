/**
 * @module Step 3 of `pnpm generate`: generated/zod.ts, zod 4 validators for every component schema and
 * every request part and success response of every operation, from @hey-api/openapi-ts and its zod plugin.
 *
 * Four gaps of the plugin are closed here, each checked again when the output is imported (see
 * generate-verify.ts):
 * - `additionalProperties: false` becomes `z.strictObject`, so unknown fields are refused (an object resolver);
 * - integer and number parameters of the path, query and headers are coerced from strings with the same
 *   bounds (`z.coerce.number().int().gte(1)...`), because they arrive as text;
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
import { type Json, operationsOf, pascal, tsHeader, writeGenerated } from './generate-common.ts';

export async function generateZod(doc: Json): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), 'ais-zod-'));
  try {
    const input = join(scratch, 'input.json');
    await writeFile(input, JSON.stringify(lowercaseHeaderNames(typeBranches(structuredClone(doc)))));
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
          '~resolvers': { object: strictWhenClosed },
        },
      ],
    } as Parameters<typeof createClient>[0]);
    const files = await readdir(output);
    if (files.length !== 1 || files[0] !== 'zod.gen.ts') {
      throw new Error(`@hey-api/openapi-ts wrote ${files.join(', ') || 'nothing'}, expected zod.gen.ts only`);
    }
    const raw = await readFile(join(output, 'zod.gen.ts'), 'utf8');
    const source = postProcess(raw, doc);
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

function postProcess(raw: string, doc: Json): string {
  const lines = raw.replace(/\r\n/g, '\n').split('\n');
  if (!lines[0]?.startsWith('// This file is auto-generated by @hey-api/openapi-ts')) {
    throw new Error('unexpected first line from @hey-api/openapi-ts; check the post-processing still applies');
  }
  lines[0] = tsHeader('generate-zod.ts', 'generated/openapi.json (@hey-api/openapi-ts zod plugin, post-processed)').trimEnd();

  const parameterComponents = parameterComponentNames(doc);
  const requestParts = requestPartNames(doc);
  const blocks = exportBlocks(lines);
  for (const block of blocks) {
    const requestPart = requestParts.get(block.name);
    const parameterComponent = parameterComponents.get(block.name);
    if (requestPart || parameterComponent) coerceBlock(lines, block, block.name);
  }
  return lines.join('\n').replace(/\n+$/, '\n');
}

interface Block {
  name: string;
  start: number;
  end: number;
}

/** Each `export const zX = ...` declaration, from its line to the last line before the next declaration. */
function exportBlocks(lines: string[]): Block[] {
  const starts: { name: string; start: number }[] = [];
  lines.forEach((line, index) => {
    const match = /^export const (z\w+) = /.exec(line);
    if (match) starts.push({ name: match[1]!, start: index });
  });
  return starts.map((entry, i) => {
    let end = (starts[i + 1]?.start ?? lines.length) - 1;
    // Stop before the JSDoc of the next declaration.
    while (end > entry.start && !/;\s*$/.test(lines[end]!)) end -= 1;
    return { ...entry, end };
  });
}

/** The plugin's names of the parameter objects of each operation (`zListRunsQuery`, ...), with the part. */
function requestPartNames(doc: Json): Map<string, string> {
  const names = new Map<string, string>();
  for (const { operation } of operationsOf(doc)) {
    for (const part of ['Path', 'Query', 'Headers']) names.set(`z${pascal(operation.operationId)}${part}`, part);
  }
  return names;
}

/** Component parameters (`zLimitQuery`, ...) by export name, with where they are read (`query`, `path`, `header`). */
function parameterComponentNames(doc: Json): Map<string, string> {
  const names = new Map<string, string>();
  for (const [name, parameter] of Object.entries<Json>(doc.components?.parameters ?? {})) {
    if (parameter?.in && parameter.in !== 'cookie') names.set(`z${name}`, parameter.in);
  }
  return names;
}

function coerceBlock(lines: string[], block: Block, name: string): void {
  for (let i = block.start; i <= block.end; i += 1) {
    let line = lines[i]!;
    line = line.replace(/\bz\.int\(\)/g, 'z.coerce.number().int()');
    line = line.replace(/\bz\.number\(\)/g, 'z.coerce.number()');
    // z.coerce.boolean() would read "false" as true; stringbool accepts true/false, 1/0, yes/no, on/off.
    line = line.replace(/\bz\.boolean\(\)/g, 'z.stringbool()');
    if (/\bz\.(bigint|int32|int64|uint32|float32|float64)\(\)/.test(line)) {
      throw new Error(`${name}: a numeric parameter form the coercion step does not handle: ${line.trim()}`);
    }
    lines[i] = line;
  }
}
