/**
 * @module Step of `pnpm generate`: the generated layer of the Python SDK, in
 * packages/sdk-python/service_sdk/_generated/: `models.py` (a `TypedDict` or type alias per component schema),
 * `operations.py` (the operation table, and one method per operation on `Operations` and `AsyncOperations`)
 * and `errors.py` (each error code's HTTP status and extra fields). A new operation in the contract becomes
 * a new method here on the next `pnpm generate`.
 */
import { type Json, componentName, deref, headerLines, writeOutput } from './generate-common.ts';
import { type SdkOperation, sdkOperations, snake } from './generate-sdk-model.ts';

const ROOT = 'packages/sdk-python/service_sdk/_generated';

export async function generateSdkPython(doc: Json): Promise<string> {
  const operations = sdkOperations(doc);
  const { ERROR_STATUS, ERROR_FIELDS } = await import('../generated/errors.ts');
  await writeOutput(ROOT, '__init__.py', `${pyHeader('the contract')}"""The generated layer of service_sdk: models, operations and error codes."""\n`);
  await writeOutput(ROOT, 'models.py', renderPythonModels(doc));
  await writeOutput(ROOT, 'operations.py', renderPythonOperations(doc, operations));
  await writeOutput(ROOT, 'errors.py', renderPythonErrors(ERROR_STATUS, ERROR_FIELDS));
  return `${operations.length} operations, ${Object.keys(doc.components?.schemas ?? {}).length} models`;
}

function pyHeader(source: string): string {
  return `${headerLines('generate-sdk-python.ts', `generated/openapi.json (${source})`)
    .map((line) => `# ${line}`)
    .join('\n')}\n`;
}

const py = (value: string) => JSON.stringify(value);

/** Python type expression of a schema; component references by name (all models live in one module). */
function typeOf(doc: Json, schema: Json): string {
  if (!schema || typeof schema !== 'object') return 'Any';
  const ref = componentName(schema.$ref);
  if (ref) return ref;
  if (schema.const !== undefined) return `Literal[${literal(schema.const)}]`;
  if (Array.isArray(schema.enum)) return `Literal[${schema.enum.map(literal).join(', ')}]`;
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return typeOf(doc, schema.allOf[0]);
  const union = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(union)) return [...new Set(union.map((s: Json) => typeOf(doc, s)))].join(' | ');
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length === 0) return 'Any';
  return types
    .map((type) => {
      switch (type) {
        case 'string':
          return 'str';
        case 'integer':
          return 'int';
        case 'number':
          return 'float';
        case 'boolean':
          return 'bool';
        case 'null':
          return 'None';
        case 'array':
          return `list[${typeOf(doc, schema.items)}]`;
        default:
          return 'dict[str, Any]';
      }
    })
    .join(' | ');
}

function literal(value: unknown): string {
  if (typeof value === 'string') return py(value);
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (value === null) return 'None';
  return String(value);
}

/** The properties of an object schema, following `allOf` (ApiKeyCreated is ApiKey plus `secret`). */
function objectParts(doc: Json, schema: Json): { properties: Record<string, Json>; required: Set<string> } | undefined {
  const parts: Json[] = Array.isArray(schema.allOf) && schema.allOf.length > 1 ? schema.allOf.map((p: Json) => deref(doc, p)) : [schema];
  const properties: Record<string, Json> = {};
  const required = new Set<string>();
  let isObject = false;
  for (const part of parts) {
    const inner = Array.isArray(part.allOf) && part.allOf.length > 1 ? objectParts(doc, part) : undefined;
    if (inner) {
      Object.assign(properties, inner.properties);
      for (const name of inner.required) required.add(name);
      isObject = true;
      continue;
    }
    if (!part.properties) continue;
    isObject = true;
    Object.assign(properties, part.properties);
    for (const name of part.required ?? []) required.add(name);
  }
  return isObject ? { properties, required } : undefined;
}

export function renderPythonModels(doc: Json): string {
  const lines = [
    pyHeader('components.schemas'),
    '"""The contract\'s schemas as TypedDicts (objects) and type aliases (everything else), by component name."""',
    '',
    'from __future__ import annotations',
    '',
    'from typing import Any, Literal, NotRequired, TypeAlias, TypedDict',
    '',
  ];
  const aliases: string[] = [];
  const models: string[] = [];
  for (const [name, schema] of Object.entries<Json>(doc.components?.schemas ?? {})) {
    const object = objectParts(doc, schema);
    if (!object) {
      // An alias naming other models is a forward reference (models may come later in the module).
      const type = typeOf(doc, schema);
      aliases.push(/\b(?!Literal\b|Any\b|None\b)[A-Z]\w*/.test(type.replace(/"[^"]*"/g, '')) ? `${name}: TypeAlias = ${py(type)}` : `${name} = ${type}`);
      continue;
    }
    const fields = Object.entries(object.properties).map(([field, property]) => {
      const type = typeOf(doc, property);
      return `        ${py(field)}: ${py(object.required.has(field) ? type : `NotRequired[${type}]`)},`;
    });
    const doc1 = String(schema.title ?? name);
    models.push(
      '',
      `# ${doc1}: ${String(schema.description ?? '').split('\n')[0]}`.trimEnd(),
      `${name} = TypedDict(`,
      `    ${py(name)},`,
      '    {',
      ...fields,
      '    },',
      ')',
    );
  }
  lines.push(...aliases, ...models);
  lines.push(
    '',
    `__all__ = [${Object.keys(doc.components?.schemas ?? {})
      .map(py)
      .join(', ')}]`,
  );
  return lines.join('\n');
}

