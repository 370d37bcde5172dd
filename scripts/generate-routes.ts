/**
 * @module Step 4 of `pnpm generate`: generated/routes.ts, the route table the server mounts. One entry per
 * operation of `paths` (not `webhooks`): method, path in OpenAPI form, operationId, security alternatives and
 * the zod schema of each request part and each response, imported from ./zod.ts. Also the outbound event
 * types with their payload and delivery-header schemas (`webhookEvents`).
 */
import { type Json, componentName, deref, operationsOf, pascal, tsHeader, writeGenerated } from './generate-common.ts';

const SCRIPT = 'generate-routes.ts';

export async function generateRoutes(doc: Json, zodSource: string): Promise<void> {
  const exported = new Set([...zodSource.matchAll(/^export const (z\w+) = /gm)].map((match) => match[1]!));
  const used = new Set<string>();

  /** A schema export of zod.ts, checked to exist so that a renamed component fails here, not in tsc. */
  const zodName = (name: string, why: string): string => {
    if (!exported.has(name)) throw new Error(`routes: ${why} needs ${name}, which generated/zod.ts does not export`);
    used.add(name);
    return name;
  };

  /** The zod expression of a response or event schema: a component, a union of components, or plain text. */
  const schemaExpression = (schema: Json, why: string): string => {
    const name = componentName(schema?.$ref);
    if (name) return zodName(`z${pascal(name)}`, why);
    const alternatives = schema?.oneOf ?? schema?.anyOf;
    if (Array.isArray(alternatives) && alternatives.every((item: Json) => componentName(item?.$ref))) {
      return `z.union([${alternatives.map((item: Json) => schemaExpression(item, why)).join(', ')}])`;
    }
    if (schema?.type === 'string' && Object.keys(schema).every((key) => ['type', 'description', '$defs'].includes(key))) {
      return 'z.string()';
    }
    throw new Error(`routes: ${why} has an inline schema; make it a component so that zod.ts names it`);
  };

  /** The TypeScript type of what a response schema accepts: `z.input` of the same zod schemas. */
  const typeExpression = (schema: Json, why: string): string => {
    const name = componentName(schema?.$ref);
    if (name) return `z.input<typeof ${zodName(`z${pascal(name)}`, why)}>`;
    const alternatives = schema?.oneOf ?? schema?.anyOf;
    if (Array.isArray(alternatives)) return alternatives.map((item: Json) => typeExpression(item, why)).join(' | ');
    return 'string';
  };

  const schemes = Object.keys(doc.components?.securitySchemes ?? {});
  const methods = new Set<string>();
  const operationIds: string[] = [];
  const entries: string[] = [];
  const operationTypes: string[] = [];

  for (const { path, method, operation } of operationsOf(doc)) {
    const id: string = operation.operationId;
    if (!id) throw new Error(`routes: ${method.toUpperCase()} ${path} has no operationId`);
    methods.add(method);
    operationIds.push(id);
    const op = pascal(id);
    const where = `${id} (${method.toUpperCase()} ${path})`;

    const security = (operation.security ?? doc.security ?? []).map((requirement: Json) => {
      const names = Object.keys(requirement);
      if (names.length !== 1) {
        throw new Error(`routes: ${where} has a security requirement with ${names.length} schemes; RouteSpec allows exactly one per alternative`);
      }
      const scheme = names[0]!;
      if (!schemes.includes(scheme)) throw new Error(`routes: ${where} uses unknown security scheme ${scheme}`);
      return `{ scheme: ${q(scheme)}, scopes: [${(requirement[scheme] as string[]).map(q).join(', ')}] }`;
    });

    const parameters = [...(operation.parameters ?? [])].map((parameter: Json) => deref(doc, parameter));
    const request: string[] = [];
    const inputTypes: string[] = [];
    const parts = [
      ['params', 'path', 'Path'],
      ['query', 'query', 'Query'],
      ['headers', 'header', 'Headers'],
    ] as const;
    for (const [key, location, suffix] of parts) {
      if (parameters.some((parameter) => parameter.in === location)) {
        const schema = zodName(`z${op}${suffix}`, `${where} ${location} parameters`);
        request.push(`${key}: ${schema}`);
        inputTypes.push(`${key}: z.output<typeof ${schema}>`);
      } else {
        inputTypes.push(`${key}: Record<string, never>`);
      }
    }
    if (operation.requestBody) {
      const body = deref(doc, operation.requestBody);
      const types = Object.keys(body.content ?? {});
      if (types.length !== 1) throw new Error(`routes: ${where} has ${types.length} body media types; RouteSpec holds one`);
      // The cap of the body in bytes: the request body's `x-body-limit`, or the contract's default.
      const maxBytes = body['x-body-limit'] ?? DEFAULT_BODY_LIMIT;
      if (!Number.isInteger(maxBytes) || maxBytes < 1) throw new Error(`routes: ${where} x-body-limit must be a positive integer`);
      request.push(
        `body: { contentType: ${q(types[0]!)}, schema: ${zodName(`z${op}Body`, `${where} body`)}, required: ${body.required === true}, maxBytes: ${maxBytes} }`,
      );
      // An optional body that was not sent stays undefined.
      inputTypes.push(`body: z.output<typeof z${op}Body>${body.required === true ? '' : ' | undefined'}`);
    } else {
      inputTypes.push('body: undefined');
    }
    const successTypes: string[] = [];

    const responses: string[] = [];
    for (const [status, rawResponse] of Object.entries<Json>(operation.responses ?? {})) {
      const response = deref(doc, rawResponse);
      const content = Object.entries<Json>(response.content ?? {});
      const ordered = [...content.filter(([type]) => type === 'application/json'), ...content.filter(([type]) => type !== 'application/json')];
      const describe = ([type, media]: [string, Json]): string => {
        const fields = [`contentType: ${q(type)}`, `schema: ${schemaExpression(media.schema, `${where} response ${status} ${type}`)}`];
        const customer = type === 'application/json' ? customerDataPaths(doc, media.schema) : [];
        if (customer.length) fields.push(`customerData: [${customer.map(q).join(', ')}]`);
        // A text/event-stream schema lists the JSON of each SSE event under `$defs`, by event name.
        const events = type === 'text/event-stream' ? media.schema?.$defs : undefined;
        if (events) {
          const list = Object.entries<Json>(events).map(([event, schema]) => `${q(event)}: ${schemaExpression(schema, `${where} SSE event ${event}`)}`);
          fields.push(`events: { ${list.join(', ')} }`);
        }
        return fields.join(', ');
      };
      if (/^2\d\d$/.test(status)) {
        // What a handler may answer: JSON of the documented schema, a stream, or nothing.
        const forms = content.map(([type, media]) =>
          type === 'application/json'
            ? `json: ${typeExpression(media.schema, `${where} response ${status}`)}`
            : type === 'text/event-stream'
              ? 'stream: true'
              : fail(`routes: ${where} response ${status} has media type ${type}; handlers answer JSON or SSE`),
        );
        successTypes.push(`${status}: { ${forms.length ? forms.join('; ') : 'empty: true'} }`);
      }
      const [primary, ...others] = ordered;
      const fields = primary ? [describe(primary)] : [];
      if (others.length) fields.push(`alternatives: [${others.map((entry) => `{ ${describe(entry)} }`).join(', ')}]`);
      responses.push(`${q(status)}: { ${fields.join(', ')} }`);
    }

    // Per-operation policy, each an `x-` extension of the operation (true or absent).
    const policy = POLICY_EXTENSIONS.map(([extension, field]) => {
      const value = operation[extension] ?? false;
      if (typeof value !== 'boolean') throw new Error(`routes: ${where} ${extension} must be true or absent`);
      return `${field}: ${value}`;
    });
    // The per-IP budget the operation counts against (x-ip-limit-class); absent: the API's. Health and
    // inbound routes are outside every per-IP budget, so they name none.
    const ipLimitClass = operation['x-ip-limit-class'] ?? 'api';
    if (!IP_LIMIT_CLASSES.includes(ipLimitClass)) throw new Error(`routes: ${where} x-ip-limit-class must be one of ${IP_LIMIT_CLASSES.join(', ')}`);
    if (operation['x-ip-limit-class'] !== undefined && (operation['x-operations'] === true || operation['x-inbound-webhook'] === true)) {
      throw new Error(`routes: ${where} is outside the per-IP budgets (x-operations, x-inbound-webhook): no x-ip-limit-class`);
    }
    policy.push(`ipLimitClass: ${q(ipLimitClass)}`);

    const signed = security.some((line: string) => line.includes("'inboundSignature'"));
    if (signed !== (operation['x-inbound-webhook'] === true)) {
      throw new Error(`routes: ${where} must have both the inboundSignature scheme and x-inbound-webhook, or neither`);
    }

    operationTypes.push([`  ${id}: {`, `    input: { ${inputTypes.join('; ')} };`, `    success: { ${successTypes.join('; ')} };`, '  };'].join('\n'));
    entries.push(
      [
        '  {',
        `    method: ${q(method)},`,
        `    path: ${q(path)},`,
        `    operationId: ${q(id)},`,
        `    security: [${security.join(', ')}],`,
        `    policy: { ${policy.join(', ')} },`,
        `    request: { ${request.join(', ')} },`,
        '    responses: {',
        ...responses.map((line) => `      ${line},`),
        '    },',
        '  },',
      ].join('\n'),
    );
  }

  const events: string[] = [];
  for (const [type, rawItem] of Object.entries<Json>(doc.webhooks ?? {})) {
    const operation = deref(doc, rawItem).post;
    if (!operation?.operationId) throw new Error(`routes: webhook ${type} has no POST operation with an operationId`);
    const body = deref(doc, operation.requestBody);
    const payload = schemaExpression(body?.content?.['application/json']?.schema, `webhook ${type} payload`);
    const request = zodName(`z${pascal(operation.operationId)}WebhookRequest`, `webhook ${type} headers`);
    events.push(`  { type: ${q(type)}, operationId: ${q(operation.operationId)}, payload: ${payload}, headers: ${request}.shape.headers },`);
  }

  const methodOrder = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace'];
  const methodUnion = methodOrder
    .filter((method) => methods.has(method))
    .map(q)
    .join(' | ');
  const imports = [...used].sort();
  const source = [
    tsHeader(SCRIPT, 'generated/openapi.json, naming the schemas of generated/zod.ts'),
    "/** @module The contract's route table and outbound event types, for mounting routes and checking coverage. */",
    "import * as z from 'zod';",
    "import type { ZodType } from 'zod';",
    'import {',
    ...imports.map((name) => `  ${name},`),
    "} from './zod.ts';",
    '',
    `export type SecurityScheme = ${schemes.map(q).join(' | ')};`,
    '',
    '/** One way to authenticate; an operation lists alternatives and any one of them is enough. */',
    'export type SecurityRequirement = { scheme: SecurityScheme; scopes: string[] };',
    '',
    '/**',
    ' * A response of one status. `contentType` and `schema` describe the main media type (JSON when offered);',
    ' * `events` maps Server-Sent Event names to the schema of their `data`; `alternatives` lists other media',
    ' * types of the same status (the `text/event-stream` form of an invocation).',
    ' */',
    'export type ResponseSpec = {',
    '  contentType?: string;',
    '  schema?: ZodType;',
    '  events?: Record<string, ZodType>;',
    '  alternatives?: { contentType: string; schema: ZodType; events?: Record<string, ZodType> }[];',
    '  /** Where the JSON body holds text the customer wrote (`x-customer-data`): dotted paths, `*` for every item. */',
    '  customerData?: string[];',
    '};',
    '',
    '/** Header schemas use lowercase names, as Fetch `Headers` and Hono present them. */',
    'export type RouteSpec = {',
    `  method: ${methodUnion};`,
    '  /** OpenAPI form, e.g. /runs/{run_id} */',
    '  path: string;',
    '  operationId: string;',
    '  /** Alternatives: any one entry satisfies. Empty: no credential (login). */',
    '  security: SecurityRequirement[];',
    '  /**',
    "   * From the operation's `x-` extensions: `privateBeta` (x-private-beta) reads as absent, 404, while the",
    '   * deployment is in private beta; `agentTargeted` (x-agent-targeted) takes a target agent, so a key bound',
    '   * to that agent may call it; `anyRole` (x-any-role) is open to every signed-in role; `inboundWebhook`',
    '   * (x-inbound-webhook) is a signed inbound event route (its unparsable body is `payload_invalid`);',
    '   * `standingExempt` (x-standing-exempt) is a session write still allowed in a workspace that is suspended',
    '   * or whose payment is pending (every other session write answers 403 tenant_forbidden / 402 payment_not_completed);',
    "   * `ipLimitClass` (x-ip-limit-class, 'api' when absent) is the per-IP budget the operation counts against.",
    '   */',
    `  policy: { privateBeta: boolean; agentTargeted: boolean; anyRole: boolean; inboundWebhook: boolean; operations: boolean; standingExempt: boolean; ipLimitClass: ${IP_LIMIT_CLASSES.map(q).join(' | ')} };`,
    '  request: {',
    '    params?: ZodType;',
    '    query?: ZodType;',
    '    headers?: ZodType;',
    '    /** maxBytes: the body cap (x-body-limit; 64 KiB by default); 413 payload_too_large above it. */',
    '    body?: { contentType: string; schema: ZodType; required: boolean; maxBytes: number };',
    '  };',
    '  /** By status code as written in the contract ("200", "429", ...). */',
    '  responses: Record<string, ResponseSpec>;',
    '};',
    '',
    `export type OperationId =\n${operationIds.map((id) => `  | ${q(id)}`).join('\n')};`,
    '',
    '/**',
    " * Per operation, the types the server's handlers are written against: `input` is each request part",
    ' * after validation (zod output: defaults applied; a part the operation does not have is empty), and',
    ' * `success` lists each documented 2xx status with what may be answered (`json` body, an SSE `stream`,',
    " * or `empty`). Error statuses are not here: handlers throw the spec's error codes instead.",
    ' */',
    'export interface Operations {',
    ...operationTypes,
    '}',
    '',
    'export const routes: readonly RouteSpec[] = [',
    ...entries,
    '];',
    '',
    '/** An outbound event type: the JSON body the service POSTs and the delivery headers (lowercase names). */',
    'export type WebhookEventSpec = { type: string; operationId: string; payload: ZodType; headers: ZodType };',
    '',
    'export const webhookEvents: readonly WebhookEventSpec[] = [',
    ...events,
    '];',
  ].filter((line) => line !== undefined);
  await writeGenerated('routes.ts', source.join('\n'));
}

