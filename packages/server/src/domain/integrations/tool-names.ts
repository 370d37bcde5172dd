/**
 * @module An MCP server's tools list as the workspace's agents see it: each tool named `<integration>.<tool>` by the
 * one naming rule (domain/agent-loop/tool-name.ts: `send-email` of `help-desk` is `help_desk.send_email`), the
 * server's own name kept so a call reaches the right tool. Two tools that come out under one name: the first in the
 * server's order is offered, the others are left out (and named to the caller, who logs them once per check): a name
 * stands for one tool, never for whichever a suffix happened to land on. A server's list is data from outside:
 * names, descriptions and schemas are bounded, and a tool that does not fit is left out.
 */
import { toolName } from '../agent-loop/tool-name.ts';

/** A tool as cached in `integrations.tools`. */
export interface CachedTool {
  /** `<integration>.<tool>`, the name agents are offered and runs record. */
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
const MAX_DESCRIPTION = 1024;
const MAX_SCHEMA_CHARS = 16 * 1024;
/** How much of a left-out tool's own name the caller is given (a server's names are unbounded). */
const MAX_REPORTED_NAME = 64;

/** A tool left out because an earlier one of the list came out under the same name. */
export interface CollidingTool {
  /** The name it would have had, the earlier tool's. */
  readonly name: string;
  /** The server's own name, cut at 64 characters. */
  readonly mcpName: string;
}

/** The cache entries of `integration`'s listed tools (at most {@link MAX_TOOLS}), and the tools left out as collisions. */
export function toCachedTools(integration: string, listed: readonly ListedTool[]): { tools: CachedTool[]; collisions: CollidingTool[] } {
  const tools: CachedTool[] = [];
  const collisions: CollidingTool[] = [];
  const taken = new Set<string>();
  for (const tool of listed) {
    if (tools.length >= MAX_TOOLS) break;
    // A name of nothing but separators names nothing a model could tell apart.
    if (!/[a-z0-9]/i.test(tool.name)) continue;
    if (JSON.stringify(tool.inputSchema).length > MAX_SCHEMA_CHARS) continue;
    const name = toolName(integration, tool.name);
    if (taken.has(name)) {
      collisions.push({ name, mcpName: tool.name.slice(0, MAX_REPORTED_NAME) });
      continue;
    }
    taken.add(name);
    tools.push({
      name,
      mcpName: tool.name,
      description: (tool.description ?? '').slice(0, MAX_DESCRIPTION),
      readOnly: tool.annotations?.readOnlyHint === true,
      inputSchema: tool.inputSchema,
    });
  }
  return { tools, collisions };
}
