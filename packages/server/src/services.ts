/**
 * @module What the app is built from. `Deps` is what a caller hands to `createApp` (tests pass a
 * fake clock and an in-memory store); `Services` are the domain services built from it once per
 * app, which handlers receive. `Services` holds no store: a handler reaches the data only through a
 * service object (tsc refuses `db` in a handler), and only `buildServices` hands the store to them.
 */
import { systemClock, type Clock } from './clock.ts';
import { createAgentService, type AgentService } from './domain/agents/service.ts';
import { createAgentDefinitions, type AgentDefinitions } from './domain/agents/definitions-cache.ts';
import { createAgentSettingsCache } from './domain/agents/settings-cache.ts';
import { createApprovalService, type ApprovalService } from './domain/approvals/service.ts';
import { createAuditService, type AuditService } from './domain/audit/index.ts';
import { createDraftService, type DraftService } from './domain/drafts/index.ts';
import { createInboundIngestService, type InboundIngestService } from './domain/inbound-webhooks/ingest-service.ts';
import { createConnectionSlots } from './domain/integrations/connection-slots.ts';
import { createMcpConnector, type McpConnector } from './domain/integrations/mcp-client.ts';
import { createIntegrationService, type IntegrationService } from './domain/integrations/service.ts';
import { createIntegrationTools, type IntegrationTools } from './domain/integrations/tool-source.ts';
import { createKeyService, type KeyService } from './domain/keys/index.ts';
import { createMcpTokenService, type McpTokenService } from './domain/mcp-tokens/index.ts';
import { createOperatorService, type OperatorService } from './domain/operators/index.ts';
import {
  createMcpDispatcher,
  createMcpHttpSessions,
  createMcpSessions,
  MCP_KEEP_ALIVE_MS,
  type McpDispatcher,
  type McpHttpSessionLimits,
  type McpHttpSessions,
  type McpSessions,
} from './domain/mcp/index.ts';
import type { CancelBus } from './domain/runs/cancel-bus.ts';
import type { RunEventHub } from './domain/run-events/index.ts';
import { createRunService, type RunService } from './domain/runs/index.ts';
import { createUsageService, createUsageTally, type BudgetSettings, type UsageService } from './domain/spending/index.ts';
import { createMemberService, type MemberService } from './domain/sessions/members-service.ts';
import { createOperatorWorkspaceService, type OperatorWorkspaceService } from './domain/workspaces/operator-service.ts';
import { createStandingService, type StandingService } from './domain/standing/service.ts';
import { DEFAULT_STU_RATES, KILL_SWITCH_LIMITS, type KillSwitchLimits, type StuRates } from './domain/usage/index.ts';
import { createEngines, type Engines } from './engine/index.ts';
import type { ToolSource } from './domain/agent-loop/index.ts';
import { createRedactor, type Redactor } from './redact/index.ts';
import { silentLogger, type Logger } from './log/index.ts';
import type { Metrics } from './metrics/index.ts';
import { createOpenStreams, type OpenStreams } from './domain/health/open-streams.ts';
import { createHealth, type Health, type Pingable, type Saturation } from './domain/health/index.ts';
import { createSessionService, type SessionService } from './domain/sessions/index.ts';
import { createSsoService, type SsoService } from './domain/sso/index.ts';
import { createMemoryLimiter, type Limiter } from './rate-limits/index.ts';
import type { Db } from './store/db.ts';
import type { AdmissionLimits } from './middleware/admission/index.ts';
import { createWebhookServices, type WebhookDeps, type WebhookServices } from './webhook-services.ts';

interface AppConfig {
  /** Number of reverse proxies whose X-Forwarded-For is believed (0: use the socket address). */
  trustProxy: number;
  /** Private beta (`PRIVATE_BETA=true`): the public agent API answers 404 not_found. GA by default. */
  privateBeta: boolean;
  /** Browser origins allowed by CORS (`CORS_ORIGINS`); none by default: server-to-server. */
  corsOrigins: readonly string[];
  /** Time an inbound webhook's body has to arrive once its slug and limit passed (`INBOUND_BODY_TIMEOUT_MS`). */
  inboundBodyTimeoutMs: number;
}

const DEFAULT_APP_CONFIG: AppConfig = { trustProxy: 0, privateBeta: false, corsOrigins: [], inboundBodyTimeoutMs: 10_000 };

