/**
 * @module createMcpToken: exchanges an API key holding `mcp:tenant` for a short-lived MCP token.
 */
import { DEFAULT_MCP_TOKEN_SECONDS } from '../domain/mcp-tokens/index.ts';
import { keepUnredacted } from '../middleware/redact/index.ts';
import { auditOf, authOf, type Handler, type Handlers } from './handler.ts';

const createMcpToken: Handler<'createMcpToken'> = async (c, { body }, services) => {
  const key = authOf(c, 'apiKey');
  const issued = await services.mcpTokens.issue(key, body?.expiresInSeconds ?? DEFAULT_MCP_TOKEN_SECONDS, auditOf(c, services));
  // Shown this once; the redactor would otherwise take it for a leaked token.
  keepUnredacted(c, issued.token);
  return { status: 201, body: issued };
};

export const mcpTokenHandlers = { createMcpToken } satisfies Partial<Handlers>;
