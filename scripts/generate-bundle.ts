/**
 * @module Step 1 of `pnpm generate`: the bundled contract that every tool reads.
 * Writes generated/openapi.json and generated/openapi.yaml (the same document).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { type Json, OPENAPI_ROOT, headerLines, resolvePointer, runBin, writeGenerated } from './generate-common.ts';

const SCRIPT = 'generate-bundle.ts';
const SOURCE = 'openapi/openapi.yaml (redocly bundle)';

export async function generateBundle(): Promise<Json> {
  const scratch = await mkdtemp(join(tmpdir(), 'ais-bundle-'));
  try {
    const out = join(scratch, 'openapi.json');
    await runBin('redocly', [
      'bundle',
      OPENAPI_ROOT,
      '--output',
      out,
      '--ext',
      'json',
      '--lint-config',
      'off',
      '--component-renaming-conflicts-severity',
      'error',
    ]);
    const bundled: Json = JSON.parse(await readFile(out, 'utf8'));
    assertOnlyLocalRefs(bundled);

    // JSON has no comments, so the notice is an extension field (allowed at the root of OpenAPI 3.1).
    const { openapi, ...rest } = bundled;
    const doc: Json = {
      openapi,
      'x-generated': headerLines(SCRIPT, SOURCE).join(' '),
      ...rest,
    };
    await writeGenerated('openapi.json', JSON.stringify(doc, null, 2));
    const yamlHeader = headerLines(SCRIPT, SOURCE)
      .map((line) => `# ${line}`)
      .join('\n');
    await writeGenerated('openapi.yaml', `${yamlHeader}\n${YAML.stringify(doc, { lineWidth: 0, aliasDuplicateObjects: false })}`);
    return doc;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Every reference left in the bundle must point inside it. Redocly leaves a file reference unresolved when
 * it sits where it does not expect a schema (for example inside an unknown `x-` extension), and the bundle
 * would then only work next to openapi/; fail with the place so that the contract can be fixed.
 */
function assertOnlyLocalRefs(doc: Json): void {
  const visit = (node: Json, where: string): void => {
    if (Array.isArray(node)) {
      node.forEach((item, index) => {
        visit(item, `${where}/${index}`);
      });
      return;
    }
    if (!node || typeof node !== 'object') return;
    if (typeof node.$ref === 'string') {
      try {
        resolvePointer(doc, node.$ref);
      } catch (error) {
        throw new Error(`bundle: ${(error as Error).message} at ${where}`);
      }
    }
    for (const [key, value] of Object.entries<Json>(node)) visit(value, `${where}/${key}`);
  };
  visit(doc, '#');
}
