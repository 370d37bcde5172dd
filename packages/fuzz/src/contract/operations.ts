/**
 * @module Operations of the contract: every method of every path, with parameters, body, responses,
 * security and links resolved once so phases and checks never walk the raw document again.
 */
import { deref, isObject, type JsonObject, type OpenApiDocument } from './document.ts';

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  style: string;
  explode: boolean;
  schema: unknown;
  /** Media type when the parameter uses `content` instead of `schema` (value is then JSON-serialized). */
  contentType?: string;
  examples: unknown[];
}

export interface MediaType {
  schema?: unknown;
  examples: unknown[];
  itemSchema?: unknown;
  /** SSE event name → schema of its `data` (JSON-parsed when it is JSON), from `x-sse-events` or the schema's `$defs`. */
  sseEvents?: Record<string, unknown>;
}

export interface ResponseHeader {
  name: string;
  required: boolean;
  schema?: unknown;
}

export interface Link {
  name: string;
  operationId?: string;
  operationRef?: string;
  parameters: Record<string, unknown>;
  requestBody?: unknown;
}

export interface ResponseDef {
  status: string;
  content: Record<string, MediaType>;
  headers: ResponseHeader[];
  links: Link[];
}

export type SecurityRequirement = Record<string, string[]>;

export interface Operation {
  /** `operationId`, or `METHOD path` when the contract has none. */
  id: string;
  method: HttpMethod;
  path: string;
  /** `GET /runs/{run_id}`: the label reports use, like Schemathesis's. */
  label: string;
  parameters: Parameter[];
  requestBody?: { required: boolean; content: Record<string, MediaType> };
  responses: Record<string, ResponseDef>;
  /** Alternatives: any one entry satisfies. An empty list means no authentication. */
  security: SecurityRequirement[];
}

/** Every operation of the document, in document order. */
export function listOperations(doc: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  const paths = isObject(doc.paths) ? doc.paths : {};
  const globalSecurity = Array.isArray(doc.security) ? (doc.security as SecurityRequirement[]) : [];
  for (const [path, rawItem] of Object.entries(paths)) {
    const item = deref<JsonObject>(doc, rawItem);
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      const parameters = mergeParameters(doc, shared, Array.isArray(op.parameters) ? op.parameters : []);
      const id = typeof op.operationId === 'string' ? op.operationId : `${method.toUpperCase()} ${path}`;
      operations.push({
        id,
        method,
        path,
        label: `${method.toUpperCase()} ${path}`,
        parameters,
        requestBody: readRequestBody(doc, op.requestBody),
        responses: readResponses(doc, op.responses),
        security: Array.isArray(op.security) ? (op.security as SecurityRequirement[]) : globalSecurity,
      });
    }
  }
  return operations;
}

/** Operation-level parameters override path-level ones with the same name and location. */
function mergeParameters(doc: OpenApiDocument, shared: unknown[], own: unknown[]): Parameter[] {
  const byKey = new Map<string, Parameter>();
  for (const raw of [...shared, ...own]) {
    const p = deref<JsonObject>(doc, raw);
    const location = p.in as Parameter['in'];
    const style = typeof p.style === 'string' ? p.style : defaultStyle(location);
    let schema: unknown = p.schema;
    let contentType: string | undefined;
    const examples = collectExamples(doc, p);
    if (schema === undefined && isObject(p.content)) {
      const [mt, media] = Object.entries(p.content)[0] ?? [];
      contentType = mt;
      if (isObject(media)) {
        schema = media.schema;
        examples.push(...collectExamples(doc, media));
      }
    }
    byKey.set(`${location}:${String(p.name).toLowerCase()}`, {
      name: String(p.name),
      in: location,
      required: location === 'path' ? true : p.required === true,
      style,
      explode: typeof p.explode === 'boolean' ? p.explode : style === 'form',
      schema: schema ?? {},
      contentType,
      examples,
    });
  }
  return [...byKey.values()];
}

function defaultStyle(location: Parameter['in']): string {
  return location === 'query' || location === 'cookie' ? 'form' : 'simple';
}