export function renderPythonOperations(doc: Json, operations: readonly SdkOperation[]): string {
  const bool = (value: boolean) => (value ? 'True' : 'False');
  const tuple = (values: readonly string[]) => (values.length ? `(${values.map(py).join(', ')}${values.length === 1 ? ',' : ''})` : '()');
  const lines = [
    pyHeader('every operation of the contract'),
    '"""Every operation of the contract: how to send it (OPERATIONS) and one method each, sync and async."""',
    '',
    'from __future__ import annotations',
    '',
    'from collections.abc import Mapping',
    'from typing import Any, TypedDict',
    '',
    'from . import models',
    '',
    '',
    'class OperationSpec(TypedDict):',
    '    id: str',
    '    method: str',
    '    path: str',
    '    auth: str',
    '    path_params: tuple[str, ...]',
    '    query_params: tuple[str, ...]',
    '    header_params: tuple[str, ...]',
    '    body: str',
    '    status: int',
    '    response: str',
    '    streamable: bool',
    '    idempotency_key: bool',
    '    csrf: bool',
    '',
    '',
    "#: The contract's servers, in its order; the first is production.",
    `SERVERS: tuple[str, ...] = (${(doc.servers ?? []).map((server: Json) => py(String(server.url))).join(', ')}${(doc.servers ?? []).length === 1 ? ',' : ''})`,
    '',
    'OPERATIONS: dict[str, OperationSpec] = {',
    ...operations.map(
      (op) =>
        `    ${py(op.id)}: {"id": ${py(op.id)}, "method": ${py(op.method)}, "path": ${py(op.path)}, "auth": ${py(op.auth)}, "path_params": ${tuple(op.pathParams)}, "query_params": ${tuple(op.queryParams)}, "header_params": ${tuple(op.headerParams)}, "body": ${py(op.body)}, "status": ${op.status}, "response": ${py(op.response)}, "streamable": ${bool(op.streamable)}, "idempotency_key": ${bool(op.idempotencyKey)}, "csrf": ${bool(op.csrf)}},`,
    ),
    '}',
  ];
  for (const isAsync of [false, true]) {
    lines.push(
      '',
      '',
      `class ${isAsync ? 'AsyncOperations' : 'Operations'}:`,
      `    """One ${isAsync ? 'coroutine' : 'method'} per operation (snake_case of its operationId); \`_call\` is the client's."""`,
      '',
      `    ${isAsync ? 'async ' : ''}def _call(self, operation_id: str, *, path: Mapping[str, Any] | None = None, query: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None, body: Any = None, idempotency_key: str | None = None) -> Any:`,
      '        raise NotImplementedError',
    );
    for (const op of operations) {
      const args: string[] = ['self'];
      const keyword: string[] = [];
      for (const name of op.pathParams) keyword.push(`${name}: str`);
      if (op.body === 'required') keyword.push(`body: ${bodyType(doc, op)}`);
      if (op.body === 'optional') keyword.push(`body: ${bodyType(doc, op)} | None = None`);
      if (op.queryParams.length) keyword.push('query: Mapping[str, Any] | None = None');
      if (op.headerParams.length) keyword.push('headers: Mapping[str, str] | None = None');
      if (op.idempotencyKey) keyword.push('idempotency_key: str | None = None');
      if (keyword.length) args.push('*', ...keyword);
      const call = [
        py(op.id),
        ...(op.pathParams.length ? [`path={${op.pathParams.map((name) => `${py(name)}: ${name}`).join(', ')}}`] : []),
        ...(op.body !== 'none' ? ['body=body'] : []),
        ...(op.queryParams.length ? ['query=query'] : []),
        ...(op.headerParams.length ? ['headers=headers'] : []),
        ...(op.idempotencyKey ? ['idempotency_key=idempotency_key'] : []),
      ];
      const returns = responseType(doc, op);
      lines.push(
        '',
        `    ${isAsync ? 'async ' : ''}def ${snake(op.id)}(${args.join(', ')}) -> ${returns}:`,
        `        """${op.method} ${op.path}${op.summary ? `: ${op.summary.replace(/"""/g, "'''").replace(/\\/g, '\\\\')}` : ''}"""`,
        // `_call` answers parsed JSON (Any); the contract says which model it is.
        `        return ${isAsync ? 'await ' : ''}self._call(${call.join(', ')})${returns === 'Any' ? '' : '  # type: ignore[no-any-return]'}`,
      );
    }
  }
  return lines.join('\n');
}

function bodyType(doc: Json, op: SdkOperation): string {
  const operation = doc.paths[op.path][op.method.toLowerCase()];
  const name = componentName(deref(doc, operation.requestBody).content['application/json'].schema?.$ref);
  return name ? `models.${name}` : 'Mapping[str, Any]';
}

function responseType(doc: Json, op: SdkOperation): string {
  if (op.response === 'empty') return 'None';
  if (op.response === 'sse') return 'Any';
  const operation = doc.paths[op.path][op.method.toLowerCase()];
  // One model per 2xx status that answers JSON (`200`, or `202` for a step still to take).
  const names = op.jsonStatuses.map((status) => componentName(deref(doc, operation.responses[String(status)]).content['application/json'].schema?.$ref));
  return names.every(Boolean) ? names.map((name) => `models.${name}`).join(' | ') : 'Any';
}

export function renderPythonErrors(
  status: Record<string, number>,
  fields: Record<string, { required: readonly string[]; optional: readonly string[] } | undefined>,
): string {
  return [
    pyHeader('components.schemas.ErrorCode and the error group schemas'),
    '"""Every error code of the contract with its HTTP status, and the extra body fields it carries."""',
    '',
    'ERROR_STATUS: dict[str, int] = {',
    ...Object.entries(status).map(([code, value]) => `    ${py(code)}: ${value},`),
    '}',
    '',
    '# Per code: (always sent, sent when known).',
    'ERROR_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {',
    ...Object.entries(fields).map(([code, entry]) => {
      const t = (values: readonly string[]) => (values.length ? `(${values.map(py).join(', ')},)` : '()');
      return `    ${py(code)}: (${t(entry?.required ?? [])}, ${t(entry?.optional ?? [])}),`;
    }),
    '}',
  ].join('\n');
}
