/**
 * @module Real MCP servers on loopback for tests, built with the official SDK (`Server` over the Streamable HTTP
 * transport, stateless, on HTTPS with a self-signed certificate trusted through `ca`): `crm` (a read-only
 * `lookup_contact`, annotated `readOnlyHint: true`) and `mail` (`send_email`, not annotated, and `Draft Reply`, whose
 * name needs sanitizing), and `help-desk`, whose tools are named as real servers name them (`send-email`,
 * `getContact`, `search.v2`, `360-view`) and two of which come out under the name of the first (`send_email`,
 * `Send.Email`). Every `tools/call` is recorded. A server can be made slow, failing (`500` naming an internal
 * host, which must never reach a client), malformed (`tools/list` and `tools/call` answer JSON-RPC results that are not
 * MCP), and can require an auth header. Not used by the service itself.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpsServer } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createSelfSignedCertificate, type TestCertificate } from './https-receiver.ts';

/**
 * How the server answers: normally, after a wait, with `500`, with results that are not MCP, or (`cut`) by performing a
 * `tools/call` and cutting the connection instead of answering it.
 */
export type McpServerMode = 'ok' | 'slow' | 'fail' | 'malformed' | 'cut';

export interface McpTestServerOptions {
  mode?: McpServerMode;
  /** The wait of `slow` (default 5 s; every request waits it). */
  slowMs?: number;
  /** A header every request must carry (else `401`). */
  requiredHeader?: { name: string; value: string };
  /** Stateful: sessions named by `Mcp-Session-Id` (stateless when absent). */
  sessions?: boolean;
}

/** One `tools/call` as the server saw it. */
export interface RecordedCall {
  tool: string;
  args: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}

export interface McpTestServer {
  /** `https://127.0.0.1:<port>/mcp` */
  url: string;
  /** The certificate to trust (`ca`). */
  ca: string;
  calls: RecordedCall[];
  /** Every request's headers, in order. */
  requests: IncomingHttpHeaders[];
  /** Connections (TLS) opened to the server so far. */
  connections: number;
  /** Closes the connections it holds open (as a server closes idle kept-alive ones), and goes on listening. */
  dropConnections(): void;
  /** Cuts the next `count` connections as they open, before their TLS handshake (as a server that is down). */
  refuseConnections(count: number): void;
  /** `initialize` requests answered so far. */
  initializes: number;
  /** Sessions open now (`sessions` only). */
  openSessions: number;
  /** Sessions a client ended with `DELETE` (`sessions` only). */
  endedSessions: number;
  /** Forgets every session (as a restarted server does): requests naming one are `404` from now on. */
  forgetSessions(): void;
  mode: McpServerMode;
  close(): Promise<void>;
}

/** A name that must never leave the service (the failing server puts it in its answer). */
export const INTERNAL_HOST_IN_ERRORS = 'db-primary.corp.internal';

interface ToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  answer(args: Record<string, unknown>): { content: { type: 'text'; text: string }[]; isError?: boolean };
}

const CRM_TOOLS: ToolSpec[] = [
  {
    name: 'lookup_contact',
    description: 'Find a contact by email.',
    inputSchema: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
    annotations: { readOnlyHint: true },
    answer: (args) =>
      args.email === 'missing@example.com'
        ? { content: [{ type: 'text', text: 'No contact with that email.' }], isError: true }
        : {
            content: [
              { type: 'text', text: `Contact: Ada Lovelace <${String(args.email)}>` },
              { type: 'text', text: 'Plan: enterprise' },
            ],
          },
  },
];

const MAIL_TOOLS: ToolSpec[] = [
  {
    name: 'send_email',
    description: 'Send an email.',
    inputSchema: { type: 'object', properties: { to: { type: 'string' }, subject: { type: 'string' } }, required: ['to'] },
    answer: (args) => ({ content: [{ type: 'text', text: `Sent to ${String(args.to)}` }] }),
  },
  {
    name: 'Draft Reply',
    description: 'Draft a reply.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: false },
    answer: () => ({ content: [{ type: 'text', text: 'Drafted.' }] }),
  },
];

/** A help desk whose tools' names fit no contract: each answer says which tool of the server answered. */
const HELP_DESK_TOOLS: ToolSpec[] = [
  {
    name: 'send-email',
    description: 'Send an email to a customer.',
    inputSchema: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
    answer: (args) => ({ content: [{ type: 'text', text: `send-email sent to ${String(args.to)}` }] }),
  },
  {
    name: 'getContact',
    description: 'Find a customer by email.',
    inputSchema: { type: 'object', properties: { email: { type: 'string' } } },
    annotations: { readOnlyHint: true },
    answer: (args) => ({ content: [{ type: 'text', text: `getContact found ${String(args.email)}` }] }),
  },
  {
    name: 'search.v2',
    description: 'Search the tickets.',
    inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
    annotations: { readOnlyHint: true },
    answer: (args) => ({ content: [{ type: 'text', text: `search.v2 found 2 tickets about ${String(args.query)}` }] }),
  },
  {
    name: '360-view',
    description: "A customer's whole history.",
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
    answer: () => ({ content: [{ type: 'text', text: '360-view: 3 tickets, 1 renewal' }] }),
  },
  {
    name: 'send_email',
    description: 'The older way to send an email.',
    inputSchema: { type: 'object', properties: { to: { type: 'string' } } },
    answer: (args) => ({ content: [{ type: 'text', text: `send_email sent to ${String(args.to)}` }] }),
  },
  {
    name: 'Send.Email',
    description: 'Yet another way to send an email.',
    inputSchema: { type: 'object', properties: { to: { type: 'string' } } },
    answer: (args) => ({ content: [{ type: 'text', text: `Send.Email sent to ${String(args.to)}` }] }),
  },
];

