/**
 * @module `pnpm check:breaking`: each rule of scripts/breaking/rules.ts on small inline documents (the exact
 * list of findings, so that a missing, extra or misplaced finding fails), the release and changelog helpers,
 * and the script itself as CI runs it: the current contract against the committed release, contracts broken
 * on purpose (a removed Run field, a narrowed enum) and a new major declared in a changelog copy.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareContracts, formatFinding, type Finding } from '../scripts/breaking/rules.ts';
import { changelogVersions, declaredMajor, latestRelease, parseVersion } from '../scripts/breaking/releases.ts';

type Json = any;
const ROOT = new URL('..', import.meta.url).pathname;

const doc = (paths: Json, schemas: Json = {}, extra: Json = {}): Json => ({
  openapi: '3.1.0',
  info: { title: 'test', version: '1.0.0' },
  paths,
  components: { schemas, ...extra.components },
  ...(extra.webhooks ? { webhooks: extra.webhooks } : {}),
});
const json = (schema: Json) => ({ 'application/json': { schema } });
/** `GET /things` answering `schema`. */
const returns = (schema: Json): Json => ({ '/things': { get: { responses: { '200': { description: 'ok', content: json(schema) } } } } });
/** `POST /things` taking `schema` as its body. */
const accepts = (schema: Json): Json => ({
  '/things': { post: { requestBody: { required: true, content: json(schema) }, responses: { '204': { description: 'done' } } } },
});
const object = (properties: Json, required: string[] = []) => ({ type: 'object', properties, required });
const string = { type: 'string' };
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const finding = (rule: Finding['rule'], operation: string, where: string, message: string, pointer: string): Finding => ({
  rule,
  operation,
  where,
  message,
  pointer,
});
const BODY = '#/paths/~1things/post/requestBody/content/application~1json/schema';

