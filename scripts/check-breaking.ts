/**
 * @module `pnpm check:breaking`: fails when generated/openapi.json breaks clients generated from the last
 * released contract (the highest `contract-releases/openapi-X.Y.Z.json`), listing each break on one line.
 * A break passes only when CHANGELOG.md declares a new major (a `## [X.Y.Z]` heading whose major is greater
 * than the release's): the breaks are then printed as declared. The rules are in scripts/breaking/rules.ts;
 * how to release is in contract-releases/README.md.
 *
 * Exit codes: 0 no break, or every break declared; 1 undeclared breaks; 2 usage error or unreadable input.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, type Json } from './generate-common.ts';
import { compareContracts, formatFinding, RULES } from './breaking/rules.ts';
import { declaredMajor, latestRelease, parseVersion, type Version } from './breaking/releases.ts';
import { operationsOf } from './breaking/walk.ts';

const RELEASES = join(ROOT, 'contract-releases');

const USAGE = `Usage: pnpm check:breaking [--base FILE] [--head FILE] [--changelog FILE]

Compares two OpenAPI documents and exits 1 listing each change that breaks clients generated from the
first one, unless the changelog declares a new major version.

  --base FILE       the released contract (default: the highest contract-releases/openapi-X.Y.Z.json)
  --head FILE       the new contract (default: generated/openapi.json)
  --changelog FILE  where a new major is declared as "## [X.Y.Z]" (default: CHANGELOG.md)
  -h, --help        this text

Breaking changes:
${Object.entries(RULES)
  .map(([rule, text]) => `  ${rule.padEnd(25)}${text}`)
  .join('\n')}

Exit codes: 0 no breaking change, or all declared by a new major; 1 undeclared breaking changes;
2 usage error or unreadable input.`;

let options: { base?: string; head?: string; changelog?: string; help?: boolean };
try {
  options = parseArgs({
    options: { base: { type: 'string' }, head: { type: 'string' }, changelog: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  }).values;
} catch (error) {
  console.error(`check:breaking: ${(error as Error).message} (--help lists the options)`);
  process.exit(2);
}
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}

const base = loadBase(options.base);
const headPath = options.head ? resolve(options.head) : join(ROOT, 'generated', 'openapi.json');
const head = { path: headPath, doc: readJson(headPath) };
const changelogPath = options.changelog ? resolve(options.changelog) : join(ROOT, 'CHANGELOG.md');
if (options.changelog && !existsSync(changelogPath)) fail(`no changelog at ${changelogPath}`);
const changelog = existsSync(changelogPath) ? readFileSync(changelogPath, 'utf8') : '';

let findings: ReturnType<typeof compareContracts>;
try {
  findings = compareContracts(base.doc, head.doc);
} catch (error) {
  fail(`cannot compare the contracts: ${(error as Error).message}`);
}

const versionOf = (doc: Json) => (typeof doc?.info?.version === 'string' ? ` ${doc.info.version}` : '');
const compared = `${show(head.path)}${versionOf(head.doc)} against ${show(base.path)}${versionOf(base.doc)}`;
const operations = operationsOf(base.doc);
const webhooks = operations.filter((entry) => entry.kind === 'webhook').length;
const scope = `${operations.length - webhooks} operations and ${webhooks} webhooks of the release compared`;
const lines = findings.map((finding) => `  - ${formatFinding(finding)}`);
const count = `${findings.length} breaking change${findings.length === 1 ? '' : 's'}`;

if (findings.length === 0) {
  console.log(`check:breaking: no breaking change in ${compared} (${scope}).`);
  process.exit(0);
}

const declared = base.version ? declaredMajor(changelog, base.version) : undefined;
if (declared) {
  console.log(
    [
      `check:breaking: ${count} in ${compared}, declared by ${show(changelogPath)} "## [${declared.text}]" (a new major over ${base.version!.text}):`,
      ...lines,
      `Release ${declared.text} by copying generated/openapi.json to contract-releases/openapi-${declared.text}.json (contract-releases/README.md).`,
    ].join('\n'),
  );
  process.exit(0);
}

const next = base.version ? `${base.version.major + 1}.0.0` : 'X.0.0';
console.error(
  [
    `check:breaking: ${count} in ${compared}, for clients generated from the release:`,
    ...lines,
    '',
    `Make the change compatible, or declare a new major: a "## [${next}]" entry in ${show(changelogPath)} that`,
    `describes these changes (see contract-releases/README.md). \`pnpm check:breaking --help\` lists the rules.`,
  ].join('\n'),
);
process.exit(1);

/** The base contract: --base, or the highest release; its version is what a new major must exceed. */
function loadBase(option: string | undefined): { path: string; doc: Json; version?: Version } {
  if (option) {
    const path = resolve(option);
    const doc = readJson(path);
    return { path, doc, version: parseVersion(String(doc?.info?.version ?? '')) };
  }
  const release = latestRelease(existsSync(RELEASES) ? readdirSync(RELEASES) : []);
  if (!release) fail(`no released contract (contract-releases/openapi-X.Y.Z.json): see contract-releases/README.md`);
  const path = join(RELEASES, release.file);
  const doc = readJson(path);
  if (doc?.info?.version !== release.version.text) {
    fail(`${show(path)} has info.version ${JSON.stringify(doc?.info?.version)}, not ${release.version.text}: a release file must be named after its version`);
  }
  return { path, doc, version: release.version };
}

function readJson(path: string): Json {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    fail(`cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    fail(`${path} is not JSON: ${(error as Error).message}`);
  }
}

/** A path relative to the repository when it lies inside it. */
function show(path: string): string {
  const inside = relative(ROOT, path);
  return inside && !inside.startsWith('..') && !isAbsolute(inside) ? inside : path;
}

function fail(message: string): never {
  console.error(`check:breaking: ${message}`);
  process.exit(2);
}