/**
 * The paths of a JSON schema whose value is text the customer wrote (`x-customer-data: true` on the
 * schema or the property): `name`, `data.*.pausedReason`, `workspaces.*.name`. The redactor leaves them
 * as they are. Follows `$ref`, `allOf`/`oneOf`/`anyOf`, `properties` and `items`; a cycle ends the walk.
 */
function customerDataPaths(doc: Json, schema: Json): string[] {
  const found = new Set<string>();
  const walk = (node: Json, path: string[], refs: ReadonlySet<string>): void => {
    if (!node || typeof node !== 'object') return;
    if (node['x-customer-data'] === true) {
      found.add(path.join('.'));
      return;
    }
    if (typeof node.$ref === 'string') {
      if (refs.has(node.$ref)) return;
      walk(deref(doc, { $ref: node.$ref }), path, new Set([...refs, node.$ref]));
    }
    for (const key of ['allOf', 'oneOf', 'anyOf']) for (const part of node[key] ?? []) walk(part, path, refs);
    for (const [name, property] of Object.entries<Json>(node.properties ?? {})) walk(property, [...path, name], refs);
    if (node.items) walk(node.items, [...path, '*'], refs);
  };
  walk(schema, [], new Set());
  for (const path of found) if (path === '') throw new Error('routes: a whole response body cannot be x-customer-data');
  return [...found].sort();
}

/** The operation extensions that carry policy, and their field in `RouteSpec.policy`. */
const POLICY_EXTENSIONS = [
  ['x-private-beta', 'privateBeta'],
  ['x-agent-targeted', 'agentTargeted'],
  ['x-any-role', 'anyRole'],
  ['x-inbound-webhook', 'inboundWebhook'],
  ['x-operations', 'operations'],
  ['x-standing-exempt', 'standingExempt'],
] as const;

/** The values of `x-ip-limit-class`: the per-IP budgets of the overview's Limits ('api' is the default). */
const IP_LIMIT_CLASSES: readonly string[] = ['api', 'admin', 'mcp', 'operator'];

/** The body cap of an operation whose request body sets no `x-body-limit` (documented in the overview). */
const DEFAULT_BODY_LIMIT = 64 * 1024;

function fail(message: string): never {
  throw new Error(message);
}

/** A single-quoted TypeScript string literal. */
function q(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