export interface Deps {
  db: Db;
  clock?: Clock;
  config?: Partial<AppConfig>;
  /** Rate-limit store; in memory when absent, Redis in a multi-instance deployment. */
  limiter?: Limiter;
  /** Unexpected errors, with their stack, for the operator; defaults to stderr. */
  logError?: (entry: { requestId: string; method: string; path: string; error: unknown; message?: string }) => void;
  /** Webhook secrets key, outbound allow-list, worker wake-up (see webhook-services.ts). */
  webhooks?: WebhookDeps;
  /** The MCP client of connected integrations: time limits, connections per workspace, tools TTL, test trust roots. */
  integrations?: IntegrationOptions;
  /** Single sign-on's requests to identity providers: extra trust roots (a test provider's self-signed certificate). */
  sso?: { ca?: string | readonly string[] };
  /** Alias -> engine; every alias on the local engine when absent. */
  engines?: Engines;
  /** The tools of a workspace's connected integrations (the agent loop); the connected MCP servers' when absent. */
  tools?: ToolSource;
  /** The agents' definitions (instructions, tools, approvals, step limit); the stored ones when absent. */
  agents?: AgentDefinitions;
  /** How long an agent's tool call may take; 30 s when absent. */
  toolTimeoutMs?: number;
  /**
   * More names the redactor removes beside the engines' own (`confidentialTerms`: model names,
   * provider host, key), e.g. internal host names (REDACT_TERMS).
   */
  redactTerms?: readonly string[];
  /** STU per token and alias; the defaults of domain/usage when absent. */
  stuRates?: StuRates;
  /** Kill-switch limits in STU (run, hour, day); 1 M / 10 M / 80 M when absent. */
  killSwitchLimits?: KillSwitchLimits;
  /** Interval of the MCP stream's `: keep-alive` comment; 15 s when absent (tests shorten it). */
  mcpKeepAliveMs?: number;
  /** Limits of the bridge's Streamable HTTP sessions (per workspace, per instance, idle time); MCP_HTTP_SESSION_LIMITS when absent. */
  mcpSessionLimits?: Partial<McpHttpSessionLimits>;
  /** Lease of a run being executed (RUN_LEASE_MS); 60 s when absent. */
  runLeaseMs?: number;
  /** How long a streamed run goes on after its client left (STREAM_RESUME_MS); 10 s when absent. */
  streamResumeMs?: number;
  /** An operator token from the environment (OPERATOR_TOKEN), accepted beside the stored ones. */
  operatorToken?: string | undefined;
  /** Cross-instance cancel (PostgreSQL LISTEN/NOTIFY) when several instances share a database. */
  cancelBus?: CancelBus;
  /** The runs' live event logs, shared with the other instances (PostgreSQL LISTEN/NOTIFY); this instance's alone when absent. */
  runEvents?: RunEventHub;
  /** Redis when configured (REDIS_URL): `GET /readyz` pings it. */
  redis?: Pingable;
  /** The structured logger (one line per request, background errors); nothing is logged when absent. */
  logger?: Logger;
  /** Prometheus metrics (`serve` with METRICS_PORT); none when absent. */
  metrics?: Metrics;
  /** Bounds past which a request answers 503 at once (middleware/admission); none when absent. */
  admission?: AdmissionLimits;
  /** Whether admission control refuses newcomers (`GET /readyz` says so); createApp sets it from `admission`. */
  saturation?: Saturation;
}

/** How the MCP client of connected integrations behaves (defaults in domain/integrations). */
export interface IntegrationOptions {
  /** Time for a session to open (`initialize`); 10 s when absent. */
  connectTimeoutMs?: number;
  /** Time for each call after it (`tools/list`, `tools/call`); 30 s when absent. */
  callTimeoutMs?: number;
  /** Connections a workspace may have open to its integrations at once; 4 when absent. */
  connectionsPerWorkspace?: number;
  /** How long a tools list is used before it is listed again; 5 minutes when absent. */
  toolsTtlMs?: number;
  /** Extra trust roots (a test server's self-signed certificate); the system's (and NODE_EXTRA_CA_CERTS) otherwise. */
  ca?: string | readonly string[];
}

