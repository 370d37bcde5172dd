/**
 * @module The MCP client of connected integrations, through the official SDK (`Client` over
 * `StreamableHTTPClientTransport`). Every request goes through the SSRF guard with the address pinned (pinned-fetch.ts,
 * over connections kept alive per checked address), the session's opening and every call have a time limit, and a
 * workspace has at most its share of calls under way at once (connection-slots.ts: one slot per call, held from before
 * the session is opened, if it must be, to the call's end). Whatever the server does (fails, hangs, answers something
 * that is not MCP, refuses the credentials) is an {@link McpFailure} whose message is general: never the server's own
 * words, its host or a stack.
 *
 * Sessions are kept. An integration of a workspace has at most one open session (`initialize` and
 * `notifications/initialized` once), which its later `tools/list` and `tools/call` reuse, several at once if they come
 * together (the SDK tells their answers apart by request id). A session belongs to its integration's URL and auth
 * header: a call with another URL or header (the integration changed) closes the old session and opens another, and
 * pausing or removing the integration closes it ({@link McpConnector.forget}; on another instance its tool source
 * stops offering it and closes its session when it next reads the workspace's integrations,
 * {@link McpConnector.retain}). A session unused for {@link SESSION_IDLE_MS} is closed, at most {@link MAX_SESSIONS}
 * are kept (past it the least recently used is closed), and all are closed at shutdown ({@link McpConnector.close}).
 * Closing a session sends `DELETE` (bounded by {@link CLOSE_TIMEOUT_MS}); a session still in use is closed when its
 * last call ends, never under it. A call that fails in any way other than the tool's own `isError` retires its
 * session: the next call opens a new one. A check without an integration (before an integration is recorded) opens a
 * session of its own and closes it. The client opens no standalone event stream (the optional `GET`): it offers the
 * server no capability, and a stream per kept session would hold a connection open for as long as it is kept.
 *
 * Retrying, the rule: a request is sent again only when its failure proves the server did not act on it. On a reused
 * session (one opened by an earlier call), two failures prove it, and the session is opened anew (`initialize`) and the
 * request sent once more, once:
 * - `404` to a request carrying `Mcp-Session-Id`: the server does not know the session (it forgot it, restarted) and
 *   so did not process the request (MCP Streamable HTTP: the client must start a new session);
 * - a new connection that failed before its TLS handshake completed ({@link RequestNotSent}): nothing of the request
 *   reached the server.
 * A `tools/list` reads and changes nothing, so it is also sent again after any other failure of the connection on a
 * reused session (a reset, a cut answer). A `tools/call` may act (send an email): after any other failure (a reset
 * or cut connection, a timeout, a `5xx`, an answer that is not MCP) it may have been done, so it is never sent twice —
 * not by this module and not by the pinned fetch (`resend: false`, even on the reset of a reused connection); the
 * failure is the caller's. A session opened for this very call is never retried: its failure is the server's answer.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { SecureContextOptions } from 'node:tls';
import { DestinationRefusedError, type DestinationPolicy } from '../webhooks/ssrf-guard.ts';
import { type ConnectionSlots, createConnectionSlots } from './connection-slots.ts';
import { createPinnedFetch, RequestNotSent } from './pinned-fetch.ts';
import type { ListedTool } from './tool-names.ts';

/** Where an integration's server is and the header it wants. */
export interface McpEndpoint {
  readonly url: string;
  readonly header: { readonly name: string; readonly value: string } | null;
  /** The integration it is of: its session is kept for later calls. Absent (a check before it is recorded): not kept. */
  readonly integrationId?: string;
}

type FailureKind = 'timeout' | 'unreachable' | 'refused' | 'unauthorized' | 'protocol' | 'busy';

/** The general words of each failure: what an admin and a model are told. */
export const FAILURE_MESSAGES: Record<FailureKind, string> = {
  timeout: 'The integration did not answer in time.',
  unreachable: 'The integration could not be reached.',
  refused: 'The integration URL is refused.',
  unauthorized: 'The integration refused the credentials.',
  protocol: 'The integration did not answer as an MCP server.',
  busy: "Too many calls to this workspace's integrations are under way.",
};

