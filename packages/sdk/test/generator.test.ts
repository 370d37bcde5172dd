/**
 * @module The SDKs follow the contract: the committed operation layers have one method per operation, and an
 * operation added to the contract becomes a method of both SDKs on the next `pnpm generate`.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderPythonOperations } from '../../../scripts/generate-sdk-python.ts';
import { renderTsOperations } from '../../../scripts/generate-sdk.ts';
import { sdkOperations, snake } from '../../../scripts/generate-sdk-model.ts';
import { OPERATIONS, Operations } from '../src/index.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const contract = () => JSON.parse(readFileSync(resolve(ROOT, 'generated/openapi.json'), 'utf8'));

describe('the generated operation layers', () => {
  it('has one TypeScript method and one table entry per operationId of the contract', () => {
    const ids = sdkOperations(contract()).map((op) => op.id);
    expect(Object.keys(OPERATIONS).sort()).toEqual([...ids].sort());
    for (const id of ids) expect(typeof (Operations.prototype as unknown as Record<string, unknown>)[id]).toBe('function');
  });

  it('has one Python method per operation, sync and async', () => {
    const python = readFileSync(resolve(ROOT, 'packages/sdk-python/service_sdk/_generated/operations.py'), 'utf8');
    for (const op of sdkOperations(contract())) {
      expect(python).toContain(`    def ${snake(op.id)}(`);
      expect(python).toContain(`    async def ${snake(op.id)}(`);
    }
  });

  it('turns an operation added to the contract into a method of both SDKs', () => {
    const doc = contract();
    doc.paths['/v1/widgets/{widget_id}'] = {
      get: {
        operationId: 'getWidget',
        summary: 'One widget',
        tags: ['Widgets'],
        security: [{ apiKey: ['tenant:read'] }],
        parameters: [{ name: 'widget_id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Usage' } } } } },
      },
    };
    const operations = sdkOperations(doc);
    const ts = renderTsOperations(operations, doc.servers);
    expect(ts).toContain("getWidget: { id: 'getWidget', method: 'GET', path: '/v1/widgets/{widget_id}', auth: 'apiKey', pathParams: ['widget_id']");
    expect(ts).toContain("getWidget(input: OperationInputs['getWidget'], options?: RequestOptions)");
    const python = renderPythonOperations(doc, operations);
    expect(python).toContain('    def get_widget(self, *, widget_id: str) -> models.Usage:');
    expect(python).toContain('    async def get_widget(self, *, widget_id: str) -> models.Usage:');
  });
});
