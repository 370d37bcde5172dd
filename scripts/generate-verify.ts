/**
 * @module Last step of `pnpm generate`: imports the generated modules and checks what generating
 * cannot prove: every operation is in the route table, every MCP tool names a route and checks its arguments strictly, every closed object of the contract refuses unknown
 * fields, numeric parameters are coerced, header names are lowercase, and errors.ts has every code.
 */
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { GENERATED, type Json, operationsOf, pascal } from './generate-common.ts';

export async function verifyGenerated(doc: Json): Promise<string> {
  const zod: Record<string, Json> = await import(pathToFileURL(join(GENERATED, 'zod.ts')).href);
  const { routes } = (await import(pathToFileURL(join(GENERATED, 'routes.ts')).href)) as { routes: Json[] };
  const { ERROR_STATUS } = (await import(pathToFileURL(join(GENERATED, 'errors.ts')).href)) as { ERROR_STATUS: Record<string, number> };
  const problems: string[] = [];

  const operations = operationsOf(doc);
  const routed = new Set(routes.map((route) => `${route.method} ${route.path} ${route.operationId}`));
  for (const { method, path, operation } of operations) {
    if (!routed.has(`${method} ${path} ${operation.operationId}`)) problems.push(`routes.ts lacks ${operation.operationId}`);
  }
  if (routes.length !== operations.length) problems.push(`routes.ts has ${routes.length} routes for ${operations.length} operations`);

  for (const [name, schema] of Object.entries<Json>(doc.components?.schemas ?? {})) {
    if (schema?.additionalProperties !== false || !schema.properties) continue;
    const validator = zod[`z${pascal(name)}`];
    if (!validator) problems.push(`zod.ts lacks z${pascal(name)}`);
    else if (!isStrictObject(validator)) problems.push(`z${pascal(name)} is not strict although ${name} has additionalProperties: false`);
  }

  for (const route of routes) {
    for (const part of ['params', 'query', 'headers'] as const) {
      const schema = route.request[part];
      if (!schema) continue;
      for (const [key, field] of Object.entries<Json>(schema.shape ?? {})) {
        const inner = unwrap(field);
        if (inner._zod.def.type === 'number' && !inner._zod.def.coerce)
          problems.push(`${route.operationId} ${part}.${key} is numeric but not coerced from text`);
        if (inner._zod.def.type === 'boolean') problems.push(`${route.operationId} ${part}.${key} is a boolean that would not parse "false"`);
        if (part === 'headers' && key !== key.toLowerCase()) problems.push(`${route.operationId} header ${key} is not lowercase`);
      }
    }
  }

  const { mcpTools } = (await import(pathToFileURL(join(GENERATED, 'mcp-tools.ts')).href)) as { mcpTools: Json[] };
  for (const tool of mcpTools) {
    if (!routed.has(`${tool.method} ${tool.path} ${tool.operationId}`)) problems.push(`mcp-tools.ts names ${tool.operationId}, which routes.ts lacks`);
    if (!isStrictObject(tool.arguments)) problems.push(`mcp-tools.ts: the arguments of ${tool.name} are not a strict object`);
  }

  const codes: string[] = doc.components?.schemas?.ErrorCode?.enum ?? [];
  const missingCodes = codes.filter((code) => !(code in ERROR_STATUS));
  if (missingCodes.length) problems.push(`errors.ts lacks ${missingCodes.join(', ')}`);

  if (problems.length) throw new Error(`generated output failed its checks:\n  ${problems.join('\n  ')}`);
  return `${routes.length} routes, ${codes.length} error codes`;
}

/** `z.strictObject` is an object whose catch-all is `never`. */
function isStrictObject(schema: Json): boolean {
  const def = schema?._zod?.def;
  return def?.type === 'object' && def.catchall?._zod?.def?.type === 'never';
}

/** Looks through optional, default and nullable wrappers to the value's own schema. */
function unwrap(schema: Json): Json {
  let current = schema;
  while (['optional', 'default', 'nullable', 'prefault'].includes(current?._zod?.def?.type)) current = current._zod.def.innerType;
  return current;
}
