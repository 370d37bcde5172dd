/**
 * @module OpenAPI runtime expressions (`$response.body#/runId`, `$request.path.id`, `$response.header.Location`,
 * `$statusCode`, ...) evaluated against one finished step, for following `links`.
 */
import type { Case } from '../case.ts';
import { valueAtPointer } from '../contract/document.ts';
import type { Step } from '../checks/index.ts';

export function evaluate(expression: unknown, c: Case, step: Step): unknown {
  if (typeof expression !== 'string') return expression;
  if (!expression.startsWith('$')) {
    // Embedded expressions: "run-{$response.body#/id}".
    if (!expression.includes('{$')) return expression;
    return expression.replace(/\{(\$[^}]+)\}/g, (_m, inner: string) => String(evaluate(inner, c, step) ?? ''));
  }
  if (expression === '$statusCode') return step.response.status;
  if (expression === '$method') return step.request.method;
  if (expression === '$url') return step.request.path;
  const [source, rest] = splitOnce(expression, '.');
  if (source === '$response') {
    if (rest.startsWith('body')) return valueAtPointer(parseJson(step.response.text), rest.slice(4).replace(/^#/, ''));
    if (rest.startsWith('header.')) return step.response.headers[rest.slice(7).toLowerCase()];
  }
  if (source === '$request') {
    if (rest.startsWith('body')) return c.body && 'value' in c.body ? valueAtPointer(c.body.value, rest.slice(4).replace(/^#/, '')) : undefined;
    const [where, name] = splitOnce(rest, '.');
    if (where === 'path') return c.path[name];
    if (where === 'query') return c.query[name];
    if (where === 'header') return Object.entries(step.request.headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
  }
  return undefined;
}

function splitOnce(text: string, sep: string): [string, string] {
  const i = text.indexOf(sep);
  return i === -1 ? [text, ''] : [text.slice(0, i), text.slice(i + 1)];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