export interface Services {
  clock: Clock;
  config: AppConfig;
  limiter: Limiter;
  keys: KeyService;
  sessions: SessionService;
  /** Single sign-on with the workspaces' identity providers: the owner's settings, the sign-in. */
  sso: SsoService;
  mcpTokens: McpTokenService;
  /** Verifies the operator's token (middleware/auth). */
  operators: OperatorService;
  /** The operator API's use-cases: workspaces and account recovery by email. */
  operator: OperatorWorkspaceService;
  webhooks: WebhookServices;
  /** Ingestion of a verified inbound event (the inbound route, behind middleware/inbound). */
  inbound: InboundIngestService;
  runs: RunService;
  budget: BudgetSettings;
  /** Usage of the period, day by day, and the spending kill switches. */
  usage: UsageService;
  /** The workspace's agents: the active ones, and the panel's pause and resume. */
  agents: AgentService;
  /** Each agent's definition (instructions, step limit, tools, approvals) from memory, kept current by notifications: what the agent loop reads. */
  agentDefinitions: AgentDefinitions;
  /** What agents wrote for people to review. */
  drafts: DraftService;
  /** Members, invitations and account resets of a workspace. */
  members: MemberService;
  approvals: ApprovalService;
  /** The workspace's audit log (the events are recorded by the other services, in their changes' transactions). */
  audit: AuditService;
  integrations: IntegrationService;
  /** The tools of the workspace's connected integrations, for the agent loop (`ToolSource`). */
  integrationTools: IntegrationTools;
  /** The MCP client of the integrations, whose kept sessions are closed at shutdown. */
  mcpConnector: McpConnector;
  /** A workspace's standing by its id (a session's invocation). */
  standing: StandingService;
  logger: Logger;
  metrics: Metrics | undefined;
  /** The redactor of this deployment: the fixed rules plus its engines' confidential terms. */
  redactor: Redactor;
  /** SSE streams open in this process, ended properly at shutdown. */
  streams: OpenStreams;
  /** Liveness and readiness (`/healthz`, `/readyz`); `serve` marks the shutdown. */
  health: Health;
  /** The tenant MCP bridge: JSON-RPC dispatcher, this process's open SSE sessions and its Streamable HTTP sessions. */
  mcp: { dispatcher: McpDispatcher; sessions: McpSessions; httpSessions: McpHttpSessions; keepAliveMs: number };
}

/** The default limiter (no Redis): it reads the app's clock, so tests that move time move the windows too; its keys show in the metrics. */
function inMemoryLimiter(clock: Clock, metrics: Metrics | undefined): Limiter {
  const limiter = createMemoryLimiter({ now: () => clock.now().getTime() });
  metrics?.observeLimiter(limiter);
  return limiter;
}

