/**
 * @module response_schema_conformance: a JSON body matches the schema of its status and media type; an event
 * stream's events each match the schema documented for their event name (`x-sse-events`, or OAS 3.2 `itemSchema`).
 */
import { isJsonMediaType, responseFor, type MediaType } from '../contract/operations.ts';
import { mediaType } from './content-type-conformance.ts';
import { snippet } from './not-a-server-error.ts';
import { parseSse } from './sse.ts';
import type { CheckContext, CheckFn } from './types.ts';

export const responseSchemaConformance: CheckFn = (ctx) => {
  const { operation, response } = ctx;
  if (ctx.case.method) return undefined; // an undocumented method: unsupported_method judges it
  const def = responseFor(operation, response.status);
  const actual = response.headers['content-type'];
  if (!def || !actual || ctx.request.method === 'HEAD') return undefined;
  const type = mediaType(actual);
  const media = def.content[type] ?? (isJsonMediaType(type) ? def.content['application/json'] : undefined);
  if (!media) return undefined; // content_type_conformance reports it
  if (type === 'text/event-stream') return checkStream(ctx, media);
  if (!isJsonMediaType(type) || media.schema === undefined) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(response.text);
  } catch {
    return `JSON deserialization error: the ${type} body is not valid JSON: ${snippet(JSON.stringify(response.text))}`;
  }
  const error = ctx.validator.errors(media.schema, body);
  return error ? `Response violates schema: ${error}` : undefined;
};

function checkStream(ctx: CheckContext, media: MediaType): string | undefined {
  const events = parseSse(ctx.response.text);
  const problems: string[] = [];
  if (media.sseEvents) {
    for (const [i, ev] of events.entries()) {
      const schema = media.sseEvents[ev.event];
      if (schema === undefined) {
        problems.push(`event #${i} has undocumented type "${ev.event}"`);
        continue;
      }
      // JSON data is judged parsed; data that is not JSON is judged as the string it is (an `endpoint` path).
      let error: string | undefined;
      try {
        error = ctx.validator.errors(schema, JSON.parse(ev.data));
        if (error && !ctx.validator.errors(schema, ev.data)) error = undefined;
      } catch {
        error = ctx.validator.errors(schema, ev.data);
        if (error) error = `data is not JSON and not a valid string (${error}): ${snippet(JSON.stringify(ev.data), 80)}`;
      }
      if (error) problems.push(`event #${i} (${ev.event}): ${error}`);
    }
    // A stream documented with a closing event must not end silently (unless we stopped reading it).
    const closers = ['end', 'error'].filter((name) => name in media.sseEvents!);
    if (!ctx.response.truncated && closers.length > 0 && !events.some((e) => closers.includes(e.event))) {
      problems.push(`stream ended without a closing event (${closers.join(' or ')})`);
    }
  } else if (media.itemSchema !== undefined) {
    for (const [i, ev] of events.entries()) {
      const error = ctx.validator.errors(media.itemSchema, { event: ev.event, data: ev.data, ...(ev.id ? { id: ev.id } : {}) });
      if (error) problems.push(`event #${i}: ${error}`);
    }
  }
  return problems.length > 0 ? `Stream events violate their schemas: ${problems.slice(0, 5).join('; ')}` : undefined;
}
