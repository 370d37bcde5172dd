/**
 * @module `--help` for the bench scripts configured by environment variables: prints the script's own module comment
 * (what it measures, how to run it, its variables), as written at the top of its file, and exits 0, before the
 * script builds or starts anything.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The module comment of a source file as plain text: the `/** … *\/` block's lines, without their leading ` * `. */
export function moduleComment(source: string): string {
  const block = /\/\*\*([\s\S]*?)\*\//.exec(source)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .join('\n')
    .replace('@module ', '')
    .trim();
}

/** With `--help` or `-h` among the arguments: prints the module comment of `moduleUrl` (the caller's `import.meta.url`) and exits 0. */
export function helpFromModuleComment(moduleUrl: string, argv: readonly string[] = process.argv.slice(2)): void {
  if (!argv.includes('--help') && !argv.includes('-h')) return;
  console.log(moduleComment(readFileSync(fileURLToPath(moduleUrl), 'utf8')));
  process.exit(0);
}
