/**
 * @module Step 6 of `pnpm generate`: generated/docs/index.html, the API reference as one HTML file that
 * works offline (`redocly build-docs --inlineBundle`: Redoc's script is embedded, not loaded from a CDN).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GENERATED, headerLines, runBin, writeGenerated } from './generate-common.ts';

export async function generateDocs(): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), 'ais-docs-'));
  try {
    const out = join(scratch, 'index.html');
    await runBin('redocly', ['build-docs', join(GENERATED, 'openapi.yaml'), '--inlineBundle', '--output', out, '--lint-config', 'off']);
    const html = await readFile(out, 'utf8');
    assertSelfContained(html, 'docs/index.html');
    await writeGenerated('docs/index.html', withHtmlHeader(html, 'generate-docs.ts', 'generated/openapi.yaml (redocly build-docs --inlineBundle)'));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Puts the "do not edit" notice as an HTML comment right after the doctype. */
export function withHtmlHeader(html: string, script: string, source: string): string {
  const comment = `<!-- ${headerLines(script, source).join(' ')} -->`;
  const doctype = /^<!DOCTYPE html>\s*/i.exec(html);
  return doctype ? `${doctype[0].trimEnd()}\n${comment}\n${html.slice(doctype[0].length)}` : `${comment}\n${html}`;
}

/**
 * Fails when the page would need the network to work: an external script, stylesheet, font or CSS import.
 * Plain links (`<a href>`) to external pages are fine; they are navigation, not parts of the page.
 */
export function assertSelfContained(html: string, name: string): void {
  const checks: [string, RegExp][] = [
    ['external script', /<script\b[^>]*\bsrc\s*=\s*["']?(?:https?:)?\/\//gi],
    ['external stylesheet, font or icon', /<link\b[^>]*\bhref\s*=\s*["']?(?:https?:)?\/\/[^>]*>/gi],
    ['external CSS import', /@import\s+(?:url\()?\s*["']?(?:https?:)?\/\//gi],
    ['external CSS resource', /url\(\s*["']?(?:https?:)?\/\/[^)]*\)/gi],
    ['external frame', /<iframe\b[^>]*\bsrc\s*=\s*["']?(?:https?:)?\/\//gi],
  ];
  const found = checks.flatMap(([what, pattern]) => [...html.matchAll(pattern)].map((match) => `${what}: ${match[0].slice(0, 120)}`));
  if (found.length) throw new Error(`${name} is not self-contained:\n  ${found.join('\n  ')}`);
}
