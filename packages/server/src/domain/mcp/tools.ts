/**
 * @module The tools of the tenant MCP bridge: what each does. Which tools exist, their names, descriptions,
 * argument schemas and scopes are the contract's (the operations marked `x-mcp-tool`, generated into
 * generated/mcp-tools.ts); here is one runner per tool, each acting with the workspace of the MCP token:
 *
 * - `list_agents` (listAgents): the active agents, as `GET /v1/agents` answers them.
 * - `invoke_agent` (createInference) `{ alias, agentSlug?, message }`: a run through the run service
 *   (`source: 'mcp'`); answers the redacted answer and the run id.
 * - `get_run` (getRunV1) `{ runId }`: one run of the workspace (another workspace's run is not found).
 * - `get_usage` (getUsageV1): the usage of the current period, as `GET /v1/usage` answers it.
 *
 * A tool acts within the scopes of the API key that issued the token, as its operation would
 * (`mcp:tenant` opens the bridge, it grants nothing else): the dispatcher checks them before the runner.
 * A tool of the contract without a runner here, or a runner without a tool, fails `tsc`.
 */
import type { z } from 'zod';
import { mcpTools, type McpToolName } from '../../contract.ts';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';
import { activeAgents } from '../agents/availability.ts';
import { ORCHESTRATOR_SLUG } from '../../vocabulary/catalog.ts';
import { workspaceAgents } from '../agents/settings.ts';
import { runFailureError, type RunService } from '../runs/index.ts';
import type { UsageService } from '../spending/index.ts';

/** What the tools act with; the handlers pass the app's services. */
export interface McpDeps {
  db: Db;
  clock: Clock;
  runs: RunService;
  usage: Pick<UsageService, 'current'>;
}

/** An MCP tool result: text content, optionally the same data as `structuredContent`. */
export interface ToolResult {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError: boolean;
}

/** Who calls: the token's workspace and the scopes of the key that issued the token. */
export interface McpCaller {
  workspaceId: string;
  keyScopes: readonly string[];
}

/** One tool of the contract (generated/mcp-tools.ts). */
export type McpTool = (typeof mcpTools)[number];

type ToolArguments<N extends McpToolName> = z.output<Extract<McpTool, { name: N }>['arguments']>;

type Runner<N extends McpToolName> = (args: ToolArguments<N>, caller: McpCaller, deps: McpDeps) => Promise<ToolResult>;

const RUNNERS: { [N in McpToolName]: Runner<N> } = {
  async list_agents(_args, { workspaceId }, { db }) {
    const agents = activeAgents(await workspaceAgents(db, workspaceId));
    const data = agents.map((a) => ({ slug: a.slug, name: a.name, kind: a.kind, description: a.description, alias: a.defaultAlias }));
    return structured({ data });
  },

  async invoke_agent(args, { workspaceId, keyScopes }, { runs, clock }) {
    const started = await runs.start({
      workspaceId,
      // The run service applies the agent rule: a key bound to one agent reaches that agent only.
      scopes: keyScopes,
      agentSlug: args.agentSlug ?? ORCHESTRATOR_SLUG,
      alias: args.alias,
      messages: [{ role: 'user', content: args.message }],
      source: 'mcp',
    });
    // Without an idempotency key a start never replays; a run that crossed a limit already failed.
    if (started.kind === 'replay') throw new Error('unexpected idempotent replay');
    if (started.kind === 'ended') throw runFailureError(started.run, clock.now());
    const outcome = await runs.execute(started.run);
    if (outcome.run.status === 'failed') throw runFailureError(outcome.run, clock.now());
    const meta = { runId: outcome.run.id, agentSlug: outcome.answeredBy, alias: outcome.run.alias, usage: outcome.usage };
    return {
      content: [
        { type: 'text', text: outcome.content },
        { type: 'text', text: JSON.stringify(meta) },
      ],
      structuredContent: { ...meta, content: outcome.content },
      isError: false,
    };
  },

  async get_run(args, { workspaceId }, { runs }) {
    return structured({ ...(await runs.getRun(workspaceId, args.runId)) });
  },

  async get_usage(_args, { workspaceId }, { usage }) {
    return structured({ ...(await usage.current(workspaceId)) });
  },
};

/** The tool of this name, or undefined. */
export function findTool(name: string): McpTool | undefined {
  return mcpTools.find((tool) => tool.name === name);
}

/** Runs a tool with arguments its own schema has parsed. */
export function runTool(tool: McpTool, args: unknown, caller: McpCaller, deps: McpDeps): Promise<ToolResult> {
  return (RUNNERS[tool.name] as Runner<McpToolName>)(args as never, caller, deps);
}

/** The `tools/list` entries: name, description and the JSON Schema of the arguments, as the contract gives them. */
export function toolDescriptions(): { name: string; description: string; inputSchema: McpTool['inputSchema'] }[] {
  return mcpTools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
}

function structured(data: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data, isError: false };
}
