/**
 * @module The tools of the tenant MCP bridge. Each acts with the workspace of the MCP token:
 *
 * - `list_agents`: the active agents, as `GET /v1/agents` answers them.
 * - `invoke_agent` `{ alias, agentSlug?, message }`: a run through the run service (`source: 'mcp'`);
 *   answers the redacted answer and the run id.
 * - `get_run` `{ runId }`: one run of the workspace (another workspace's run is not found).
 * - `get_usage`: the usage of the current period, as `GET /v1/usage` answers it.
 *
 * Arguments are checked with zod; `inputSchema` (for `tools/list`) is derived from the same schema,
 * so the two cannot disagree. A tool acts within the scopes of the API key that issued the token, as
 * the matching HTTP route would (`mcp:tenant` opens the bridge, it grants nothing else).
 */
import { z } from 'zod';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';
import { ALIASES } from '../../vocabulary/alias.ts';
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

interface Tool<A extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  arguments: A;
  /** The scopes of the matching HTTP route: any one of them lets the tool run. */
  scopes: readonly string[];
  run(args: z.infer<A>, caller: McpCaller, deps: McpDeps): Promise<ToolResult>;
}

const noArguments = z.object({}).strict();

const listAgents: Tool<typeof noArguments> = {
  name: 'list_agents',
  description: 'List the active agents of the workspace, with the alias assigned to each.',
  arguments: noArguments,
  scopes: ['departments:read'],
  async run(_args, { workspaceId }, { db }) {
    const agents = activeAgents(await workspaceAgents(db, workspaceId));
    const data = agents.map((a) => ({ slug: a.slug, name: a.name, kind: a.kind, description: a.description, alias: a.defaultAlias }));
    return structured({ data });
  },
};

const invokeArguments = z
  .object({
    alias: z.enum(ALIASES).describe('Model alias: Prelude, Sonata, Symphony or Concerto.'),
    agentSlug: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,63}$/)
      .optional()
      .describe('The agent to ask; the orchestrator (which routes to a department) when absent.'),
    message: z.string().min(1).max(500_000).describe('The message to the agent.'),
  })
  .strict();

const invokeAgent: Tool<typeof invokeArguments> = {
  name: 'invoke_agent',
  description: 'Send a message to an agent of the workspace and answer its reply and the run id.',
  arguments: invokeArguments,
  scopes: ['orchestrator:invoke', 'orchestrator:invoke:agent:*'],
  async run(args, { workspaceId, keyScopes }, { runs, clock }) {
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
};

const getRunArguments = z
  .object({
    runId: z
      .string()
      .regex(/^run_[A-Za-z0-9]{16,32}$/)
      .describe('The run id, run_ followed by 16 to 32 base62 characters.'),
  })
  .strict();

const getRun: Tool<typeof getRunArguments> = {
  name: 'get_run',
  description: 'Read one run of the workspace: status, agent, alias, answer and usage.',
  arguments: getRunArguments,
  scopes: ['orchestrator:invoke', 'orchestrator:invoke:agent:*', 'tenant:read'],
  async run(args, { workspaceId }, { runs }) {
    return structured({ ...(await runs.getRun(workspaceId, args.runId)) });
  },
};

const getUsage: Tool<typeof noArguments> = {
  name: 'get_usage',
  description: 'Read the usage of the current period in STU, with the quota level.',
  arguments: noArguments,
  scopes: ['usage:read'],
  async run(_args, { workspaceId }, { usage }) {
    return structured({ ...(await usage.current(workspaceId)) });
  },
};

export const TOOLS: readonly Tool[] = [listAgents, invokeAgent, getRun, getUsage];

/** The `tools/list` entries: name, description and the JSON Schema of the arguments. */
export function toolDescriptions(): { name: string; description: string; inputSchema: Record<string, unknown> }[] {
  return TOOLS.map((tool) => {
    const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(tool.arguments);
    return { name: tool.name, description: tool.description, inputSchema };
  });
}

function structured(data: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data, isError: false };
}
