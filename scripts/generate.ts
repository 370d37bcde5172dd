/**
 * @module `pnpm generate`: writes everything under generated/ from the contract (openapi/, asyncapi/).
 * One line per step; the first failing step stops the run with a non-zero exit and its message.
 * Output is deterministic (no timestamps, document order), so a clean clone regenerates identical files
 * and `pnpm check:drift` can compare with git.
 */
import { readdir, rm, rmdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { existsSync } from 'node:fs';
import { GENERATED_ROOTS, type Json, ROOT, written } from './generate-common.ts';
import { generateBundle } from './generate-bundle.ts';
import { generateDb } from './generate-db.ts';
import { generateDocs } from './generate-docs.ts';
import { generateErrors } from './generate-errors.ts';
import { generateEventsPage } from './generate-events-page.ts';
import { generateMcpTools } from './generate-mcp-tools.ts';
import { generateRoutes } from './generate-routes.ts';
import { generateSdk } from './generate-sdk.ts';
import { generateSdkPython } from './generate-sdk-python.ts';
import { generateTypes } from './generate-types.ts';
import { verifyGenerated } from './generate-verify.ts';
import { generateZod } from './generate-zod.ts';

async function main(): Promise<void> {
  const started = performance.now();
  let doc: Json;
  let zodSource = '';

  await step('bundle      openapi/ → generated/openapi.{json,yaml}', async () => {
    doc = await generateBundle();
  });
  await step('types       generated/types.ts (openapi-typescript)', () => generateTypes());
  await step('zod         generated/zod.ts (@hey-api/openapi-ts zod plugin + strict objects, coercion)', async () => {
    zodSource = await generateZod(doc);
  });
  await step('routes      generated/routes.ts', () => generateRoutes(doc, zodSource));
  await step('errors      generated/errors.ts', () => generateErrors(doc));
  await step('mcp-tools   generated/mcp-tools.ts (the MCP bridge tools: operations marked x-mcp-tool)', () => generateMcpTools(doc, zodSource));
  await step("sdk         packages/sdk/src/generated/ (the TypeScript SDK's operation layer)", () => generateSdk(doc));
  await step('sdk-python  packages/sdk-python/service_sdk/_generated/ (TypedDicts and operations)', () => generateSdkPython(doc));
  await step('db          generated/db.ts (row types from the SQL migrations)', () => generateDb());
  await step('docs        generated/docs/index.html (redocly build-docs --inlineBundle)', () => generateDocs());
  await step('events      generated/docs/events.html (asyncapi/asyncapi.yaml)', async () => {
    const done = await generateEventsPage();
    return done ? undefined : 'skipped: asyncapi/asyncapi.yaml does not exist yet';
  });
  await step('verify      import the generated modules and check them', () => verifyGenerated(doc));
  await step('clean       remove files no step produced', () => removeStale());

  console.log(`generate: done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** Runs one step, printing its name, its note (if any) and how long it took. */
async function step(label: string, run: () => Promise<unknown>): Promise<void> {
  const started = performance.now();
  process.stdout.write(`generate: ${label} ... `);
  try {
    const note = await run();
    console.log(`ok (${Math.round(performance.now() - started)} ms)${note ? ` - ${note}` : ''}`);
  } catch (error) {
    console.log('FAILED');
    const message = error instanceof Error ? error.message : String(error);
    console.error(`\ngenerate: step "${label.split(/\s+/)[0]}" failed:\n${message}`);
    process.exit(1);
  }
}

/** GENERATED_ROOTS belong to this script: a file it no longer writes would otherwise linger and look current. */
async function removeStale(): Promise<string | undefined> {
  const removed: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        await walk(path);
        if ((await readdir(path)).length === 0) await rmdir(path);
      } else if (!written.has(relative(ROOT, path)) && !/(^|\/)__pycache__\//.test(relative(ROOT, path))) {
        await rm(path);
        removed.push(relative(ROOT, path));
      }
    }
  };
  for (const root of GENERATED_ROOTS) if (existsSync(join(ROOT, root))) await walk(join(ROOT, root));
  if (removed.length) return `removed ${removed.sort().join(', ')}`;
}

await main();
