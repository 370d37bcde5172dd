/**
 * @module Step 5 of `pnpm generate`: generated/errors.ts, every error code of the contract with its HTTP
 * status (`ErrorCode` schema: `enum` plus `x-error-status`), and the extra body fields each code carries
 * (read from the group schemas built as `allOf: [Error, {...}]`, such as QuotaExceededError): as data
 * (`ERROR_FIELDS`, for the generated SDKs) and as types (`ErrorExtras`, from generated/types.ts's schemas, so
 * the server cannot build an error body the contract does not describe).
 */
import { type Json, componentName, deref, tsHeader, writeGenerated } from './generate-common.ts';

export async function generateErrors(doc: Json): Promise<void> {
  const errorCode = doc.components?.schemas?.ErrorCode;
  const codes: unknown = errorCode?.enum;
  const statuses: Record<string, unknown> | undefined = errorCode?.['x-error-status'];
  if (!Array.isArray(codes) || !statuses) throw new Error('errors: components.schemas.ErrorCode needs `enum` and `x-error-status`');

  const missing = codes.filter((code) => !Number.isInteger(statuses[code]));
  const unknown = Object.keys(statuses).filter((code) => !codes.includes(code));
  if (missing.length || unknown.length) {
    throw new Error(`errors: ErrorCode enum and x-error-status disagree (no status: ${missing.join(', ') || '-'}; not in enum: ${unknown.join(', ') || '-'})`);
  }
  for (const code of codes as string[]) {
    const status = statuses[code] as number;
    if (status < 400 || status > 599) throw new Error(`errors: ${code} has status ${status}, not an error status`);
  }

  const fields = extraFields(doc, codes as string[]);
  const derived = derivedGroups(doc, codes as string[]);
  const lines = [
    tsHeader('generate-errors.ts', 'generated/openapi.json (components.schemas.ErrorCode and the error group schemas)'),
    '/** @module Every error code of the contract with its HTTP status, and the extra body fields each one carries. */',
    '',
    "import type { components } from './types.ts';",
    '',
    'export const ERROR_STATUS = {',
    ...(codes as string[]).map((code) => `  ${code}: ${statuses[code]},`),
    '} as const;',
    '',
    'export type ErrorCode = keyof typeof ERROR_STATUS;',
    '',
    "/** The error body's fields beyond `error` and `message`: always sent (`required`) or when known (`optional`). */",
    'export type ErrorFields = { readonly schemas: readonly string[]; readonly required: readonly string[]; readonly optional: readonly string[] };',
    '',
    '/** Per code, the group schemas of components.schemas that describe its body, and their extra fields. */',
    'export const ERROR_FIELDS: { readonly [code in ErrorCode]?: ErrorFields } = {',
    ...(codes as string[])
      .filter((code) => fields.has(code))
      .map((code) => {
        const entry = fields.get(code)!;
        return `  ${code}: { schemas: ${list(entry.schemas)}, required: ${list(entry.required)}, optional: ${list(entry.optional)} },`;
      }),
    '};',
    '',
    "/** A group schema's body fields beyond `error` and `message`. */",
    "type ExtrasOf<S extends keyof components['schemas']> = Omit<components['schemas'][S], 'error' | 'message'>;",
    '',
    '/** Per code, the extra body fields of its group schemas (any one of them, when several describe it; none without one). */',
    'export interface ErrorExtras {',
    ...(codes as string[]).map((code) => {
      const schemas = [...(fields.get(code)?.schemas ?? []), ...(derived.get(code) ?? [])];
      return `  ${code}: ${schemas.length === 0 ? 'Record<never, never>' : schemas.map((name) => `ExtrasOf<'${name}'>`).join(' | ')};`;
    }),
    '}',
  ];
  await writeGenerated('errors.ts', lines.join('\n'));
}

interface Collected {
  schemas: string[];
  required: string[];
  optional: string[];
}

function extraFields(doc: Json, codes: readonly string[]): Map<string, Collected> {
  const byCode = new Map<string, Collected>();
  for (const [name, schema] of Object.entries<Json>(doc.components?.schemas ?? {})) {
    const parts: Json[] = schema?.allOf ?? [];
    if (!parts.some((part) => componentName(part?.$ref) === 'Error')) continue;
    const own = parts.filter((part) => componentName(part?.$ref) !== 'Error').map((part) => deref(doc, part));
    const properties: Record<string, Json> = Object.assign({}, ...own.map((part) => part.properties ?? {}));
    const required = new Set<string>(own.flatMap((part) => part.required ?? []));
    const errorProperty = properties.error ? deref(doc, properties.error) : undefined;
    const groupCodes: string[] = errorProperty?.enum ?? (errorProperty?.const !== undefined ? [errorProperty.const] : []);
    for (const code of groupCodes) {
      if (!codes.includes(code)) throw new Error(`errors: ${name} uses ${code}, which is not in ErrorCode`);
      const extra = Object.keys(properties).filter((field) => field !== 'error' && field !== 'message');
      const previous = byCode.get(code);
      const mine = { required: extra.filter((field) => required.has(field)), optional: extra.filter((field) => !required.has(field)) };
      if (!previous) {
        byCode.set(code, { schemas: [name], ...mine });
        continue;
      }
      // A code described by several groups: a field is required only if every group requires it.
      const all = [...new Set([...previous.required, ...previous.optional, ...mine.required, ...mine.optional])];
      const requiredEverywhere = all.filter((field) => previous.required.includes(field) && mine.required.includes(field));
      byCode.set(code, {
        schemas: [...previous.schemas, name],
        required: requiredEverywhere,
        optional: all.filter((field) => !requiredEverywhere.includes(field)),
      });
    }
  }
  return byCode;
}

/**
 * The group schemas built on another group (`allOf: [ServerError, {...}]`, such as NotReadyError), by code: a body
 * the types must allow too. ERROR_FIELDS keeps to the direct groups (the generated SDKs read it).
 */
function derivedGroups(doc: Json, codes: readonly string[]): Map<string, string[]> {
  const schemas: Record<string, Json> = doc.components?.schemas ?? {};
  const isGroup = (name: string | undefined, seen: Set<string> = new Set()): boolean => {
    if (name === undefined || seen.has(name)) return false;
    if (name === 'Error') return true;
    seen.add(name);
    return (schemas[name]?.allOf ?? []).some((part: Json) => isGroup(componentName(part?.$ref), seen));
  };
  const byCode = new Map<string, string[]>();
  for (const [name, schema] of Object.entries<Json>(schemas)) {
    const parts: Json[] = schema?.allOf ?? [];
    const bases = parts.map((part) => componentName(part?.$ref)).filter((base): base is string => base !== undefined);
    if (bases.includes('Error') || !bases.some((base) => isGroup(base))) continue;
    for (const part of parts.filter((p) => p?.$ref === undefined)) {
      const error = part.properties?.error ? deref(doc, part.properties.error) : undefined;
      const groupCodes: string[] = error?.enum ?? (error?.const !== undefined ? [error.const] : []);
      for (const code of groupCodes) {
        if (!codes.includes(code)) throw new Error(`errors: ${name} uses ${code}, which is not in ErrorCode`);
        byCode.set(code, [...(byCode.get(code) ?? []), name]);
      }
    }
  }
  return byCode;
}

function list(values: readonly string[]): string {
  return `[${values.map((value) => `'${value}'`).join(', ')}]`;
}