export class McpFailure extends Error {
  override readonly name = 'McpFailure';
  constructor(readonly kind: FailureKind) {
    super(FAILURE_MESSAGES[kind]);
  }
}

/** What `tools/call` returned: its text content joined, and whether the tool says it failed. */
export interface ToolCallResult {
  text: string;
  isError: boolean;
}

export interface McpConnector {
  /** `tools/list` (every page, at most `maxTools`), on the integration's session. Throws {@link McpFailure}. */
  listTools(workspaceId: string, endpoint: McpEndpoint, signal?: AbortSignal): Promise<ListedTool[]>;
  /** `tools/call`, on the integration's session. Throws {@link McpFailure}. */
  callTool(workspaceId: string, endpoint: McpEndpoint, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolCallResult>;
  /** Closes the integration's session (paused, removed): never used again; calls under way on it end first. */
  forget(workspaceId: string, integrationId: string): void;
  /** Closes the workspace's sessions of every integration but these (the ones it offers now). */
  retain(workspaceId: string, integrationIds: ReadonlySet<string>): void;
  /** Closes every session (shutdown); later calls open sessions of their own and close them. */
  close(): Promise<void>;
}

export interface McpConnectorOptions {
  policy: DestinationPolicy;
  /** Extra trust roots (a test server's self-signed certificate). Verification is never turned off. */
  ca?: SecureContextOptions['ca'];
  /** Time for a session to open (`initialize`); 10 s when absent. */
  connectTimeoutMs?: number;
  /** Time for each call (`tools/list`, `tools/call`); 30 s when absent. */
  callTimeoutMs?: number;
  /** Calls per workspace at once; 4 when absent. */
  slots?: ConnectionSlots;
  /** How long a session may go unused before it is closed; {@link SESSION_IDLE_MS} when absent. */
  idleMs?: number;
  /** Sessions kept at once; {@link MAX_SESSIONS} when absent. */
  maxSessions?: number;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;
/** How long a kept session may go unused before it is closed. */
export const SESSION_IDLE_MS = 30_000;
/** Sessions kept at once, of every workspace; past it the least recently used is closed. */
export const MAX_SESSIONS = 256;
/** The time a session's `DELETE` may take when it is closed; then its requests are cut. */
export const CLOSE_TIMEOUT_MS = 2_000;
/** The most a call's text may be; the rest is cut. */
export const MAX_TOOL_TEXT = 64 * 1024;
const MAX_LIST_PAGES = 8;

/** One MCP session of an integration. */
interface Session {
  readonly key: string | undefined;
  readonly endpoint: McpEndpoint;
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  /** `initialize` done (shared by the calls that come while it is under way). */
  readonly opened: Promise<void>;
  /** Whether `opened` has settled successfully: a call that finds it so reuses the session. */
  ready: boolean;
  /** Calls under way on it. */
  inUse: number;
  /** No longer handed out; closed when its last call ends. */
  retired: boolean;
  /** Closed (or being closed). */
  ended: boolean;
  idle: ReturnType<typeof setTimeout> | undefined;
}

export function createMcpConnector(options: McpConnectorOptions): McpConnector {
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const idleMs = options.idleMs ?? SESSION_IDLE_MS;
  const maxSessions = options.maxSessions ?? MAX_SESSIONS;
  const slots = options.slots ?? createConnectionSlots();
  const pinned = createPinnedFetch({ policy: options.policy, ...(options.ca !== undefined ? { ca: options.ca } : {}) });
  /** The transport's fetch: no standalone event stream (answered as a server without one answers), and a `tools/call` is never sent twice. */
  const fetch = (url: string | URL, init?: RequestInit): Promise<Response> =>
    init?.method === 'GET'
      ? Promise.resolve(new Response(null, { status: 405 }))
      : pinned(url, init, { resend: !(typeof init?.body === 'string' && init.body.includes('"method":"tools/call"')) });
  /** The kept sessions by workspace and integration, least recently used first. */
  const sessions = new Map<string, Session>();
  /** Aborts the sessions' opening at shutdown. */
  const shutdown = new AbortController();

  function open(key: string | undefined, endpoint: McpEndpoint): Session {
    const client = new Client({ name: 'agent-invocation-service', version: '1.0.0' }, { capabilities: {} });
    const transport = new StreamableHTTPClientTransport(new URL(endpoint.url), {
      fetch,
      requestInit: { headers: endpoint.header ? { [endpoint.header.name]: endpoint.header.value } : {} },
    });
    const signal = AbortSignal.any([shutdown.signal, AbortSignal.timeout(connectTimeoutMs)]);
    const session: Session = {
      key,
      endpoint,
      client,
      transport,
      opened: client.connect(transport, { timeout: connectTimeoutMs, signal }).then(() => {
        session.ready = true;
      }),
      ready: false,
      inUse: 0,
      retired: false,
      ended: false,
      idle: undefined,
    };
    // Its callers see a failure to open; this only keeps it from being unhandled when none is left to see it.
    session.opened.catch(() => {});
    return session;
  }

  /** The integration's session for one call (opened if there is none, or none of this URL and header), marked in use. */
  function take(workspaceId: string, endpoint: McpEndpoint): Session {
    const key = endpoint.integrationId !== undefined && !shutdown.signal.aborted ? `${workspaceId}\u0000${endpoint.integrationId}` : undefined;
    let session = key === undefined ? undefined : sessions.get(key);
    if (session && !sameEndpoint(session.endpoint, endpoint)) {
      retire(session);
      session = undefined;
    }
    if (!session) {
      session = open(key, endpoint);
      if (key !== undefined) {
        if (sessions.size >= maxSessions) retire(sessions.values().next().value!);
        sessions.set(key, session);
      }
    } else {
      // The most recently used last.
      sessions.delete(key!);
      sessions.set(key!, session);
    }
    if (session.key === undefined) session.retired = true;
    clearTimeout(session.idle);
    session.idle = undefined;
    session.inUse += 1;
    return session;
  }

  /** A call on `session` ended: the session is closed if retired, else after {@link idleMs} unused. */
  function giveBack(session: Session): void {
    session.inUse -= 1;
    if (session.inUse > 0) return;
    if (session.retired) {
      void end(session);
      return;
    }
    session.idle = setTimeout(() => retire(session), idleMs);
    session.idle.unref?.();
  }

  /** No longer handed out; closed now if unused, else when its last call ends. */
  function retire(session: Session): void {
    if (session.key !== undefined && sessions.get(session.key) === session) sessions.delete(session.key);
    if (session.retired) return;
    session.retired = true;
    if (session.inUse === 0) void end(session);
  }

  /** `DELETE` (bounded), then the transport is closed: whatever request is still open is cut. Never fails. */
  async function end(session: Session): Promise<void> {
    if (session.ended) return;
    session.ended = true;
    clearTimeout(session.idle);
    session.idle = undefined;
    if (session.ready && session.transport.sessionId !== undefined) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        session.transport.terminateSession().catch(() => {}),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, CLOSE_TIMEOUT_MS);
          timer.unref?.();
        }),
      ]);
      clearTimeout(timer);
    }
    await session.client.close().catch(() => {});
  }

  /** `work` on the integration's session, within the workspace's slots and the whole budget; retried per the rule above. */
  async function withSession<T>(
    workspaceId: string,
    endpoint: McpEndpoint,
    outer: AbortSignal | undefined,
    acts: boolean,
    work: (client: Client, signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new McpFailure('timeout')), connectTimeoutMs + callTimeoutMs);
    const signal = outer ? AbortSignal.any([outer, deadline.signal]) : deadline.signal;
    let release: (() => void) | undefined;
    try {
      try {
        release = await slots.acquire(workspaceId, AbortSignal.any([signal, AbortSignal.timeout(connectTimeoutMs)]));
      } catch {
        throw signal.aborted ? new McpFailure('timeout') : new McpFailure('busy');
      }
      for (let attempt = 1; ; attempt += 1) {
        const session = take(workspaceId, endpoint);
        const reused = session.ready;
        try {
          if (!reused) await abortable(session.opened, signal);
          return await work(session.client, signal);
        } catch (error) {
          retire(session);
          if (attempt === 1 && reused && !signal.aborted && notProcessed(error, session, acts)) continue;
          throw error;
        } finally {
          giveBack(session);
        }
      }
    } catch (error) {
      throw classify(error, signal);
    } finally {
      clearTimeout(timer);
      release?.();
    }
  }

  return {
    listTools: (workspaceId, endpoint, signal) =>
      withSession(workspaceId, endpoint, signal, false, async (client, within) => {
        const tools: ListedTool[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
          const listed = await client.listTools(cursor ? { cursor } : undefined, { timeout: callTimeoutMs, signal: within });
          tools.push(...listed.tools);
          cursor = listed.nextCursor;
          if (!cursor) break;
        }
        return tools;
      }),
    callTool: (workspaceId, endpoint, name, args, signal) =>
      withSession(workspaceId, endpoint, signal, true, async (client, within) => {
        // The request itself, not `client.callTool`: what a call answers must not depend on whether its session
        // listed the tools before (the SDK checks a result against the output schemas it listed).
        const result = await client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema, {
          timeout: callTimeoutMs,
          signal: within,
        });
        const content = Array.isArray(result.content) ? (result.content as { type: string; text?: unknown }[]) : [];
        let text = content
          .filter((part) => part.type === 'text' && typeof part.text === 'string')
          .map((part) => part.text as string)
          .join('\n');
        if (text === '' && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
        return { text: text.length > MAX_TOOL_TEXT ? `${text.slice(0, MAX_TOOL_TEXT)}…` : text, isError: result.isError === true };
      }),
    forget(workspaceId, integrationId) {
      const session = sessions.get(`${workspaceId}\u0000${integrationId}`);
      if (session) retire(session);
    },
    retain(workspaceId, integrationIds) {
      const prefix = `${workspaceId}\u0000`;
      for (const [key, session] of sessions) {
        if (key.startsWith(prefix) && !integrationIds.has(key.slice(prefix.length))) retire(session);
      }
    },
    async close() {
      shutdown.abort();
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.all(
        all.map((session) => {
          session.retired = true;
          return end(session);
        }),
      );
    },
  };
}

