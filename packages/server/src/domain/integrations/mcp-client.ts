/**
 * @module The MCP client of connected integrations, through the official SDK (`Client` over
 * `StreamableHTTPClientTransport`): each use opens a session (`initialize`), does its one thing (`tools/list` or
 * `tools/call`) and closes it. Every request goes through the SSRF guard with the address pinned (pinned-fetch.ts,
 * over connections kept alive per checked address), the connect and every call have a time limit, and a workspace has
 * at most its share of connections open at once (connection-slots.ts). Whatever the server does (fails, hangs, answers something that is not MCP, refuses the
 * credentials) is an {@link McpFailure} whose message is general: never the server's own words, its host or a stack.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { SecureContextOptions } from 'node:tls';
import { DestinationRefusedError, type DestinationPolicy } from '../webhooks/ssrf-guard.ts';
import { type ConnectionSlots, createConnectionSlots } from './connection-slots.ts';
import { createPinnedFetch } from './pinned-fetch.ts';
import type { ListedTool } from './tool-names.ts';

/** Where an integration's server is and the header it wants. */
export interface McpEndpoint {
  readonly url: string;
  readonly header: { readonly name: string; readonly value: string } | null;
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
  /** `initialize`, then `tools/list` (every page, at most `maxTools`). Throws {@link McpFailure}. */
  listTools(workspaceId: string, endpoint: McpEndpoint, signal?: AbortSignal): Promise<ListedTool[]>;
  /** `initialize`, then `tools/call`. Throws {@link McpFailure}. */
  callTool(workspaceId: string, endpoint: McpEndpoint, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolCallResult>;
}

export interface McpConnectorOptions {
  policy: DestinationPolicy;
  /** Extra trust roots (a test server's self-signed certificate). Verification is never turned off. */
  ca?: SecureContextOptions['ca'];
  /** Time for the session to open (`initialize`); 10 s when absent. */
  connectTimeoutMs?: number;
  /** Time for each call after it (`tools/list`, `tools/call`); 30 s when absent. */
  callTimeoutMs?: number;
  /** Connections per workspace at once; 4 when absent. */
  slots?: ConnectionSlots;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;
/** The most a call's text may be; the rest is cut. */
export const MAX_TOOL_TEXT = 64 * 1024;
const MAX_LIST_PAGES = 8;

export function createMcpConnector(options: McpConnectorOptions): McpConnector {
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const slots = options.slots ?? createConnectionSlots();
  const fetch = createPinnedFetch({ policy: options.policy, ...(options.ca !== undefined ? { ca: options.ca } : {}) });

  /** A session of `endpoint` for `work`, within the workspace's slots and the whole budget. */
  async function withSession<T>(
    workspaceId: string,
    endpoint: McpEndpoint,
    outer: AbortSignal | undefined,
    work: (client: Client, signal: AbortSignal) => Promise<T>,
  ) {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new McpFailure('timeout')), connectTimeoutMs + callTimeoutMs);
    const signal = outer ? AbortSignal.any([outer, deadline.signal]) : deadline.signal;
    let release: (() => void) | undefined;
    const client = new Client({ name: 'agent-invocation-service', version: '1.0.0' }, { capabilities: {} });
    try {
      try {
        release = await slots.acquire(workspaceId, AbortSignal.any([signal, AbortSignal.timeout(connectTimeoutMs)]));
      } catch {
        throw signal.aborted ? new McpFailure('timeout') : new McpFailure('busy');
      }
      const transport = new StreamableHTTPClientTransport(new URL(endpoint.url), {
        fetch,
        requestInit: { headers: endpoint.header ? { [endpoint.header.name]: endpoint.header.value } : {} },
      });
      await client.connect(transport, { timeout: connectTimeoutMs, signal });
      return await work(client, signal);
    } catch (error) {
      throw classify(error, signal);
    } finally {
      clearTimeout(timer);
      // Closing aborts whatever request is still open; a failure to close changes nothing for the caller.
      await client.close().catch(() => {});
      release?.();
    }
  }

  return {
    listTools: (workspaceId, endpoint, signal) =>
      withSession(workspaceId, endpoint, signal, async (client, within) => {
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
      withSession(workspaceId, endpoint, signal, async (client, within) => {
        const result = await client.callTool({ name, arguments: args }, undefined, { timeout: callTimeoutMs, signal: within });
        const content = Array.isArray(result.content) ? (result.content as { type: string; text?: unknown }[]) : [];
        let text = content
          .filter((part) => part.type === 'text' && typeof part.text === 'string')
          .map((part) => part.text as string)
          .join('\n');
        if (text === '' && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
        return { text: text.length > MAX_TOOL_TEXT ? `${text.slice(0, MAX_TOOL_TEXT)}…` : text, isError: result.isError === true };
      }),
  };
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
  if (
    found.some(
      (e) =>
        typeof (e as { code?: unknown }).code === 'string' && /^(E[A-Z]+|ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test((e as { code: string }).code),
    )
  ) {
    return new McpFailure('unreachable');
  }
  return new McpFailure('protocol');
}

function causes(error: unknown): unknown[] {
  const out: unknown[] = [];
  for (let at: unknown = error; at !== undefined && at !== null && out.length < 8; at = (at as { cause?: unknown }).cause) out.push(at);
  return out;
}
