/**
 * No query builds `$n` placeholders by hand: every statement is a fixed string with fixed
 * parameters (an optional filter is a NULL-able parameter, a set is `= ANY ($1::text[])`).
 * The scan looks for the ways a placeholder is built: `$${…}` in a template, `'$' + …`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BUILT_PLACEHOLDER = /\$\$\{|['"`]\$['"`]\s*\+/g;

function builtPlaceholders(file: string, source: string): string[] {
  return [...source.matchAll(BUILT_PLACEHOLDER)].map((m) => `${file}:${source.slice(0, m.index).split('\n').length}`);
}

const SRC = fileURLToPath(new URL('..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('placeholders', () => {
  it('no source builds a $n placeholder by hand', () => {
    const found = sourceFiles(SRC).flatMap((path) => builtPlaceholders(relative(SRC, path), readFileSync(path, 'utf8')));
    expect(found).toEqual([]);
  });

  it('finds the ways a placeholder is built, and not fixed ones', () => {
    const source = [
      // `$${i + 1}` in a template, spelled in two parts here for the linter.
      'const where = filters.map((f, i) => `status = $$' + '{i + 1}`).join(" AND ");',
      "const p = '$' + (params.length + 1);",
      'await db.query(`SELECT * FROM runs WHERE id = $1 AND ($2::text IS NULL OR status = $2)`, [id, status]);',
    ].join('\n');
    expect(builtPlaceholders('x.ts', source)).toEqual(['x.ts:1', 'x.ts:2']);
  });
});
