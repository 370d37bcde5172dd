/**
 * @module `pnpm lint:imports` (scripts/check-imports.ts): on small fixture source dirs it finds a loop
 * between two files, a loop between two folders that no file loop explains, an import from a lower floor to
 * a higher one and a folder without a floor, and lets `import type` go upward; the script run as `pnpm lint`
 * runs it fails (exit 1) on a fixture with a loop and passes on the server's own source.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildGraph, check, cycles, folderOf, SERVER_SRC } from '../scripts/check-imports.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const dirs: string[] = [];

/** A fixture source dir holding `files` (path → content). */
function fixture(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'check-imports-'));
  dirs.push(dir);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const FLOORS = [['low'], ['high', 'domain/a', 'domain/b']];

describe('check-imports', () => {
  it('finds a loop between two files', () => {
    const dir = fixture({
      'low/a.ts': "import { b } from './b.ts';\nexport const a = () => b;\n",
      'low/b.ts': "import { a } from './a.ts';\nexport const b = () => a;\n",
    });
    const { problems } = check(buildGraph(dir), FLOORS);
    expect(problems).toEqual(['file cycle: low/a.ts → low/b.ts → low/a.ts']);
  });

  it('finds a loop between two folders that no file loop explains (domain/* subfolders are folders)', () => {
    const dir = fixture({
      'domain/a/one.ts': "import { three } from '../b/three.ts';\nexport const one = three;\n",
      'domain/a/two.ts': 'export const two = 2;\n',
      'domain/b/three.ts': 'export const three = 3;\n',
      'domain/b/four.ts': "export { two } from '../a/two.ts';\n",
    });
    const { problems } = check(buildGraph(dir), FLOORS);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^folder cycle: domain\/a → domain\/b → domain\/a\n/);
    expect(problems[0]).toContain('domain/a/one.ts → domain/b/three.ts');
    expect(problems[0]).toContain('domain/b/four.ts → domain/a/two.ts');
  });

  it('refuses a value import from a lower floor to a higher one, and lets types go up', () => {
    const dir = fixture({
      'high/h.ts': 'export type H = { n: number };\nexport const h = 1;\n',
      'low/l.ts':
        "import type { H } from '../high/h.ts';\nimport { type H as Again } from '../high/h.ts';\nexport const l: H | Again | undefined = undefined;\n",
      'low/up.ts': "export async function up() {\n  return (await import('../high/h.ts')).h;\n}\n",
    });
    const { problems } = check(buildGraph(dir), FLOORS);
    expect(problems).toEqual(['upward import: low/up.ts (floor 0, low) → high/h.ts (floor 1, high); import only types upward']);
  });

  it('asks for a floor for a folder the table does not list', () => {
    const dir = fixture({ 'low/a.ts': "import { n } from '../new/n.ts';\nexport const a = n;\n", 'new/n.ts': 'export const n = 1;\n' });
    expect(check(buildGraph(dir), FLOORS).problems).toEqual(['folder new has no floor: add it to FLOORS in scripts/check-imports.ts']);
  });

  it('resolves index.ts, ignores tests and other packages, and counts type-only imports apart', () => {
    const dir = fixture({
      'low/index.ts': "import { z } from 'zod';\nexport const x = z;\n",
      'low/x.test.ts': "import { h } from '../high/h.ts';\nexport const t = h;\n",
      'high/h.ts': "import { x } from '../low';\nimport type { x as X } from '../low/index.ts';\nexport const h: typeof X = x;\n",
    });
    const graph = buildGraph(dir);
    expect(graph.files).toEqual(['high/h.ts', 'low/index.ts']);
    expect(graph.edges).toEqual([{ from: 'high/h.ts', to: 'low/index.ts', typeOnly: false }]);
    expect(check(graph, FLOORS).problems).toEqual([]);
  });

  it('names folders: top-level folders, domain/* subfolders, top-level files', () => {
    expect(folderOf('engine/local/index.ts')).toBe('engine');
    expect(folderOf('domain/runs/service.ts')).toBe('domain/runs');
    expect(folderOf('services.ts')).toBe('services');
    expect(
      cycles(
        ['a', 'b', 'c'],
        [
          ['a', 'b'],
          ['b', 'c'],
        ],
      ),
    ).toEqual([]);
    expect(
      cycles(
        ['a', 'b', 'c'],
        [
          ['a', 'b'],
          ['b', 'c'],
          ['c', 'a'],
        ],
      ),
    ).toEqual([['a', 'b', 'c']]);
  });

  it('the server source has no loops and no upward value import', () => {
    expect(check(buildGraph(SERVER_SRC)).problems).toEqual([]);
  });

  it('as a script: exit 1 with the loop on a fixture, exit 0 with the summary on the server', () => {
    const dir = fixture({ 'low/a.ts': "import './b.ts';\n", 'low/b.ts': "import './a.ts';\n" });
    const tsx = join(ROOT, 'node_modules', '.bin', 'tsx');
    const bad = spawnSync(tsx, [join(ROOT, 'scripts', 'check-imports.ts'), dir], { encoding: 'utf8' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('file cycle: low/a.ts → low/b.ts → low/a.ts');
    const good = spawnSync(tsx, [join(ROOT, 'scripts', 'check-imports.ts')], { encoding: 'utf8' });
    expect(good.stderr).toBe('');
    expect(good.status).toBe(0);
    expect(good.stdout).toMatch(/^check-imports: packages\/server\/src\n\d+ files, \d+ imports/);
    expect(good.stdout).toContain('no cycles between files or folders, no value import runs upward.');
  }, 30_000);
});
