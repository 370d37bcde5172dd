/**
 * @module The tools a workspace's integrations provide to the agent loop (`ToolSource`, domain/agent-loop/tool.ts):
 * each tool of each connected integration that is not paused, named `<integration>.<tool>` (tool-names.ts), read-only
 * when its server annotates it `readOnlyHint: true`, called through MCP `tools/call` under the server's own name (text
 * content joined; `isError` is an `ok: false` outcome). Tools lists come from the cache in the store, refreshed by every connection check and, in the
 * background, once older than the TTL; the tools offered meanwhile are the cached ones. A call never throws: a
 * failing, slow or lying server is an `ok: false` outcome with general words.
 */
import type { Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';
import type { AgentTool, ToolOutcome, ToolSource } from '../agent-loop/tool.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import { McpFailure, type McpConnector, type McpEndpoint } from './mcp-client.ts';
import { createWorkspaceCache } from '../../store/workspace-cache.ts';
import { INTEGRATIONS_CHANNEL, type IntegrationRow, integrationsVersion, offeredIntegrations, recordCheck, toolsOf } from './records.ts';
import { checkConnection, endpointOf, type LogWarning } from './service.ts';
import type { CachedTool } from './tool-names.ts';

/** How long a tools list is used before it is listed again (MCP_TOOLS_TTL_MS); 5 minutes when absent. */
export const DEFAULT_TOOLS_TTL_MS = 5 * 60_000;

const CALL_FAILED = 'The integration call failed.';
const TOOL_ERROR = 'The tool reported an error.';

export interface IntegrationTools extends ToolSource {
  /** Background refreshes under way (tests wait for them). */
  settled(): Promise<void>;
}

export function createIntegrationTools(deps: {
  db: Db;
  clock: Clock;
  secretBox: SecretBox;
  connector: McpConnector;
  toolsTtlMs?: number;
  logError?: (error: unknown) => void;
  logWarning?: LogWarning;
}): IntegrationTools {
  const { db, clock, secretBox, connector } = deps;
  const ttlMs = deps.toolsTtlMs ?? DEFAULT_TOOLS_TTL_MS;
  const refreshing = new Map<string, Promise<void>>();
  // Each workspace's offered integrations from memory, dropped on every change (records.ts): an invocation reads no row.
  // Each read from the store closes the kept MCP sessions of the workspace's integrations no longer offered (paused or
  // removed, on any instance).
  const offered = createWorkspaceCache({
    db,
    channel: INTEGRATIONS_CHANNEL,
    version: integrationsVersion,
    load: async (from, workspaceId) => {
      const rows = await offeredIntegrations(from, workspaceId);
      connector.retain(workspaceId, new Set(rows.map((row) => row.id)));
      return rows;
    },
  });

  function refresh(row: IntegrationRow, endpoint: McpEndpoint): void {
    if (refreshing.has(row.id)) return;
    const done = (async () => {
      const check = await checkConnection(connector, row.workspace_id, row.integration, endpoint, deps.logWarning);
      await recordCheck(db, row, check, clock.now());
    })()
      .catch((error: unknown) => deps.logError?.(error))
      .finally(() => refreshing.delete(row.id));
    refreshing.set(row.id, done);
  }

  // Each offered row's endpoint (its auth header opened) and tools, made once per row read from the store: the rows are
  // replaced on every change, so an invocation opens no sealed header, and a tool's definition stays the same object
  // while its list stands (a model input's count of it is kept by the object, engine/model-input.ts).
  const built = new WeakMap<IntegrationRow, { endpoint: McpEndpoint; tools: AgentTool[] }>();
  function builtOf(row: IntegrationRow): { endpoint: McpEndpoint; tools: AgentTool[] } {
    let entry = built.get(row);
    if (!entry) {
      const endpoint = endpointOf(row, secretBox);
      entry = { endpoint, tools: toolsOf(row).map((tool) => toolOf(row, endpoint, tool)) };
      built.set(row, entry);
    }
    return entry;
  }

  function toolOf(row: IntegrationRow, endpoint: McpEndpoint, tool: CachedTool): AgentTool {
    return {
      definition: { name: tool.name, description: tool.description, inputSchema: tool.inputSchema },
      readOnly: tool.readOnly,
      integrationId: row.id,
      async call(args, options): Promise<ToolOutcome> {
        try {
          const result = await connector.callTool(row.workspace_id, endpoint, tool.mcpName, { ...args }, options.signal);
          if (result.isError) return { ok: false, error: result.text === '' ? TOOL_ERROR : `${TOOL_ERROR} ${result.text}` };
          return { ok: true, content: result.text };
        } catch (error) {
          if (error instanceof McpFailure) return { ok: false, error: error.message };
          deps.logError?.(error);
          return { ok: false, error: CALL_FAILED };
        }
      },
    };
  }

  return {
    async toolsOf(workspaceId) {
      const now = clock.now().getTime();
      const tools: AgentTool[] = [];
      for (const row of await offered.read(workspaceId)) {
        const { endpoint, tools: rowTools } = builtOf(row);
        if (row.tools_refreshed_at === null || now - row.tools_refreshed_at.getTime() >= ttlMs) refresh(row, endpoint);
        tools.push(...rowTools);
      }
      return tools;
    },
    async settled() {
      await Promise.all([...refreshing.values()]);
    },
  };
}