describe('rules on small documents', () => {
  it('finds nothing between identical documents', () => {
    const contract = doc(returns(ref('Thing')), { Thing: object({ id: string, kind: { enum: ['a', 'b'] } }, ['id']) });
    expect(compareContracts(contract, structuredClone(contract))).toEqual([]);
  });

  it('operation-removed: a removed method and a removed webhook; a renamed path parameter is the same path', () => {
    const ok = { '204': { description: 'done' } };
    const base = doc(
      {
        '/things': { get: { responses: ok }, post: { operationId: 'createThing', responses: ok } },
        '/things/{id}': { delete: { parameters: [{ name: 'id', in: 'path', required: true, schema: string }], responses: ok } },
      },
      {},
      { webhooks: { ping: { post: { responses: ok } } } },
    );
    const head = doc({
      '/things': { get: { responses: ok } },
      '/things/{key}': { delete: { parameters: [{ name: 'key', in: 'path', required: true, schema: string }], responses: ok } },
    });
    expect(compareContracts(base, head)).toEqual([
      finding('operation-removed', 'POST /things', '', 'operation removed (operationId createThing)', '#/paths/~1things/post'),
      finding(
        'parameter-required',
        'DELETE /things/{id}',
        'parameter path key',
        'a new required parameter',
        '#/paths/~1things~1{key}/delete/parameters/0/required',
      ),
      finding('operation-removed', 'webhook ping (POST)', '', 'webhook removed', '#/webhooks/ping/post'),
    ]);
  });

  it('response-field-removed: through $ref and array items, a rename named by the field that appeared', () => {
    const list = object({ items: { type: 'array', items: ref('Thing') } });
    const base = doc(returns(list), {
      Thing: object({ id: string, name: string, tags: { type: 'array', items: ref('Tag') } }),
      Tag: object({ label: string, color: string }),
    });
    const head = doc(returns(list), {
      Thing: object({ id: string, tags: { type: 'array', items: ref('Tag') } }),
      Tag: object({ label: string, colour: string }),
    });
    expect(compareContracts(base, head)).toEqual([
      finding(
        'response-field-removed',
        'GET /things',
        'response 200 application/json body.items[].name',
        'response field "name" removed or renamed',
        '#/components/schemas/Thing/properties/name',
      ),
      finding(
        'response-field-removed',
        'GET /things',
        'response 200 application/json body.items[].tags[].color',
        'response field "color" removed or renamed (new beside it: colour)',
        '#/components/schemas/Tag/properties/color',
      ),
    ]);
  });

  it('response-field-removed: through allOf members, oneOf members (paired by $ref, in any order) and map values', () => {
    const schemas = (envelope: Json, a: Json, b: Json, c: Json): Json => ({
      Event: { allOf: [ref('Envelope'), object({ data: { oneOf: [ref('A'), ref('B')] }, extra: { type: 'object', additionalProperties: ref('C') } })] },
      Envelope: envelope,
      A: a,
      B: b,
      C: c,
    });
    const base = doc(
      returns(ref('Event')),
      schemas(object({ id: string, type: string }), object({ a1: string, a2: string }), object({ b1: string, b2: string }), object({ c1: string })),
    );
    const head = doc(returns(ref('Event')), schemas(object({ id: string }), object({ a1: string }), object({ b1: string }), object({})));
    head.components.schemas.Event.allOf[1].properties.data.oneOf.reverse();
    expect(compareContracts(base, head)).toEqual([
      finding(
        'response-field-removed',
        'GET /things',
        'response 200 application/json body.type',
        'response field "type" removed or renamed',
        '#/components/schemas/Envelope/properties/type',
      ),
      finding(
        'response-field-removed',
        'GET /things',
        'response 200 application/json body.data<A>.a2',
        'response field "a2" removed or renamed',
        '#/components/schemas/A/properties/a2',
      ),
      finding(
        'response-field-removed',
        'GET /things',
        'response 200 application/json body.data<B>.b2',
        'response field "b2" removed or renamed',
        '#/components/schemas/B/properties/b2',
      ),
      finding(
        'response-field-removed',
        'GET /things',
        'response 200 application/json body.extra{*}.c1',
        'response field "c1" removed or renamed',
        '#/components/schemas/C/properties/c1',
      ),
    ]);
  });

  it('response-field-removed: a webhook payload is what the service sends, so it follows the response rules (its parameters and responses are not compared)', () => {
    const hook = (schema: Json, answer: Json, parameters: Json[] = []) => ({
      'thing.created': {
        post: { parameters, requestBody: { required: true, content: json(schema) }, responses: { '200': { description: 'ok', content: json(answer) } } },
      },
    });
    const base = doc({}, {}, { webhooks: hook(object({ id: string, data: object({ name: string }) }, ['id']), object({ received: string }, ['received'])) });
    const head = doc(
      {},
      {},
      { webhooks: hook(object({ id: string, data: object({}) }), object({}), [{ name: 'X-Signature', in: 'header', required: true, schema: string }]) },
    );
    expect(compareContracts(base, head)).toEqual([
      finding(
        'response-field-optional',
        'webhook thing.created (POST)',
        'payload application/json body.id',
        'response field "id" is no longer required',
        '#/webhooks/thing.created/post/requestBody/content/application~1json/schema/properties/id',
      ),
      finding(
        'response-field-removed',
        'webhook thing.created (POST)',
        'payload application/json body.data.name',
        'response field "name" removed or renamed',
        '#/webhooks/thing.created/post/requestBody/content/application~1json/schema/properties/data/properties/name',
      ),
    ]);
  });

  it('response-field-removed: in the payloads an event stream names in $defs', () => {
    const stream = (end: Json): Json => ({
      '/things': { get: { responses: { '200': { description: 'events', content: { 'text/event-stream': { schema: { type: 'string', $defs: { end } } } } } } } },
    });
    expect(compareContracts(doc(stream(object({ done: string, runId: string }))), doc(stream(object({ done: string }))))).toEqual([
      finding(
        'response-field-removed',
        'GET /things',
        'response 200 text/event-stream body<$defs/end>.runId',
        'response field "runId" removed or renamed',
        '#/paths/~1things/get/responses/200/content/text~1event-stream/schema/$defs/end/properties/runId',
      ),
    ]);
  });

  it('response-field-removed: a response that became one of several alternatives keeps its fields when one alternative is the schema it was', () => {
    const schemas = {
      Scope: object({ error: { enum: ['scope_required'] }, message: string }, ['error', 'message']),
      Tenant: object({ error: { enum: ['tenant_forbidden'] } }, ['error']),
    };
    const base = doc(returns(ref('Scope')), schemas);
    expect(compareContracts(base, doc(returns({ oneOf: [ref('Scope'), ref('Tenant')] }), schemas))).toEqual([]);
    // Without the old schema among the alternatives, its fields are gone.
    const findings = compareContracts(base, doc(returns({ oneOf: [ref('Tenant')] }), schemas));
    expect(findings.map((f) => [f.rule, f.where])).toEqual([
      ['response-field-removed', 'response 200 application/json body.error'],
      ['response-field-removed', 'response 200 application/json body.message'],
    ]);
  });

  it('response-field-optional: a required response field became optional (the same change in a request is not reported)', () => {
    const before = { Thing: object({ id: string, name: string, note: string }, ['id', 'name']) };
    const after = { Thing: object({ id: string, name: string, note: string }, ['id', 'note']) };
    expect(compareContracts(doc(returns(ref('Thing')), before), doc(returns(ref('Thing')), after))).toEqual([
      finding(
        'response-field-optional',
        'GET /things',
        'response 200 application/json body.name',
        'response field "name" is no longer required',
        '#/components/schemas/Thing/properties/name',
      ),
    ]);
    expect(compareContracts(doc(accepts(ref('Thing')), { Thing: after.Thing }), doc(accepts(ref('Thing')), { Thing: before.Thing }))).toEqual([
      finding(
        'request-field-required',
        'POST /things',
        'request application/json body.name',
        'request field "name" became required',
        '#/components/schemas/Thing/required',
      ),
    ]);
  });

  it('request-field-required: a field became required, a new required field (also nested); a new optional field is fine', () => {
    const base = doc(accepts(object({ a: string, b: string, lines: { type: 'array', items: object({ x: string }) } }, ['a'])));
    const head = doc(
      accepts(object({ a: string, b: string, c: string, d: string, lines: { type: 'array', items: object({ x: string }, ['x']) } }, ['a', 'b', 'c'])),
    );
    expect(compareContracts(base, head)).toEqual([
      finding('request-field-required', 'POST /things', 'request application/json body.b', 'request field "b" became required', `${BODY}/required`),
      finding('request-field-required', 'POST /things', 'request application/json body.c', 'new required request field "c"', `${BODY}/required`),
      finding(
        'request-field-required',
        'POST /things',
        'request application/json body.lines[].x',
        'request field "x" became required',
        `${BODY}/properties/lines/items/required`,
      ),
    ]);
  });

  it('request-body-required: a new required body, an optional body that became required', () => {
    const ok = { '204': { description: 'done' } };
    const body = (required: boolean) => ({ required, content: json(object({})) });
    const base = doc({
      '/a': { post: { responses: ok } },
      '/b': { post: { requestBody: body(false), responses: ok } },
      '/c': { post: { requestBody: body(true), responses: ok } },
    });
    const head = doc({
      '/a': { post: { requestBody: body(true), responses: ok } },
      '/b': { post: { requestBody: body(true), responses: ok } },
      '/c': { post: { requestBody: body(true), responses: ok } },
    });
    expect(compareContracts(base, head)).toEqual([
      finding('request-body-required', 'POST /a', 'request body', 'a new required request body', '#/paths/~1a/post/requestBody/required'),
      finding('request-body-required', 'POST /b', 'request body', 'the request body became required', '#/paths/~1b/post/requestBody/required'),
    ]);
  });

  it('parameter-required: a new required parameter (also by $ref), one that became required; optional ones and header case are fine', () => {
    const ok = { '204': { description: 'done' } };
    const base = doc({
      '/things': {
        parameters: [{ name: 'X-Mode', in: 'header', required: true, schema: string }],
        get: { parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer' } }], responses: ok },
      },
    });
    const head = doc(
      {
        '/things': {
          parameters: [{ name: 'x-mode', in: 'header', required: true, schema: string }],
          get: {
            parameters: [
              { name: 'limit', in: 'query', required: true, schema: { type: 'integer' } },
              { name: 'q', in: 'query', schema: string },
              { $ref: '#/components/parameters/Trace' },
            ],
            responses: ok,
          },
        },
      },
      {},
      { components: { parameters: { Trace: { name: 'X-Trace', in: 'header', required: true, schema: string } } } },
    );
    expect(compareContracts(base, head)).toEqual([
      finding('parameter-required', 'GET /things', 'parameter query limit', 'the parameter became required', '#/paths/~1things/get/parameters/0/required'),
      finding('parameter-required', 'GET /things', 'parameter header X-Trace', 'a new required parameter', '#/components/parameters/Trace/required'),
    ]);
  });

  it('enum-narrowed: in a request body, a response (through an allOf wrapper), a parameter and a const; adding a value is fine', () => {
    const ok = { description: 'ok' };
    const paths = (query: Json) => ({
      '/things': {
        post: {
          parameters: [{ name: 'view', in: 'query', schema: { enum: query } }],
          requestBody: { content: json(object({ kind: ref('Kind'), mode: { const: 'x' } })) },
          responses: { '200': { ...ok, content: json(object({ status: { allOf: [ref('Status')], description: 'wrapped' } })) } },
        },
      },
    });
    const base = doc(paths(['full', 'short']), { Kind: { type: 'string', enum: ['a', 'b', 'c'] }, Status: { enum: ['new', 'done'] } });
    const head = doc(paths(['full', 'short', 'tiny']), { Kind: { type: 'string', enum: ['a', 'c', 'd'] }, Status: { enum: ['new'] } });
    head.paths['/things'].post.requestBody.content['application/json'].schema.properties.mode.const = 'y';
    expect(compareContracts(base, head)).toEqual([
      finding('enum-narrowed', 'POST /things', 'request application/json body.kind', 'enum narrowed: "b" no longer allowed', '#/components/schemas/Kind/enum'),
      finding(
        'enum-narrowed',
        'POST /things',
        'request application/json body.mode',
        'enum narrowed: "x" no longer allowed',
        '#/paths/~1things/post/requestBody/content/application~1json/schema/properties/mode/const',
      ),
      finding(
        'enum-narrowed',
        'POST /things',
        'response 200 application/json body.status',
        'enum narrowed: "done" no longer allowed',
        '#/components/schemas/Status/enum',
      ),
    ]);
    const narrowedQuery = doc(paths(['full']), base.components.schemas);
    expect(compareContracts(base, narrowedQuery)).toEqual([
      finding(
        'enum-narrowed',
        'POST /things',
        'parameter query view',
        'enum narrowed: "short" no longer allowed',
        '#/paths/~1things/post/parameters/0/schema/enum',
      ),
    ]);
  });

  it('type-changed: in a request body, a response (widening counts) and a parameter; a type no longer declared is not compared', () => {
    const paths = (count: Json, name: Json, limit: Json, note: Json) => ({
      '/things': {
        post: {
          parameters: [{ name: 'limit', in: 'query', schema: limit }],
          requestBody: { content: json(object({ count, note })) },
          responses: { '200': { description: 'ok', content: json(object({ name })) } },
        },
      },
    });
    const base = doc(paths({ type: 'integer' }, string, { type: 'integer' }, string));
    const head = doc(paths(string, { type: ['string', 'null'] }, { type: 'number' }, { maxLength: 10 }));
    expect(compareContracts(base, head)).toEqual([
      finding('type-changed', 'POST /things', 'parameter query limit', 'type changed from integer to number', '#/paths/~1things/post/parameters/0/schema/type'),
      finding(
        'type-changed',
        'POST /things',
        'request application/json body.count',
        'type changed from integer to string',
        '#/paths/~1things/post/requestBody/content/application~1json/schema/properties/count/type',
      ),
      finding(
        'type-changed',
        'POST /things',
        'response 200 application/json body.name',
        'type changed from string to [null, string]',
        '#/paths/~1things/post/responses/200/content/application~1json/schema/properties/name/type',
      ),
    ]);
  });

  it('leaves out what is not a rule: a removed status, media type or request field, a new constraint, a new operation', () => {
    const base = doc({
      '/things': {
        post: {
          requestBody: { content: { ...json(object({ a: string, b: string })), 'text/plain': { schema: string } } },
          responses: { '200': { description: 'ok', content: json(object({ id: string })) }, '404': { description: 'none' } },
        },
      },
    });
    const head = doc({
      '/things': {
        post: {
          requestBody: { content: json(object({ a: { type: 'string', pattern: '^a' } })) },
          responses: { '200': { description: 'ok', content: json(object({ id: string, more: string }, ['more'])) } },
        },
        get: { responses: { '200': { description: 'ok' } } },
      },
    });
    expect(compareContracts(base, head)).toEqual([]);
  });

  it('ends on a recursive schema and reports a shared schema once per operation', () => {
    const node = (fields: Json) => ({ Node: object({ ...fields, children: { type: 'array', items: ref('Node') }, parent: ref('Node') }) });
    const base = doc(returns(ref('Node')), node({ name: string }));
    const head = doc(returns(ref('Node')), node({}));
    expect(compareContracts(base, head)).toEqual([
      finding(
        'response-field-removed',
        'GET /things',
        'response 200 application/json body.name',
        'response field "name" removed or renamed',
        '#/components/schemas/Node/properties/name',
      ),
    ]);
  });

  it('formats a finding on one line', () => {
    expect(
      formatFinding(finding('type-changed', 'GET /things', 'response 200 application/json body.n', 'type changed from integer to string', '#/x/type')),
    ).toBe('GET /things — response 200 application/json body.n: type changed from integer to string (#/x/type)');
    expect(formatFinding(finding('operation-removed', 'GET /x', '', 'operation removed', '#/paths/~1x/get'))).toBe(
      'GET /x: operation removed (#/paths/~1x/get)',
    );
  });
});

describe('releases and the changelog', () => {
  it('picks the release with the highest version, ignoring other files', () => {
    expect(latestRelease(['README.md', 'openapi-1.9.0.json', 'openapi-1.10.0.json', 'openapi-2.0.0-rc.1.json', 'openapi-0.9.9.json'])?.file).toBe(
      'openapi-1.10.0.json',
    );
    expect(latestRelease(['README.md'])).toBeUndefined();
  });

  it('reads version headings and declares a new major only above the release major', () => {
    const changelog = '# Contract changelog\n\n## [Unreleased]\n\n## [2.0.0] - 2026-12-01\n\n### Removed\n\n## [1.1.0]\n\n## [1.0.0]\n';
    expect(changelogVersions(changelog).map((version) => version.text)).toEqual(['2.0.0', '1.1.0', '1.0.0']);
    expect(declaredMajor(changelog, parseVersion('1.1.0')!)?.text).toBe('2.0.0');
    expect(declaredMajor(changelog, parseVersion('2.0.0')!)).toBeUndefined();
    expect(declaredMajor('## [Unreleased]\n### [3.0.0]\n', parseVersion('1.0.0')!)).toBeUndefined();
  });
});

describe('the script against the real contract', () => {
  const temporary = mkdtempSync(join(tmpdir(), 'check-breaking-'));
  afterAll(() => rmSync(temporary, { recursive: true, force: true }));

  const release = latestRelease(readdirSync(join(ROOT, 'contract-releases')))!;
  const generated = (): Json => JSON.parse(readFileSync(join(ROOT, 'generated', 'openapi.json'), 'utf8'));
  const write = (name: string, content: string) => {
    const path = join(temporary, name);
    writeFileSync(path, content);
    return path;
  };
  /** A changelog that declares nothing above the release, so only the broken contract decides. */
  const plainChangelog = write('CHANGELOG-plain.md', `# Contract changelog\n\n## [Unreleased]\n\n## [${release.version.text}]\n`);
  const run = (...args: string[]) => {
    const result = spawnSync(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'scripts', 'check-breaking.ts'), ...args], { cwd: ROOT, encoding: 'utf8' });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };

  const withoutRunField = generated();
  delete withoutRunField.components.schemas.Run.properties.conversationId;
  withoutRunField.components.schemas.Run.required = withoutRunField.components.schemas.Run.required.filter((name: string) => name !== 'conversationId');
  const withoutRunFieldPath = write('without-run-field.json', JSON.stringify(withoutRunField));

  it('passes the current contract against the committed release, which is named after its info.version', () => {
    const snapshot = JSON.parse(readFileSync(join(ROOT, 'contract-releases', release.file), 'utf8'));
    expect(snapshot.info.version).toBe(release.version.text);
    const result = run();
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`against contract-releases/${release.file}`);
  });

  it('fails on a removed Run field, naming each operation, the field and its pointer', () => {
    const result = run('--head', withoutRunFieldPath, '--changelog', plainChangelog);
    expect(result.status).toBe(1);
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('  - '));
    // A field added since the release is named beside the removed one ("new beside it: …"), as a rename hint.
    const line = lines.find((l) => l.startsWith('  - GET /runs — response 200 application/json body.data[].conversationId: '));
    expect(line).toMatch(
      /: response field "conversationId" removed or renamed (\(new beside it: [^)]+\) )?\(#\/components\/schemas\/Run\/properties\/conversationId\)$/,
    );
    expect(lines.length).toBeGreaterThan(1);
    // Breaks the contract already has against the release (declared by a new major in CHANGELOG.md) are not this one's.
    const already = new Set(
      run('--changelog', plainChangelog)
        .stderr.split('\n')
        .filter((l) => l.startsWith('  - ')),
    );
    expect(lines.filter((l) => !already.has(l)).every((l) => l.includes('"conversationId" removed or renamed'))).toBe(true);
    expect(lines.some((l) => !already.has(l))).toBe(true);
    expect(result.stderr).toContain(`## [${release.version.major + 1}.0.0]`);
  });

  it('fails on a narrowed enum (a RunStatus value removed)', () => {
    const narrowed = generated();
    narrowed.components.schemas.RunStatus.enum = narrowed.components.schemas.RunStatus.enum.filter((value: string) => value !== 'canceled');
    const result = run('--head', write('narrowed-enum.json', JSON.stringify(narrowed)), '--changelog', plainChangelog);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('GET /runs — parameter query status: enum narrowed: "canceled" no longer allowed (#/components/schemas/RunStatus/enum)');
    expect(result.stderr).toContain('GET /runs — response 200 application/json body.data[].status: enum narrowed: "canceled" no longer allowed');
  });

  it('passes the same break once a changelog declares a new major, and prints it as declared', () => {
    const major = `${release.version.major + 1}.0.0`;
    const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8').replace(
      '## [Unreleased]\n',
      `## [Unreleased]\n\n## [${major}]\n\n### Removed\n\n- \`Run.conversationId\`.\n`,
    );
    const result = run('--head', withoutRunFieldPath, '--changelog', write('CHANGELOG-major.md', changelog));
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`"## [${major}]" (a new major over ${release.version.text})`);
    expect(result.stdout).toContain('body.data[].conversationId: response field "conversationId" removed or renamed');
  });

  it('compares any two files with --base and --head, and refuses bad usage with exit code 2', () => {
    const same = run('--base', withoutRunFieldPath, '--head', withoutRunFieldPath, '--changelog', plainChangelog);
    expect(same.status).toBe(0);
    expect(same.stdout).toContain('no breaking change');
    expect(run('--help').status).toBe(0);
    expect(run('--frobnicate').status).toBe(2);
    expect(run('--head', join(temporary, 'missing.json')).status).toBe(2);
  });
});