/** The read-only CRM server. */
export function startCrmServer(options: McpTestServerOptions = {}): Promise<McpTestServer> {
  return startMcpTestServer('crm', CRM_TOOLS, options);
}

/** The mail server, whose `send_email` acts. */
export function startMailServer(options: McpTestServerOptions = {}): Promise<McpTestServer> {
  return startMcpTestServer('mail', MAIL_TOOLS, options);
}

/** The help desk, whose tools' names need the naming rule (and collide under it). */
export function startHelpDeskServer(options: McpTestServerOptions = {}): Promise<McpTestServer> {
  return startMcpTestServer('help-desk', HELP_DESK_TOOLS, options);
}

/** One certificate for every server of the process (making one costs an RSA key). */
let shared: TestCertificate | undefined;

async function startMcpTestServer(name: string, tools: ToolSpec[], options: McpTestServerOptions): Promise<McpTestServer> {
  shared ??= createSelfSignedCertificate();
  const certificate = shared;
  const sockets = new Set<import('node:stream').Duplex>();
  /** The open sessions of a stateful server, by id. */
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let refusing = 0;
  const state: McpTestServer = {
    url: '',
    ca: certificate.cert,
    calls: [],
    requests: [],
    connections: 0,
    initializes: 0,
    get openSessions() {
      return sessions.size;
    },
    endedSessions: 0,
    forgetSessions: () => {
      const forgotten = [...sessions.values()];
      sessions.clear();
      for (const transport of forgotten) void transport.close();
    },
    mode: options.mode ?? 'ok',
    dropConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
    refuseConnections: (count) => {
      refusing = count;
    },
    close: async () => {
      state.forgetSessions();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => https.close(() => resolve()));
    },
  };

  /** An SDK server of these tools: its `tools/call` is recorded with the headers of the request that carried it. */
  function mcpServer(): Server {
    const server = new Server({ name, version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
        ...(tool.annotations ? { annotations: tool.annotations } : {}),
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      state.calls.push({ tool: request.params.name, args, headers: (extra.requestInfo?.headers ?? {}) as IncomingHttpHeaders });
      const tool = tools.find((t) => t.name === request.params.name);
      if (!tool) return { content: [{ type: 'text' as const, text: 'Unknown tool.' }], isError: true };
      return tool.answer(args);
    });
    return server;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    state.requests.push(req.headers);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    if (options.requiredHeader && req.headers[options.requiredHeader.name.toLowerCase()] !== options.requiredHeader.value) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    if (state.mode === 'slow') await new Promise((resolve) => setTimeout(resolve, options.slowMs ?? 5_000));
    if (res.destroyed) return;
    if (state.mode === 'fail') {
      res
        .writeHead(500, { 'content-type': 'text/plain' })
        .end(`Error: connect ECONNREFUSED ${INTERNAL_HOST_IN_ERRORS}:5432\n    at TCPConnectWrap.afterConnect`);
      return;
    }
    const body = raw === '' ? undefined : (JSON.parse(raw) as { id?: unknown; method?: string; params?: Record<string, unknown> });
    if (body?.method === 'initialize') state.initializes += 1;
    if (state.mode === 'malformed' && body && (body.method === 'tools/list' || body.method === 'tools/call')) {
      const result = body.method === 'tools/list' ? { tools: [{ title: 'no name' }] } : { content: 'not a list' };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }));
      return;
    }
    if (state.mode === 'cut' && body?.method === 'tools/call') {
      // Performed, then the connection is cut before the answer: the client cannot know it was done.
      const params = body.params ?? {};
      state.calls.push({ tool: String(params.name), args: (params.arguments ?? {}) as Record<string, unknown>, headers: req.headers });
      req.socket.destroy();
      return;
    }
    if (options.sessions) {
      await handleStateful(req, res, body);
      return;
    }
    const server = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /** A stateful server's request: `initialize` opens a session; any other names one it knows, else `404`. */
  async function handleStateful(req: IncomingMessage, res: ServerResponse, body: { method?: string } | undefined): Promise<void> {
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const transport = sessions.get(id);
      if (!transport) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      if (req.method === 'DELETE') {
        sessions.delete(id);
        state.endedSessions += 1;
      }
      await transport.handleRequest(req, res, body);
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      enableJsonResponse: true,
      onsessioninitialized: (opened) => {
        sessions.set(opened, transport);
      },
    });
    await mcpServer().connect(transport);
    await transport.handleRequest(req, res, body);
  }

  const https: HttpsServer = createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  https.on('connection', (socket: import('node:net').Socket) => {
    if (refusing > 0) {
      refusing -= 1;
      socket.destroy();
      return;
    }
    state.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', () => resolve()));
  state.url = `https://127.0.0.1:${(https.address() as AddressInfo).port}/mcp`;
  return state;
}
