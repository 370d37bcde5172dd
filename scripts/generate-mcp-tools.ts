/**
 * @module The step of `pnpm generate` after errors: generated/mcp-tools.ts, the tools of the tenant MCP bridge. One tool per
 * operation of `paths` marked `x-mcp-tool`:
 *
 * ```yaml
 * x-mcp-tool:
 *   name: get_run                      # snake_case, unique
 *   description: Read one run of ...   # what `tools/list` shows
 *   arguments: McpGetRunArguments      # a component schema: a closed object (additionalProperties: false)
 * ```
 *
 * Each entry carries the tool's name, description and `inputSchema` (the arguments schema with every reference
 * inlined, as `tools/list` answers it), the zod schema of generated/zod.ts that checks the arguments, and the
 * operation's API key scopes (its `apiKey` alternatives) and `x-agent-targeted`, which the bridge applies as the
 * route would. Both transports of the bridge serve this one list, so REST, MCP and the SDKs share one source.
 */
import { type Json, deref, operationsOf, pascal, tsHeader, writeGenerated } from './generate-common.ts';

const SCRIPT = 'generate-mcp-tools.ts';

/** One tool as the contract describes it (what the generated file holds, but the zod schema's name). */
export interface ContractMcpTool {
  name: string;
  description: string;
  operationId: string;
  method: string;
  path: string;
  /** The operation's `apiKey` alternatives: any one list, all of its scopes. */
  scopes: string[][];
  agentTargeted: boolean;
  /** The component schema of the arguments. */
  argumentsSchema: string;
  inputSchema: Json;
}

/** The operations marked `x-mcp-tool`, in document order, checked. */
export function mcpToolsOf(doc: Json): ContractMcpTool[] {
  const tools: ContractMcpTool[] = [];
  for (const { path, method, operation } of operationsOf(doc)) {
    const tool = operation['x-mcp-tool'];
    if (tool === undefined) continue;
    const where = `${operation.operationId} (${method.toUpperCase()} ${path})`;
    if (!tool || typeof tool !== 'object') throw new Error(`mcp-tools: ${where} x-mcp-tool must be an object`);
    const unknown = Object.keys(tool).filter((key) => !['name', 'description', 'arguments'].includes(key));
    if (unknown.length) throw new Error(`mcp-tools: ${where} x-mcp-tool has unknown fields ${unknown.join(', ')}`);
    const { name, description, arguments: argumentsSchema } = tool;
    if (typeof name !== 'string' || !/^[a-z][a-z0-9_]{0,63}$/.test(name)) throw new Error(`mcp-tools: ${where} x-mcp-tool.name must be snake_case`);
    if (tools.some((other) => other.name === name)) throw new Error(`mcp-tools: ${where} repeats the tool name ${name}`);
    if (typeof description !== 'string' || description.trim().length < 10) throw new Error(`mcp-tools: ${where} x-mcp-tool.description is missing`);
    const schema = typeof argumentsSchema === 'string' ? doc.components?.schemas?.[argumentsSchema] : undefined;
    if (!schema) throw new Error(`mcp-tools: ${where} x-mcp-tool.arguments must name a schema of components.schemas`);
    if (schema.type !== 'object' || schema.additionalProperties !== false) {
      throw new Error(`mcp-tools: ${where} arguments ${argumentsSchema} must be an object with additionalProperties: false`);
    }
    const security: Json[] = operation.security ?? doc.security ?? [];
    const scopes = security.filter((requirement) => 'apiKey' in requirement).map((requirement) => [...requirement.apiKey] as string[]);
    if (scopes.length === 0) throw new Error(`mcp-tools: ${where} is not reachable with an API key, so no MCP token can stand for one`);
    tools.push({
      name,
      description,
      operationId: operation.operationId,
      method,
      path,
      scopes,
      agentTargeted: operation['x-agent-targeted'] === true,
      argumentsSchema,
      inputSchema: inlineSchema(doc, schema),
    });
  }
  if (tools.length === 0) throw new Error('mcp-tools: no operation is marked x-mcp-tool');
  return tools;
}

/**
 * A schema with every reference inlined, as an MCP client reads it: no `$ref` (the client has no document to
 * resolve it in), a one-member `allOf` merged into its parent (its own keys win), and without `title` and
 * examples (names of the contract's components and sample ids, noise to a model choosing arguments).
 */
export function inlineSchema(doc: Json, node: Json): Json {
  const schema = deref(doc, node);
  if (Array.isArray(schema) || !schema || typeof schema !== 'object') return schema;
  const { allOf, title: _title, examples: _examples, example: _example, ...rest } = schema;
  const out: Json = {};
  if (Array.isArray(allOf) && allOf.length === 1) Object.assign(out, inlineSchema(doc, allOf[0]));
  else if (allOf !== undefined) out.allOf = allOf.map((item: Json) => inlineSchema(doc, item));
  for (const [key, value] of Object.entries<Json>(rest)) {
    if (key === 'properties') out.properties = Object.fromEntries(Object.entries<Json>(value).map(([name, field]) => [name, inlineSchema(doc, field)]));
    else if (['items', 'not', 'additionalProperties'].includes(key) && value && typeof value === 'object') out[key] = inlineSchema(doc, value);
    else if (['anyOf', 'oneOf'].includes(key)) out[key] = value.map((item: Json) => inlineSchema(doc, item));
    else out[key] = value;
  }
  return out;
}

export async function generateMcpTools(doc: Json, zodSource: string): Promise<string> {
  const tools = mcpToolsOf(doc);
  const zodNames = tools.map((tool) => {
    const name = `z${pascal(tool.argumentsSchema)}`;
    if (!new RegExp(`^export const ${name} = `, 'm').test(zodSource)) throw new Error(`mcp-tools: generated/zod.ts does not export ${name}`);
    return name;
  });
  const entries = tools.map((tool, index) =>
    [
      '  {',
      `    name: ${JSON.stringify(tool.name)},`,
      `    description: ${JSON.stringify(tool.description)},`,
      `    operationId: ${JSON.stringify(tool.operationId)},`,
      `    method: ${JSON.stringify(tool.method)},`,
      `    path: ${JSON.stringify(tool.path)},`,
      `    scopes: ${JSON.stringify(tool.scopes)},`,
      `    agentTargeted: ${tool.agentTargeted},`,
      `    arguments: ${zodNames[index]},`,
      `    inputSchema: ${JSON.stringify(tool.inputSchema)},`,
      '  },',
    ].join('\n'),
  );
  const source = [
    tsHeader(SCRIPT, 'generated/openapi.json (operations marked x-mcp-tool), naming the schemas of generated/zod.ts'),
    '/**',
    ' * @module The tools of the tenant MCP bridge, one per operation marked `x-mcp-tool`, in document order: name,',
    ' * description and `inputSchema` as `tools/list` answers them, the zod schema that checks the arguments, and the',
    " * operation's API key scope alternatives and `x-agent-targeted`, which a tool call must satisfy as the route does.",
    ' */',
    `import { ${[...new Set(zodNames)].sort().join(', ')} } from './zod.ts';`,
    '',
    'export const mcpTools = [',
    ...entries,
    '] as const;',
    '',
    '/** The name of a tool of the bridge. */',
    "export type McpToolName = (typeof mcpTools)[number]['name'];",
    '',
  ].join('\n');
  await writeGenerated('mcp-tools.ts', source);
  return `${tools.length} tools`;
}
