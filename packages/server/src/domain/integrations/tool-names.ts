/**
 * @module An MCP server's tools list as the workspace's agents see it: each tool named `<integration>.<tool>`, the
 * tool part the server's name in lowercase with every character other than `a-z0-9_-` replaced by `_` (two names
 * that end up alike are told apart by `_2`, `_3`, …), the server's own name kept so a call reaches the right tool.
 * A server's list is data from outside: names, descriptions and schemas are bounded, and a tool that does not fit
 * is left out.
 */

/** A tool as cached in `integrations.tools`. */
export interface CachedTool {
  /** `<integration>.<tool>`. */
  readonly name: string;
  /** The server's own name of the tool, for `tools/call`. */
  readonly mcpName: string;
  readonly description: string;
  readonly readOnly: boolean;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** A tool as `tools/list` gave it (validated by the SDK's schema). */
export interface ListedTool {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean | undefined } | undefined;
}

export const MAX_TOOLS = 128;
const MAX_TOOL_PART = 64;
const MAX_DESCRIPTION = 1024;
const MAX_SCHEMA_CHARS = 16 * 1024;

/** The tool part of a name: lowercase, `[a-z0-9_-]`, at most 64 characters; empty when nothing is left. */
export function toolPart(mcpName: string): string {
  return mcpName
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '_')
    .slice(0, MAX_TOOL_PART);
}

/** The cache entries of `integration`'s listed tools, at most {@link MAX_TOOLS}. */
export function toCachedTools(integration: string, listed: readonly ListedTool[]): CachedTool[] {
  const taken = new Set<string>();
  const tools: CachedTool[] = [];
  for (const tool of listed) {
    if (tools.length >= MAX_TOOLS) break;
    const part = toolPart(tool.name);
    if (part.replace(/[_-]/g, '') === '') continue;
    if (JSON.stringify(tool.inputSchema).length > MAX_SCHEMA_CHARS) continue;
    let unique = part;
    for (let n = 2; taken.has(unique); n += 1) unique = `${part.slice(0, MAX_TOOL_PART - String(n).length - 1)}_${n}`;
    taken.add(unique);
    tools.push({
      name: `${integration}.${unique}`,
      mcpName: tool.name,
      description: (tool.description ?? '').slice(0, MAX_DESCRIPTION),
      readOnly: tool.annotations?.readOnlyHint === true,
      inputSchema: tool.inputSchema,
    });
  }
  return tools;
}
