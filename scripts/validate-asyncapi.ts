/**
 * @module Validates asyncapi/asyncapi.yaml with @asyncapi/parser (the AsyncAPI CLI is a 1.5 GB install,
 * the parser alone is what it runs). Exits non-zero on any error-level diagnostic.
 */
import { resolve } from 'node:path';
import { Parser, fromFile } from '@asyncapi/parser';

const file = resolve(process.argv[2] ?? 'asyncapi/asyncapi.yaml');
const parser = new Parser();
const { document, diagnostics } = await fromFile(parser, file).parse();

// Severity 0 is an error, 1 a warning (Spectral's scale).
const errors = diagnostics.filter((d) => d.severity === 0);
const warnings = diagnostics.filter((d) => d.severity === 1);
for (const d of [...errors, ...warnings]) {
  const where = d.path.join('.') || '(root)';
  console.log(`${d.severity === 0 ? 'error' : 'warn '} ${where}: ${d.message} [${d.code}]`);
}
if (!document || errors.length > 0) {
  console.error(`✗ ${file}: ${errors.length} error(s)`);
  process.exit(1);
}
const messages = document.allMessages().length;
const channels = document.allChannels().length;
console.log(`✓ ${file}: AsyncAPI ${document.version()} valid (${channels} channels, ${messages} messages, ${warnings.length} warning(s))`);