function sameEndpoint(a: McpEndpoint, b: McpEndpoint): boolean {
  return a.url === b.url && a.header?.name === b.header?.name && a.header?.value === b.header?.value;
}

/** `promise`, or `signal`'s reason once it aborts first. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(error);
      },
    );
  });
}

/**
 * Whether the failure of a request on a reused session proves the server did not act on it (the rule in the module
 * comment): `404` to a request naming its session, or nothing of it sent; for a request that does not act (`acts`
 * false), also any failure of the connection.
 */
function notProcessed(error: unknown, session: Session, acts: boolean): boolean {
  const found = causes(error);
  const http = found.find((e): e is StreamableHTTPError => e instanceof StreamableHTTPError);
  if (http?.code === 404 && session.transport.sessionId !== undefined) return true;
  if (found.some((e) => e instanceof RequestNotSent)) return true;
  return !acts && found.some(isConnectionError);
}

/** Any error of a session as one of the general failures. */
function classify(error: unknown, signal: AbortSignal): McpFailure {
  if (error instanceof McpFailure) return error;
  if (signal.aborted) return new McpFailure('timeout');
  const found = causes(error);
  if (found.some((e) => e instanceof DestinationRefusedError && e.reason !== 'dns_failed')) return new McpFailure('refused');
  if (found.some((e) => e instanceof DestinationRefusedError)) return new McpFailure('unreachable');
  const http = found.find((e): e is StreamableHTTPError => e instanceof StreamableHTTPError);
  if (http && (http.code === 401 || http.code === 403)) return new McpFailure('unauthorized');
  // The SDK's own request timeout (McpError -32001).
  if (found.some((e) => (e as { code?: unknown }).code === -32001)) return new McpFailure('timeout');
  if (found.some(isConnectionError)) return new McpFailure('unreachable');
  return new McpFailure('protocol');
}

/** A failure of the connection itself (refused, reset, TLS), by its system or TLS code. */
function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(E[A-Z]+|ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(code);
}

function causes(error: unknown): unknown[] {
  const out: unknown[] = [];
  for (let at: unknown = error; at !== undefined && at !== null && out.length < 8; at = (at as { cause?: unknown }).cause) out.push(at);
  return out;
}
