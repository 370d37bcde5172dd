import { describe, expect, it } from 'vitest';
import type { Case } from '../case.ts';
import { parseSse } from '../checks/sse.ts';
import { loadDocument } from '../contract/document.ts';
import { listOperations } from '../contract/operations.ts';
import { createValidator } from '../schema/validator.ts';
import { coverageCases, unsupportedMethodCases } from './coverage.ts';
import { exampleCases } from './examples.ts';
import { isValidCase, positiveCases, type Generator } from './generate.ts';
import { evaluate } from './link-expressions.ts';

const doc = loadDocument(new URL('../../test/fixtures/mini.openapi.json', import.meta.url).pathname);
const operations = listOperations(doc);
const op = (id: string) => operations.find((o) => o.id === id)!;
const g: Generator = { doc, validator: createValidator(doc), parameters: { slug: 'crm-leads' } };

describe('positiveCases', () => {
  it('gives only cases that validate, deterministically, with known values in about half', () => {
    const a = positiveCases(op('ingestInboundEvent'), 100, 3, g);
    expect(a.length).toBeGreaterThan(80);
    expect(a.every((c) => isValidCase(c, g))).toBe(true);
    expect(positiveCases(op('ingestInboundEvent'), 100, 3, g)).toEqual(a);
    const known = a.filter((c) => c.path.slug === 'crm-leads').length;
    expect(known).toBeGreaterThan(20);
    expect(known).toBeLessThan(80);
  });
});

describe('exampleCases', () => {
  it('sends every body and parameter example', () => {
    const base = positiveCases(op('createInference'), 5, 1, g)[0]!;
    const { cases, invalid } = exampleCases(op('createInference'), base, g);
    expect(invalid).toEqual([]);
    // The media example and the schema's own example.
    expect(cases.map((c) => (c.body as { value: { alias: string } }).value.alias).sort()).toEqual(['Prelude', 'Sonata']);
    const runs = exampleCases(op('listRuns'), positiveCases(op('listRuns'), 5, 1, g)[0], g);
    expect(runs.cases.map((c) => c.query.limit)).toEqual([10]);
  });
});

describe('coverageCases', () => {
  const base = positiveCases(op('createApiKey'), 5, 1, g, 'coverage', 1)[0]!;
  const cases = coverageCases(op('createApiKey'), base, g);
  const described = (text: string) => cases.filter((c) => c.description.includes(text));

  it('probes credentials, a removed required header, boundaries and past them', () => {
    expect(described('without credentials')).toHaveLength(1);
    expect(described('invalid credentials')).toHaveLength(1);
    const missing = described('Missing required header parameter X-CSRF-Token');
    expect(missing).toHaveLength(1);
    expect(missing[0]!.missingHeader).toBe('X-CSRF-Token');
    expect(missing[0]!.headers['X-CSRF-Token']).toBeUndefined();
    const name = (c: Case) => (c.body as { value: { name: string } }).value.name;
    expect(
      described('body /name at boundary')
        .map((c) => name(c).length)
        .sort((a, b) => a - b),
    ).toEqual([1, 100]);
    expect(described('longer than maxLength 100').map((c) => name(c).length)).toEqual([101]);
    expect(described('required property "scopes" removed')).toHaveLength(1);
    expect(described('outside enum').length).toBeGreaterThan(0);
    expect(described('body is not JSON').length).toBeGreaterThan(0);
    expect(described('required body missing')).toHaveLength(1);
  });

  it('marks valid ones positive and invalid ones negative, as Ajv sees them', () => {
    for (const c of cases) {
      if (c.kind === 'positive') expect(isValidCase(c, g)).toBe(true);
      else if (!c.withoutAuth && !c.missingHeader) expect([c.description, isValidCase(c, g)]).toEqual([c.description, false]);
    }
  });

  it('sends each undocumented method once per path', () => {
    const methods = unsupportedMethodCases(operations, base).map((c) => c.method);
    expect(methods.sort()).toEqual(['DELETE', 'GET', 'PATCH', 'PUT']);
  });
});

describe('link expressions', () => {
  const c = { ...positiveCases(op('createInference'), 1, 1, g)[0]!, path: { id: 'p1' }, query: { q: 'v' } };
  const step = {
    operation: op('createInference'),
    request: { method: 'POST', path: '/v1/inference', headers: { 'X-Trace': 't1' } },
    response: {
      status: 201,
      statusText: '',
      headers: { location: '/runs/run_1' },
      body: new Uint8Array(),
      text: '{"runId":"run_1","usage":{"inputTokens":3}}',
      elapsedMs: 1,
      truncated: false,
    },
  };
  it.each([
    ['$response.body#/runId', 'run_1'],
    ['$response.body#/usage/inputTokens', 3],
    ['$response.header.Location', '/runs/run_1'],
    ['$request.path.id', 'p1'],
    ['$request.query.q', 'v'],
    ['$request.header.x-trace', 't1'],
    ['$statusCode', 201],
    ['$method', 'POST'],
    ['run-{$response.body#/runId}', 'run-run_1'],
    ['constant', 'constant'],
    [42, 42],
  ])('%s', (expression, want) => {
    expect(evaluate(expression, c, step)).toEqual(want);
  });
});

describe('parseSse', () => {
  it('reads events, names, multi-line data, ids and comments', () => {
    expect(parseSse(': ping\n\ndata: {"delta":"a"}\n\nevent: end\nid: 7\ndata: {"done":\ndata: true}\n\n')).toEqual([
      { event: 'message', data: '{"delta":"a"}', id: undefined },
      { event: 'end', data: '{"done":\ntrue}', id: '7' },
    ]);
    expect(parseSse('data: x\r\n\r\n')).toEqual([{ event: 'message', data: 'x', id: undefined }]);
  });
});
