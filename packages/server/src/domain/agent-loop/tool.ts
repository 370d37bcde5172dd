/**
 * @module The seam between the agent loop and what an agent may call: a tool's definition (what the
 * model is shown), whether it only reads, and how it is called. Connected integrations (MCP servers,
 * domain/integrations) and the built-in tools (drafts) both provide `AgentTool`s; the loop
 * (domain/agent-loop) offers them to the model, asks for approval where the agent's definition says
 * so, and calls them. A tool's output is data from outside, never trusted: the loop redacts it.
 */
import { selectedName } from './tool-name.ts';

/** What the model is shown of a tool. */
export interface ToolDefinition {
  /** `<area>.<verb>`: the integration's name (or a built-in's area) and the tool's own name, under the rule of tool-name.ts. */
  readonly name: string;
  readonly description: string;
  /** A JSON Schema object for the arguments (MCP `inputSchema`). */
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** What a call returned: its text, or an error the model is told (never a 5xx of ours). */
export type ToolOutcome = { readonly ok: true; readonly content: string } | { readonly ok: false; readonly error: string };

export interface AgentTool {
  readonly definition: ToolDefinition;
  /** Its server annotates it `readOnlyHint: true` (or it is a built-in that only records). */
  readonly readOnly: boolean;
  /** The integration it comes from (`int_…`), or null for a built-in tool. */
  readonly integrationId: string | null;
  /** Calls it once. Never throws: a failing, slow or lying server is an `ok: false` outcome. */
  call(args: Readonly<Record<string, unknown>>, options: { readonly signal: AbortSignal }): Promise<ToolOutcome>;
}

/** The tools a workspace's connected (and not paused) integrations provide. */
export interface ToolSource {
  toolsOf(workspaceId: string): Promise<readonly AgentTool[]>;
}

/** What an agent is: its instructions, the tools it may use, the approvals it needs, how many model calls a run may make. */
export interface AgentDefinition {
  readonly slug: string;
  readonly instructions: string;
  /** Model calls per run (1–32; default 8). */
  readonly stepLimit: number;
  /** The tools it may use: null for every connected tool; else tool names (`crm.update`) or whole integrations (`crm`). */
  readonly tools: readonly string[] | null;
  /** Per tool name: `required` or `not_required`; a tool not listed needs approval unless it is read-only. */
  readonly approvals: Readonly<Record<string, 'required' | 'not_required'>>;
}

/**
 * The tools of `all` that `agent` may use. The definition's names are read under the naming rule, so one that names
 * an integration as it is called (`help-desk`) or a tool as its server calls it still selects what is offered.
 */
export function toolsOfAgent(all: readonly AgentTool[], agent: Pick<AgentDefinition, 'tools'>): AgentTool[] {
  if (agent.tools === null) return [...all];
  const allowed = new Set(agent.tools.map(selectedName));
  return all.filter((tool) => allowed.has(tool.definition.name) || allowed.has(tool.definition.name.split('.')[0] ?? ''));
}

/** Whether a call of `tool` by `agent` waits for a person's decision; a policy naming the tool exactly comes first. */
export function needsApproval(tool: Pick<AgentTool, 'definition' | 'readOnly'>, agent: Pick<AgentDefinition, 'approvals'>): boolean {
  const name = tool.definition.name;
  const policy = Object.hasOwn(agent.approvals, name)
    ? agent.approvals[name]
    : Object.entries(agent.approvals).find(([selected]) => selectedName(selected) === name)?.[1];
  if (policy !== undefined) return policy === 'required';
  return !tool.readOnly;
}
