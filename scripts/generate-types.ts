/**
 * @module Step 2 of `pnpm generate`: generated/types.ts, the TypeScript types of the contract
 * (`paths`, `webhooks`, `components`, `operations`) from openapi-typescript.
 */
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { BUNDLE_JSON, tsHeader, writeGenerated } from './generate-common.ts';

export async function generateTypes(): Promise<void> {
  const ast = await openapiTS(pathToFileURL(BUNDLE_JSON), {
    // The CLI's `--default-non-nullable=false`: a field with a default stays optional in the types,
    // because a client may omit it (the server fills it in).
    defaultNonNullable: false,
    silent: true,
  });
  await writeGenerated(
    'types.ts',
    `${tsHeader('generate-types.ts', 'generated/openapi.json (openapi-typescript, --default-non-nullable=false)')}\n${astToString(ast)}`,
  );
}
