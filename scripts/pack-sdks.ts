/**
 * @module The SDKs as files another project installs, in `dist-packages/` (ignored by git):
 *
 *   dist-packages/service-sdk-<version>.tgz                  `npm install /path/to/it` (the built `@service/sdk`, no dependencies)
 *   dist-packages/service_sdk-<version>-py3-none-any.whl     `pip install /path/to/it` (needs httpx, from the index or the system)
 *   dist-packages/service-sdk-<version>.tar.gz               the Python sdist
 *
 *   pnpm pack:sdks [--out DIR]        (`pnpm build` runs it after compiling every package)
 *
 * Both are built in a temporary staging folder, never in the source tree (so a test, `pnpm build` and a
 * developer can pack at the same time): the tarball is `pnpm pack` of the SDK compiled there by its own
 * `tsconfig.build.json`, with its sources (for the source maps), README and package.json less `scripts` and
 * `devDependencies` (it has no dependencies, so nothing `catalog:` or `workspace:` is left). The Python sdist
 * and wheel come from setuptools' own PEP 517 backend run on a copy of packages/sdk-python (what
 * `python3 -m build --no-isolation` does), so no package index is needed: Debian's python3-setuptools and
 * python3-wheel are enough. Without them the Python files are skipped with a line saying what to install,
 * and the TypeScript tarball is still written.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SDK = join(ROOT, 'packages/sdk');
const SDK_PYTHON = join(ROOT, 'packages/sdk-python');

/** Runs a command; throws with its output when it fails. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed (${result.status ?? result.error?.message}):\n${result.stdout ?? ''}${result.stderr ?? ''}`);
  }
  return result.stdout;
}

/** The first interpreter that can build a wheel without an index: PYTHON, python3 on PATH, then the system's. */
function wheelBuilder(): string | undefined {
  const candidates = [process.env.PYTHON, 'python3', '/usr/bin/python3'].filter((c): c is string => Boolean(c));
  return candidates.find((c) => spawnSync(c, ['-c', 'import setuptools.build_meta, wheel'], { stdio: 'ignore' }).status === 0);
}

// setuptools' backend rewrites sys.argv while it builds, so the output folder comes in the environment.
const BUILD_PYTHON = `
import os, setuptools.build_meta as backend
out = os.environ["SDK_DIST_DIR"]
print(backend.build_sdist(out))
print(backend.build_wheel(out))
`;

/** The SDK's package.json as published: what an installer reads, without the workspace's build tooling. */
function publishedManifest(): { version: string } {
  const manifest = JSON.parse(readFileSync(join(SDK, 'package.json'), 'utf8')) as Record<string, unknown> & { version: string };
  delete manifest.scripts;
  delete manifest.devDependencies;
  const text = JSON.stringify(manifest);
  if (/"(workspace|catalog):/.test(text)) throw new Error(`packages/sdk/package.json has an unresolved workspace: or catalog: version: ${text}`);
  return manifest;
}

function packTypeScript(stage: string, out: string): string {
  const manifest = publishedManifest();
  const folder = join(stage, 'sdk');
  mkdirSync(folder);
  run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(SDK, 'tsconfig.build.json'), '--outDir', join(folder, 'dist')], ROOT);
  cpSync(join(SDK, 'src'), join(folder, 'src'), { recursive: true });
  cpSync(join(SDK, 'README.md'), join(folder, 'README.md'));
  writeFileSync(join(folder, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  run('pnpm', ['pack', '--pack-destination', out], folder);
  const tarball = `service-sdk-${manifest.version}.tgz`;
  if (!existsSync(join(out, tarball))) throw new Error(`pnpm pack did not write ${tarball} in ${out}`);
  return tarball;
}

function packPython(stage: string, out: string): string[] {
  const python = wheelBuilder();
  if (python === undefined) {
    console.warn(
      'pack:sdks: skipped the Python sdist and wheel: no python3 with setuptools and wheel (Debian: apt-get install python3-setuptools python3-wheel)',
    );
    return [];
  }
  const folder = join(stage, 'sdk-python');
  mkdirSync(folder);
  for (const name of ['pyproject.toml', 'README.md', 'service_sdk']) {
    cpSync(join(SDK_PYTHON, name), join(folder, name), { recursive: true, filter: (source) => !/__pycache__|\.pyc$/.test(source) });
  }
  const before = new Set(readdirSync(out));
  run(python, ['-c', BUILD_PYTHON], folder, { ...process.env, SDK_DIST_DIR: out, PYTHONDONTWRITEBYTECODE: '1', PYTHONWARNINGS: 'ignore' });
  return readdirSync(out).filter((name) => !before.has(name));
}

function main(): void {
  const at = process.argv.indexOf('--out');
  const out = resolve(at >= 0 ? process.argv[at + 1]! : join(ROOT, 'dist-packages'));
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const stage = mkdtempSync(join(tmpdir(), 'pack-sdks-'));
  try {
    const written = [packTypeScript(stage, out), ...packPython(stage, out)];
    for (const name of written) console.log(join(out, name));
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

try {
  main();
} catch (error) {
  console.error(`pack:sdks: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
