/**
 * The bench scripts configured by environment variables answer `--help` with their own module comment and exit 0,
 * before they build or start anything (`pnpm bench:concurrency --help` used to build the server and run the whole
 * benchmark).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { moduleComment } from '../scripts/bench/help.ts';

const ROOT = join(import.meta.dirname, '..');
const tsx = join(ROOT, 'node_modules', '.bin', 'tsx');
const SCRIPTS = ['concurrency', 'stall', 'rate-limit', 'outside-store', 'inside-store', 'validators'];

describe('bench scripts --help', () => {
  it('reads a module comment as plain text', () => {
    const source = '/**\n * @module What it measures:\n *\n *   pnpm bench:x    (BENCH_Y=1)\n */\nimport x from "y";\n/** not this */';
    expect(moduleComment(source)).toBe('What it measures:\n\n  pnpm bench:x    (BENCH_Y=1)');
  });

  it.each(SCRIPTS)('%s prints its module comment and exits 0', { timeout: 60_000 }, async (name) => {
    const file = join(ROOT, 'scripts', 'bench', `${name}.ts`);
    const { stdout } = await promisify(execFile)(tsx, [file, '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 50_000 });
    expect(stdout.trim()).toBe(moduleComment(readFileSync(file, 'utf8')));
    expect(stdout).toMatch(/pnpm (exec )?(tsx|bench:)/);
  });
});
