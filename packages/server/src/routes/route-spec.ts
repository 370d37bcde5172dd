/**
 * @module The shape of one contract route, as generated/routes.ts describes it.
 */
import type { ZodType } from 'zod';

export type SecurityScheme = 'apiKey' | 'adminSession' | 'mcpToken' | 'inboundSignature';

export interface SecurityRequirement {
  scheme: SecurityScheme;
  scopes: string[];
}

export interface RouteSpec {
  method: 'get' | 'post' | 'delete';
  /** OpenAPI form, e.g. `/runs/{run_id}`. */
  path: string;
  operationId: string;
  /** Alternatives: any one entry satisfies. Empty: no authentication. */
  security: readonly SecurityRequirement[];
  request: {
    params?: ZodType;
    query?: ZodType;
    headers?: ZodType;
    body?: { contentType: string; schema: ZodType; required: boolean };
  };
  responses: Record<string, { contentType?: string; schema?: ZodType }>;
}