/** `example`, and the `value`s of `examples`, of a parameter or media type object. */
export function collectExamples(doc: OpenApiDocument, holder: JsonObject): unknown[] {
  const out: unknown[] = [];
  if (holder.example !== undefined) out.push(holder.example);
  if (isObject(holder.examples)) {
    for (const raw of Object.values(holder.examples)) {
      const ex = deref<JsonObject>(doc, raw);
      if (isObject(ex) && ex.value !== undefined) out.push(ex.value);
    }
  }
  return out;
}

function readMedia(doc: OpenApiDocument, content: unknown): Record<string, MediaType> {
  const out: Record<string, MediaType> = {};
  if (!isObject(content)) return out;
  for (const [type, raw] of Object.entries(content)) {
    const media = isObject(raw) ? raw : {};
    // Event schemas by event name: our `x-sse-events` on the media type, or `$defs` of the stream's schema.
    const sse = media['x-sse-events'];
    const defs = isObject(media.schema) ? (media.schema as JsonObject).$defs : undefined;
    const sseEvents = isObject(sse) ? sse : type === 'text/event-stream' && isObject(defs) ? defs : undefined;
    out[type] = {
      schema: media.schema,
      examples: collectExamples(doc, media),
      itemSchema: media.itemSchema,
      sseEvents: sseEvents as Record<string, unknown> | undefined,
    };
  }
  return out;
}

function readRequestBody(doc: OpenApiDocument, raw: unknown): Operation['requestBody'] {
  if (raw === undefined) return undefined;
  const body = deref<JsonObject>(doc, raw);
  return { required: body.required === true, content: readMedia(doc, body.content) };
}

function readResponses(doc: OpenApiDocument, raw: unknown): Record<string, ResponseDef> {
  const out: Record<string, ResponseDef> = {};
  if (!isObject(raw)) return out;
  for (const [status, value] of Object.entries(raw)) {
    const response = deref<JsonObject>(doc, value);
    const headers: ResponseHeader[] = [];
    if (isObject(response.headers)) {
      for (const [name, h] of Object.entries(response.headers)) {
        const header = deref<JsonObject>(doc, h);
        headers.push({ name, required: header.required === true, schema: header.schema });
      }
    }
    const links: Link[] = [];
    if (isObject(response.links)) {
      for (const [name, l] of Object.entries(response.links)) {
        const link = deref<JsonObject>(doc, l);
        links.push({
          name,
          operationId: typeof link.operationId === 'string' ? link.operationId : undefined,
          operationRef: typeof link.operationRef === 'string' ? link.operationRef : undefined,
          parameters: isObject(link.parameters) ? link.parameters : {},
          requestBody: link.requestBody,
        });
      }
    }
    out[status.toUpperCase()] = { status: status.toUpperCase(), content: readMedia(doc, response.content), headers, links };
  }
  return out;
}

/** The response definition that documents `status`: exact code, then `4XX`-style range, then `default`. */
export function responseFor(operation: Operation, status: number): ResponseDef | undefined {
  const r = operation.responses;
  return r[String(status)] ?? r[`${String(status)[0]}XX`] ?? r.DEFAULT;
}

/** Methods documented on a path (upper case), for `Allow` and `unsupported_method`. */
export function documentedMethods(operations: readonly Operation[], path: string): string[] {
  return operations.filter((o) => o.path === path).map((o) => o.method.toUpperCase());
}

/** The JSON media type of a content map, if any (`application/json`, `application/problem+json`, ...). */
export function jsonMediaType(content: Record<string, MediaType>): string | undefined {
  return Object.keys(content).find(isJsonMediaType);
}

export function isJsonMediaType(type: string): boolean {
  const t = type.split(';')[0]!.trim().toLowerCase();
  return t === 'application/json' || t.endsWith('+json') || t === '*/*';
}

/** A 2xx event stream with no closing event documented: it stays open, so each case waits for the idle timeout. */
export function streamsForever(operation: Operation): boolean {
  return Object.entries(operation.responses).some(([status, r]) => {
    const media = r.content['text/event-stream'];
    return status.startsWith('2') && media !== undefined && !['end', 'error', 'close', 'done'].some((e) => media.sseEvents && e in media.sseEvents);
  });
}
