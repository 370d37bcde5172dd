/**
 * Compiled by `pnpm lint` (tsc), never run: each `@ts-expect-error` below is a handler the contract
 * does not allow, and tsc fails if one of them ever compiles (the directive is then unused).
 */
import type { Handler, Handlers } from '../../packages/server/src/routes/handler.ts';

declare const run: { run: never; steps: []; toolCalls: [] };

// The documented answer of getRun: 200 with a RunDetail.
export const documented: Handler<'getRun'> = async () => ({ status: 200, body: run });

// @ts-expect-error getRun documents no 201.
export const undocumentedStatus: Handler<'getRun'> = async () => ({ status: 201, body: run });

// @ts-expect-error the body of getRun's 200 is a RunDetail, not a run list.
export const undocumentedBody: Handler<'getRun'> = async () => ({ status: 200, body: { data: [], total: 0, limit: 20, offset: 0 } });

// @ts-expect-error logout answers 204 with no content.
export const bodyOnEmpty: Handler<'logout'> = async () => ({ status: 204, body: {} });

// @ts-expect-error listAgents answers JSON, not a stream.
export const streamWhereJson: Handler<'listAgents'> = async () => ({ status: 200, stream: new Response() });

// The input is typed by the operation: getRun's path has run_id, and no body.
export const typedInput: Handler<'getRun'> = async (_c, input) => {
  const id: string = input.params.run_id;
  // @ts-expect-error getRun has no `slug` path parameter.
  void input.params.slug;
  void id;
  return { status: 200, body: run };
};

// @ts-expect-error a handler table without every operation (here: none) does not compile.
export const incomplete: Handlers = {};

// @ts-expect-error a misspelt operationId is not a key of the table.
export const misspelt: Partial<Handlers> = { getRunn: documented };
