/**
 * @module Test helper: an app whose alias Symphony is served by `openai-compatible` against a loopback model
 * (fake-chat-server.ts; the other aliases stay on the local engine), with an MCP test server (mcp-servers.ts)
 * connected as an integration by the signed-in admin, the way an admin connects one over the API.
 */
import type { Deps } from '../../server/src/app.ts';
import { createEngines } from '../../server/src/engine/index.ts';
import type { OpenDb } from '../../server/src/store/db.ts';
import { createTestApp, type TestApp } from './app.ts';
import type { FakeChatServer } from './fake-chat-server.ts';
import type { McpTestServer } from './mcp-servers.ts';

export interface AgentTestApp {
  t: TestApp;
  /** The admin's session (cookie and CSRF token). */
  admin: { cookie: string; csrfToken: string };
  /** The connected integration's id. */
  integrationId: string;
  /** A call of the admin's session: its status and JSON body. */
  session(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
}

/** The model every test of the agent loop talks to: `loopback-model` behind Symphony. */
export function loopbackEngines(model: FakeChatServer): Deps['engines'] {
  return createEngines({
    aliases: { Prelude: 'local', Sonata: 'local', Symphony: 'openai-compatible', Concerto: 'local' },
    openaiCompatible: { baseURL: model.baseURL, apiKey: 'sk-test', models: { Symphony: 'loopback-model' } },
  });
}

export async function createAgentTestApp(options: {
  db: OpenDb;
  model: FakeChatServer;
  mcp: McpTestServer;
  /** The integration's name (its tools are offered as `<integration>__<tool>`). */
  integration: string;
  logger?: Deps['logger'];
}): Promise<AgentTestApp> {
  const t = await createTestApp({
    db: options.db,
    deps: {
      engines: loopbackEngines(options.model),
      webhooks: { allowList: ['127.0.0.1'] },
      integrations: { ca: [options.mcp.ca], toolsTtlMs: 3_600_000 },
      ...(options.logger ? { logger: options.logger } : {}),
    },
  });
  const admin = await t.login();
  const session: AgentTestApp['session'] = async (method, path, body) => {
    const res = await t.app.request(path, {
      method,
      headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const connected = await session('POST', '/integrations', { integration: options.integration, url: options.mcp.url });
  if (connected.status !== 201) throw new Error(`connecting ${options.integration} answered ${connected.status}: ${JSON.stringify(connected.body)}`);
  return { t, admin, integrationId: String(connected.body.id), session };
}
