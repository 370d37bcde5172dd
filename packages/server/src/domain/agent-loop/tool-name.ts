/**
 * @module The one naming rule of tools: what an agent is offered, what its runs record (`ToolCall.name`, the
 * approval's `action`) and what an agent's definition is compared with. Every name fits the contract's pattern
 * (`<area>.<verb>`, each part `[a-z][a-z0-9_]*`) whatever an MCP server calls its tools (`send-email`,
 * `getContact`, `search.v2`) and whatever an integration is named (`help-desk`): each part is lowercased, every
 * character other than `a-z0-9_` becomes `_`, a part that would not start with a letter gets `t_` before it, and
 * the whole name is cut at the contract's 97 characters (`IntegrationTool.name`). A name that already fits is
 * itself, so the built-in tools and an agent's definition written with fitting names are unchanged.
 */

/** The contract's tool name (`ToolCall.name`, `Approval.action`, `IntegrationTool.name`). */
export const TOOL_NAME = /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/;
/** `IntegrationTool.name`'s `maxLength`: an integration's name (32) with `t_`, the dot, and the rest of the tool part. */
export const MAX_TOOL_NAME = 97;
/** A part of a name an agent's definition may give (`AgentToolSelection`). */
const MAX_PART = 64;
const PREFIX = 't_';

/** One part of a name (an integration's, a tool's own): lowercase, `[a-z0-9_]`, starting with a letter. */
export function namePart(raw: string): string {
  const part = raw.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  return (/^[a-z]/.test(part) ? part : `${PREFIX}${part}`).slice(0, MAX_PART);
}

/** The name `<area>.<tool>` as agents are offered it and runs record it. */
export function toolName(area: string, tool: string): string {
  return `${namePart(area)}.${namePart(tool)}`.slice(0, MAX_TOOL_NAME);
}

/**
 * What a name of an agent's definition (`AgentToolSelection`, `AgentApprovalPolicy`) names under the rule: a whole
 * area (`help-desk` → `help_desk`) or a tool (`help-desk.send-email` → `help_desk.send_email`).
 */
export function selectedName(name: string): string {
  const dot = name.indexOf('.');
  return dot === -1 ? namePart(name) : toolName(name.slice(0, dot), name.slice(dot + 1));
}
