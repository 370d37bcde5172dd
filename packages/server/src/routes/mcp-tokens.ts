/**
 * @module createMcpToken: exchanges an API key holding `mcp:tenant` for a short-lived MCP token.
 */
import { DEFAULT_MCP_TOKEN_SECONDS } from '../domain/mcp-tokens/index.ts';
import { keepUnredacted } from '../middleware/redact/index.ts';
import type { OperationHandler } from './handler.ts';
import { authOf } from './handler.ts';

const createMcpToken: OperationHandler = async (c, { mcpTokens }) => {
  const key = authOf(c, 'apiKey');
  const body = c.get('valid').body as { expiresInSeconds?: number } | undefined;
  const issued = await mcpTokens.issue(key, body?.expiresInSeconds ?? DEFAULT_MCP_TOKEN_SECONDS);
  // Shown this once; the redactor would otherwise take it for a leaked token.
  keepUnredacted(c, issued.token);
  return c.json(issued, 201);
};

export const mcpTokenHandlers = { createMcpToken } satisfies Record<string, OperationHandler>;
