/**
 * @module A client generated from the contract in another repository, as docs/sdk.md tells: openapi-typescript at its
 * default settings (its CLI, no options) writes `schema.d.ts` from generated/openapi.json into a project in the
 * system's temporary folder (outside this workspace; its only dependency, openapi-fetch, linked in from ours), the
 * docs' example (`first-call.ts`, taken from docs/sdk.md as written) compiles in strict mode, and runs against a real
 * server over HTTP: the README's first call, answered 200, then the same client's validation error with its `param`.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@service/testing/app';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** Resolves from the workspace's root, whose dev dependencies the generator and its client are. */
const require = createRequire(join(ROOT, 'package.json'));
const ts = require('typescript') as typeof import('typescript');

/** The TypeScript block of docs/sdk.md that follows `// first-call.ts`. */
function docsExample(): string {
  const doc = readFileSync(join(ROOT, 'docs/sdk.md'), 'utf8');
  const block = /```ts\n(\/\/ first-call\.ts\n[\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/sdk.md has no `// first-call.ts` example');
  return block;
}

/** The folder of an installed package of this workspace (its package.json's). */
function packageDir(name: string): string {
  return dirname(require.resolve(`${name}/package.json`));
}

/** Compiles `project` (its tsconfig.json) and answers the diagnostics, formatted. */
function compile(project: string): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(project, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (!config) throw new Error('tsconfig.json unreadable');
  const program = ts.createProgram(config.fileNames, config.options);
  const emitted = program.emit();
  return [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics].map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('a client generated from the contract at openapi-typescript’s default settings, in another project', { timeout: 120_000 }, () => {
  let t: TestApp;
  let server: ServerType;
  let baseUrl: string;
  let project: string;
  /** The docs' example compiled once in the set-up (into `dist/`, which the second test runs): its diagnostics. */
  let diagnostics: string[];

  beforeAll(async () => {
    t = await createTestApp();
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    project = mkdtempSync(join(tmpdir(), 'ais-generated-client-'));
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(packageDir('openapi-fetch'), join(project, 'node_modules', 'openapi-fetch'), 'dir');
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'elsewhere', private: true, type: 'module' }));
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', outDir: 'dist', skipLibCheck: false, types: [] },
        files: ['first-call.ts', 'node-env.d.ts'],
      }),
    );
    // The example reads two variables; the project has no @types/node.
    writeFileSync(join(project, 'node-env.d.ts'), 'declare const process: { env: Record<string, string | undefined> };\n');
    // The CLI at its defaults, run in that project: an input and an output, nothing else.
    const cli = join(packageDir('openapi-typescript'), 'bin', 'cli.js');
    writeFileSync(join(project, 'openapi.json'), readFileSync(join(ROOT, 'generated/openapi.json')));
    execFileSync(process.execPath, [cli, 'openapi.json', '-o', 'schema.d.ts'], { cwd: project, stdio: 'pipe' });
    writeFileSync(join(project, 'first-call.ts'), docsExample());
    diagnostics = compile(project);
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await t?.close();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('makes the fields that have a default optional, so the docs’ first call compiles in strict mode', () => {
    const schema = readFileSync(join(project, 'schema.d.ts'), 'utf8');
    const inference = /InferenceRequest: \{([\s\S]*?)\n {8}\};/.exec(schema)?.[1] ?? '';
    for (const field of ['agentSlug', 'powerMode', 'stream', 'background']) expect(inference).toMatch(new RegExp(`\\b${field}\\?:`));
    expect(inference).toMatch(/\balias: /);
    expect(diagnostics).toEqual([]);
  });

  it('runs against a real server: the first call answers, and a bad body names its field', async () => {
    // Not execFileSync: the server answers from this process, whose event loop must keep turning.
    const run = (env: Record<string, string>) =>
      promisify(execFile)(process.execPath, [join(project, 'dist', 'first-call.js')], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' });
    const { stdout } = await run({ SERVICE_BASE_URL: baseUrl, SERVICE_API_KEY: t.apiKey });
    expect(stdout).toMatch(/^run_[A-Za-z0-9]+ finance \S/);

    // The same client, a body the contract refuses: the error body's fields are the generated error types'.
    writeFileSync(join(project, 'first-call.ts'), docsExample().replace("alias: 'Sonata'", "alias: 'Sonata', maxTokens: 0"));
    expect(compile(project)).toEqual([]);
    const failure = await run({ SERVICE_BASE_URL: baseUrl, SERVICE_API_KEY: t.apiKey }).then(
      () => '',
      (error: { stderr?: string }) => String(error.stderr),
    );
    expect(failure).toContain("400 invalid_body: Invalid body field 'maxTokens': must be at least 1.");
  });
});
