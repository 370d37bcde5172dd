/**
 * @module `pnpm check:drift`: regenerates generated/ and fails, listing the files, when the result differs
 * from what git has committed (changed, new or deleted files). Generation is deterministic, so a difference
 * means someone changed the contract (or a generator) without running `pnpm generate` and committing.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { GENERATED_ROOTS, ROOT } from './generate-common.ts';

const generate = spawnSync(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'scripts', 'generate.ts')], { cwd: ROOT, stdio: 'inherit' });
if (generate.status !== 0) {
  console.error('check:drift: `pnpm generate` failed, so drift cannot be checked (see above).');
  process.exit(generate.status ?? 1);
}

const roots = GENERATED_ROOTS.map((root) => `${root}/`);
const status = git(['status', '--porcelain', '--untracked-files=all', '--', ...roots]);
const diff = spawnSync('git', ['diff', '--exit-code', '--quiet', '--', ...roots], { cwd: ROOT });
if (diff.status !== 0 && diff.status !== 1) fail(`git diff failed: ${diff.stderr.toString()}`);

if (status.trim() || diff.status === 1) {
  const files = status
    .split('\n')
    .filter(Boolean)
    .map((line) => `  ${describe(line.slice(0, 2))} ${line.slice(3)}`);
  console.error(
    [
      '',
      `check:drift: ${roots.join(', ')} differ from what git has committed:`,
      ...files,
      '',
      'Run `pnpm generate` and commit the generated folders with the contract change that caused it',
      `(\`git diff -- ${roots.join(' ')}\` shows the difference).`,
    ].join('\n'),
  );
  process.exit(1);
}
console.log(`check:drift: ${roots.join(', ')} match the committed files.`);

function git(args: string[]): string {
  const result = spawnSync('git', args, { cwd: ROOT });
  if (result.status !== 0) fail(`git ${args.join(' ')} failed: ${result.stderr.toString()}`);
  return result.stdout.toString();
}

function describe(code: string): string {
  if (code === '??') return 'new (untracked)';
  if (code.includes('D')) return 'deleted        ';
  if (code.includes('A')) return 'added          ';
  return 'changed        ';
}

function fail(message: string): never {
  console.error(`check:drift: ${message}`);
  process.exit(2);
}