export function buildServices(deps: Deps): Services {
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger ?? silentLogger;
  const { db } = deps;
  const mcpSessions = createMcpSessions();
  const mcpHttpSessions = createMcpHttpSessions(clock, deps.mcpSessionLimits);
  deps.metrics?.observeMcpSessions({ sse: () => mcpSessions.size, streamableHttp: () => mcpHttpSessions.count() });
  const limiter = deps.limiter ?? inMemoryLimiter(clock, deps.metrics);
  const budget: BudgetSettings = { rates: deps.stuRates ?? DEFAULT_STU_RATES, limits: deps.killSwitchLimits ?? KILL_SWITCH_LIMITS };
  // One secret box seals webhook secrets and TOTP secrets alike.
  const webhooks = createWebhookServices({ db, clock, webhooks: deps.webhooks });
  const engines = deps.engines ?? createEngines();
  // Every model name, provider host and key the engines were configured with, automatically.
  const redactor = createRedactor({
    terms: [...Object.values(engines).flatMap((engine) => engine.confidentialTerms ?? []), ...(deps.redactTerms ?? [])],
  });
  // Plan, quota and paused agents from memory, kept current by notifications.
  const agentSettings = createAgentSettingsCache(db).read;
  // Each workspace's current period in memory, moved by the ledger's writes (notifications).
  const usageTally = createUsageTally(db);
  const usage = createUsageService({ db, clock, limits: budget.limits, settings: agentSettings, tally: usageTally });
  const { secretBox } = webhooks;
  const integrationOptions = deps.integrations ?? {};
  // Connectors pass the webhook destinations' guard and allow-list (WEBHOOK_ALLOW_HOSTS).
  const connector = createMcpConnector({
    policy: { allowList: webhooks.allowList },
    ...(integrationOptions.ca !== undefined ? { ca: [integrationOptions.ca].flat() } : {}),
    ...(integrationOptions.connectTimeoutMs !== undefined ? { connectTimeoutMs: integrationOptions.connectTimeoutMs } : {}),
    ...(integrationOptions.callTimeoutMs !== undefined ? { callTimeoutMs: integrationOptions.callTimeoutMs } : {}),
    slots: createConnectionSlots(integrationOptions.connectionsPerWorkspace),
  });
  // The tools of the workspaces' connected integrations (MCP servers), offered to their agents.
  const integrationTools = createIntegrationTools({
    db,
    clock,
    secretBox,
    connector,
    ...(integrationOptions.toolsTtlMs !== undefined ? { toolsTtlMs: integrationOptions.toolsTtlMs } : {}),
    logError: (error) => logger.error({ err: error }, 'integration tools refresh failed'),
    logWarning: (fields, message) => logger.warn(fields, message),
  });
  // The agents' definitions (instructions, tools, approvals, step limit), from memory (domain/agents).
  const agentDefinitions = deps.agents ?? createAgentDefinitions({ db });
  const runs = createRunService({
    db,
    agentSettings,
    usageTally,
    clock,
    engines,
    redactor,
    budget,
    logError: (error) => logger.error({ err: error }, 'background run failed'),
    // For operators: the engine reported more than the run's reservation; only the reservation was billed.
    logUnbilled: (entry) => logger.warn(entry, 'engine usage beyond the reservation, not billed'),
    ...(deps.runLeaseMs ? { leaseMs: deps.runLeaseMs } : {}),
    ...(deps.streamResumeMs !== undefined ? { streamResumeMs: deps.streamResumeMs } : {}),
    cancelBus: deps.cancelBus,
    runEvents: deps.runEvents,
    tools: deps.tools ?? integrationTools,
    agents: agentDefinitions,
    toolTimeoutMs: deps.toolTimeoutMs,
  });
  const sessions = createSessionService({ db, clock, secretBox });
  // Identity providers pass the webhook destinations' guard and allow-list too (WEBHOOK_ALLOW_HOSTS).
  const sso = createSsoService({
    db,
    clock,
    secretBox,
    policy: { allowList: webhooks.allowList },
    sessions,
    ...(deps.sso?.ca !== undefined ? { ca: [deps.sso.ca].flat() } : {}),
  });
  return {
    clock,
    config: { ...DEFAULT_APP_CONFIG, ...deps.config },
    limiter,
    // Listens for revocations (LISTEN/NOTIFY), so a cache hit costs no query.
    keys: createKeyService({ db, clock, listen: true }),
    sessions,
    sso,
    mcpTokens: createMcpTokenService({ db, clock }),
    operators: createOperatorService({ db, envToken: deps.operatorToken }),
    operator: createOperatorWorkspaceService({ db, clock, secretBox }),
    webhooks,
    inbound: createInboundIngestService({ db, clock }),
    runs,
    budget,
    usage,
    agents: createAgentService({ db, clock }),
    agentDefinitions,
    drafts: createDraftService({ db }),
    members: createMemberService({ db, clock, secretBox }),
    approvals: createApprovalService({ db, clock }),
    audit: createAuditService({ db }),
    integrations: createIntegrationService({
      db,
      clock,
      secretBox,
      policy: { allowList: webhooks.allowList },
      connector,
      logWarning: (fields, message) => logger.warn(fields, message),
    }),
    integrationTools,
    mcpConnector: connector,
    standing: createStandingService({ db }),
    logger,
    metrics: deps.metrics,
    redactor,
    streams: createOpenStreams(),
    health: createHealth({ db, redis: deps.redis, saturation: deps.saturation }),
    mcp: {
      dispatcher: createMcpDispatcher({
        db,
        clock,
        runs,
        usage,
        redactor,
        // Either transport; the request's own log line names its operation.
        logError: (error) => logger.error({ err: error }, 'MCP tool call failed'),
      }),
      sessions: mcpSessions,
      httpSessions: mcpHttpSessions,
      keepAliveMs: deps.mcpKeepAliveMs ?? MCP_KEEP_ALIVE_MS,
    },
  };
}
