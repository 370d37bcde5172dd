/**
 * The panel's choices (src/vocabulary.ts) are the contract's enums: every value once, none missing, none extra. The
 * contract is read as bundled (generated/openapi.json), so a value added there and not in the panel fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ALIASES, AUDIT_ACTIONS, OUTBOUND_EVENT_TYPES, ROLES, RUN_SOURCES, RUN_STATUSES, TEST_EVENT_TYPES } from '../src/vocabulary.ts';

interface Schema {
  enum?: string[];
  items?: Schema;
  properties?: Record<string, Schema>;
}
const schemas = (
  JSON.parse(readFileSync(new URL('../../../generated/openapi.json', import.meta.url), 'utf8')) as { components: { schemas: Record<string, Schema> } }
).components.schemas;

/** The enum of a schema, or of one of its properties (an array's items for an array). */
function enumOf(name: string, property?: string): string[] {
  let schema = schemas[name]!;
  if (property) schema = schema.properties![property]!;
  if (schema.items) schema = schema.items;
  expect(schema.enum, `${name}${property ? `.${property}` : ''} has an enum`).toBeDefined();
  return schema.enum!;
}

describe("the panel's choices are the contract's enums", () => {
  it.each<[string, readonly string[], string, string?]>([
    ['ALIASES', ALIASES, 'ModelAlias'],
    ['ROLES', ROLES, 'WorkspaceRole'],
    ['RUN_STATUSES', RUN_STATUSES, 'RunStatus'],
    ['RUN_SOURCES', RUN_SOURCES, 'Run', 'source'],
    ['OUTBOUND_EVENT_TYPES', OUTBOUND_EVENT_TYPES, 'WebhookDestination', 'events'],
    ['TEST_EVENT_TYPES', TEST_EVENT_TYPES, 'SendTestEventRequest', 'type'],
    ['AUDIT_ACTIONS', AUDIT_ACTIONS, 'AuditAction'],
  ])('%s', (_, values, name, property) => {
    expect(new Set(values).size).toBe(values.length);
    expect([...values].sort()).toEqual([...enumOf(name, property)].sort());
  });
});
