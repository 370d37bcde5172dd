/**
 * @module `ServiceClient`: one object per credential. With an API key it invokes agents and reads runs and
 * usage; `ServiceClient.login` opens an admin session whose client also manages keys, webhooks and approvals.
 * Every operation of the contract is also reachable as `client.operations.<operationId>(input)`.
 */
import { AgentConfigurations, ApiKeys, Approvals, Drafts, Webhooks } from './admin.ts';
import { ServiceError } from './core/errors.ts';
import { Transport, type RequestOptions, type TransportConfig } from './core/transport.ts';
import { OPERATIONS, type OperationInputs, Operations, SERVERS, type Schemas } from './generated/operations.ts';
import { Agents, Inference, Orchestrator } from './inference.ts';
import { Runs } from './runs.ts';

/** The production address, the first server of the contract. */
export const DEFAULT_BASE_URL: string = SERVERS[0].url;

export interface ClientOptions {
  /** Default: `SERVICE_API_KEY` from the environment (where there is one). */
  apiKey?: string;
  /** Default: `SERVICE_BASE_URL`, else the production address. */
  baseURL?: string;
  /** Retries of a retriable failure; default 2. */
  maxRetries?: number;
  /** Per attempt; default 60,000 ms. */
  timeoutMs?: number;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
}

export interface LoginOptions extends Omit<ClientOptions, 'apiKey'> {
  email: string;
  password: string;
  /** The current 6-digit TOTP code. */
  totpCode: string;
}

function env(name: string): string | undefined {
  // Guarded: browsers and some edge runtimes have no `process`.
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return process?.env?.[name] || undefined;
}

export class ServiceClient {
  /** Every operation of the contract, one typed method per operationId (generated). */
  readonly operations: Operations;
  readonly inference: Inference;
  readonly agents: Agents;
  readonly orchestrator: Orchestrator;
  readonly runs: Runs;
  readonly usage: { current(options?: RequestOptions): Promise<Schemas['Usage']> };
  readonly mcp: { createToken(body?: Schemas['CreateMcpTokenRequest'], options?: RequestOptions): Promise<Schemas['McpToken']> };
  /** Admin session only (`ServiceClient.login`). */
  readonly apiKeys: ApiKeys;
  /** Admin session only: inbound webhooks and outbound destinations. */
  readonly webhooks: Webhooks;
  /** Admin session only. */
  readonly approvals: Approvals;
  /** Admin session only (any member): what the workspace's agents wrote for review. */
  readonly drafts: Drafts;
  /** Admin session only: an agent's instructions, step limit, tools and approval policy (members read, admins change). */
  readonly agentConfigurations: AgentConfigurations;
  /** Admin session only. */
  readonly integrations: { create(body: Schemas['CreateIntegrationRequest'], options?: RequestOptions): Promise<Schemas['Integration']> };
  /**
   * Admin session only: the workspace's audit log (`GET /audit-events`), newest first; filters `action`, `actor`,
   * `target`, `since`, `until`, pages `limit`/`offset` (pass the first page's time as `until` to page a list that new
   * events do not shift).
   */
  readonly auditEvents: {
    list(query?: NonNullable<OperationInputs['listAuditEvents']['query']>, options?: RequestOptions): Promise<Schemas['AuditEventList']>;
  };
  /** The admin session of a client from `login`. */
  readonly session: Schemas['AdminSession'] | undefined;
  private readonly transport: Transport;

  constructor(options: ClientOptions = {}, session?: { cookie: string; csrfToken: string; detail: Schemas['AdminSession'] }) {
    const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    const config: TransportConfig = {
      apiKey: options.apiKey ?? env('SERVICE_API_KEY'),
      baseURL: options.baseURL ?? env('SERVICE_BASE_URL') ?? DEFAULT_BASE_URL,
      maxRetries: options.maxRetries ?? 2,
      timeoutMs: options.timeoutMs ?? 60_000,
      fetch: fetchImpl,
      session: session && { cookie: session.cookie, csrfToken: session.csrfToken },
    };
    this.transport = new Transport(config);
    this.session = session?.detail;
    const ops = new Operations(this.transport);
    this.operations = ops;
    this.inference = new Inference(this.transport);
    this.agents = new Agents(this.transport);
    this.orchestrator = new Orchestrator(this.transport);
    this.runs = new Runs(this.transport);
    this.usage = { current: (o) => ops.getCurrentUsage({}, o) };
    this.mcp = { createToken: (body = {}, o) => ops.createMcpToken({ body }, o) };
    this.apiKeys = new ApiKeys(ops);
    this.webhooks = new Webhooks(ops);
    this.approvals = new Approvals(ops);
    this.drafts = new Drafts(ops);
    this.agentConfigurations = new AgentConfigurations(ops);
    this.integrations = { create: (body, o) => ops.createIntegration({ body }, o) };
    this.auditEvents = { list: (query = {}, o) => ops.listAuditEvents({ query }, o) };
  }

  /** The base address this client sends to. */
  get baseURL(): string {
    return this.transport.config.baseURL;
  }

  /**
   * Opens an admin session (`POST /auth/login`) and returns a client whose calls carry its cookie, and whose
   * writes carry its CSRF token. Wrong credentials throw `AuthenticationError` (`not_authenticated`).
   */
  static async login(options: LoginOptions): Promise<ServiceClient> {
    const { email, password, totpCode, ...rest } = options;
    const anonymous = new ServiceClient({ ...rest, apiKey: '' });
    // A login is not repeatable: a TOTP code is accepted once.
    const { response, text } = await anonymous.transport.send(OPERATIONS.login, { body: { email, password, totpCode } }, { maxRetries: 0 });
    const detail = JSON.parse(text ?? '{}') as Schemas['AdminSession'];
    const cookie = sessionCookie(response.headers);
    if (!cookie) {
      throw new ServiceError({
        status: response.status,
        code: 'not_authenticated',
        message: 'the login answer set no service_session cookie',
        headers: response.headers,
      });
    }
    return new ServiceClient(rest, { cookie, csrfToken: detail.csrfToken, detail });
  }

  /** Ends the admin session (`POST /auth/logout`). */
  logout(options?: RequestOptions): Promise<void> {
    return this.operations.logout({}, options);
  }
}

function sessionCookie(headers: Headers): string | undefined {
  const values = typeof headers.getSetCookie === 'function' ? headers.getSetCookie() : [headers.get('set-cookie') ?? ''];
  for (const value of values) {
    const match = /(?:^|,\s*)(service_session=[^;,\s]*)/.exec(value);
    if (match) return match[1];
  }
  return undefined;
}
