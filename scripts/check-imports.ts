/**
 * @module `pnpm lint:imports`: the server's import graph has no loops and runs downhill.
 *
 * Reads every `.ts` file under packages/server/src (tests excluded: nothing imports a test, so a test can close no
 * loop and may import from any floor), resolves its relative imports, and fails on
 *
 * 1. an import cycle between files,
 * 2. a cycle between folders (a folder is a top-level folder of src, each `domain/*` subfolder, or a top-level file
 *    of src on its own),
 * 3. an import from a lower floor to a higher one, with the floors declared once in {@link FLOORS}.
 *
 * `import type` (and `export type … from`, and imports whose every name is marked `type`) is erased at build time, so
 * it ties nothing at run time: it counts for none of the three checks and is only counted in the summary. A dynamic
 * `import()` counts like a static import. Imports of other packages (`@service/contract`, `hono`, …) are not followed.
 *
 * `tsx scripts/check-imports.ts [dir]` checks another source dir (the test uses a fixture dir).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '..');
export const SERVER_SRC = join(ROOT, 'packages', 'server', 'src');

/**
 * The floors of packages/server/src, lowest first. A folder imports values from its own floor and the floors
 * below; from a floor above it imports only types. Folders of one floor may import each other as long as no loop
 * forms (check 2). Every folder must be listed: a new folder (or top-level file) fails until it is given a floor.
 */
export const FLOORS: readonly (readonly string[])[] = [
  // 0. Leaves: clock, randomness, crypto, errors and caught values, named lists, the contract's generated types, redaction, logs, metrics, traces, the text memo.
  ['clock', 'random', 'crypto', 'errors', 'caught', 'one-of', 'contract', 'redact', 'log', 'metrics', 'tracing', 'memo'],
  // 1. Storage: the database handle and its migrations; rate-limit counters (memory, Redis).
  ['store', 'rate-limits'],
  // 2. The shared vocabulary: aliases, the department catalog, the router's keywords and rules, plans.
  ['vocabulary'],
  // 3. Engines: the local engine and the OpenAI-compatible client.
  ['engine'],
  // 4. Domain: low-level reads first, use-cases that compose them after (a reading order; within a floor only loops fail).
  [
    'domain/standing',
    'domain/events',
    'domain/audit',
    'domain/usage',
    'domain/health',
    'domain/agents',
    'domain/keys',
    'domain/mcp-tokens',
    'domain/operators',
    'domain/sessions',
    'domain/sso',
    'domain/workspaces',
    'domain/destinations',
    'domain/webhooks',
    'domain/integrations',
    'domain/spending',
    'domain/run-events',
    'domain/agent-loop',
    'domain/runs',
    'domain/approvals',
    'domain/drafts',
    'domain/inbound-webhooks',
    'domain/mcp',
    'domain/agent-loop',
  ],
  // 5. The services handlers receive, and the worker.
  ['services', 'webhook-services', 'worker'],
  // 6. HTTP: the Hono context's variables, middleware, routes.
  ['app-env', 'middleware', 'routes'],
  // 7. The app and the config.
  ['app', 'config'],
  // 8. The composition root: the runtime (store, secret key, engines, worker loops, app) built from the config.
  ['runtime'],
  // 9. The CLI that starts it. (Test support lives in packages/testing, outside this graph.)
  ['cli', 'cli.ts'],
];

/** One import between two files under the source dir. */
export interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

export interface Graph {
  files: string[];
  edges: Edge[];
}

/** Every non-test `.ts` file under `dir`, relative to it, `/`-separated. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts'))
        out.push(relative(dir, path).split('\\').join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

/** The imports of one file: specifier and whether only types cross. */
function importsOf(path: string): { specifier: string; typeOnly: boolean }[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { specifier: string; typeOnly: boolean }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      let typeOnly = false;
      if (clause) {
        const bindings = clause.namedBindings;
        typeOnly =
          clause.isTypeOnly ||
          (!clause.name &&
            bindings !== undefined &&
            ts.isNamedImports(bindings) &&
            bindings.elements.length > 0 &&
            bindings.elements.every((e) => e.isTypeOnly));
      }
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.exportClause;
      const typeOnly =
        node.isTypeOnly || (clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly));
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) found.push({ specifier: arg.text, typeOnly: false });
    } else if (ts.isImportTypeNode(node)) {
      // `import('./x.ts').T` in a type position.
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) found.push({ specifier: arg.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The import graph of `dir` (relative imports that land on a file of `dir`). */
export function buildGraph(dir: string): Graph {
  const files = sourceFiles(dir);
  const known = new Set(files);
  const edges: Edge[] = [];
  for (const file of files) {
    const seen = new Map<string, boolean>();
    for (const { specifier, typeOnly } of importsOf(join(dir, file))) {
      if (!specifier.startsWith('.')) continue;
      const target = relative(dir, resolve(dir, dirname(file), specifier))
        .split('\\')
        .join('/');
      const to = [target, `${target}.ts`, `${target}/index.ts`, target.replace(/\.js$/, '.ts')].find((c) => known.has(c));
      if (!to) continue;
      // A file imported both ways (a value and a type) counts as a value import.
      seen.set(to, (seen.get(to) ?? true) && typeOnly);
    }
    for (const [to, typeOnly] of seen) edges.push({ from: file, to, typeOnly });
  }
  return { files, edges };
}

/** The folder a file belongs to: `domain/<name>` under domain/, the top-level folder, or the top-level file's name. */
export function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts.length === 1) return file === 'cli.ts' ? 'cli.ts' : file.replace(/\.ts$/, '');
  if (parts[0] === 'domain' && parts.length > 2) return `domain/${parts[1]}`;
  return parts[0]!;
}

/** Strongly connected components with more than one member (Tarjan), each sorted; self-loops count too. */
export function cycles(nodes: Iterable<string>, edges: Iterable<[string, string]>): string[][] {
  const next = new Map<string, Set<string>>();
  const selfLoops = new Set<string>();
  for (const node of nodes) next.set(node, new Set());
  for (const [from, to] of edges) {
    if (from === to) selfLoops.add(from);
    else next.get(from)?.add(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const connect = (node: string) => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || selfLoops.has(node)) found.push(component.sort());
    }
  };
  for (const node of next.keys()) if (!index.has(node)) connect(node);
  return found;
}

/** One path around a cycle's members, for the message: `a → b → … → a`. */
function cyclePath(members: string[], edges: [string, string][]): string {
  const inside = new Set(members);
  const next = new Map<string, string[]>();
  for (const [from, to] of edges) if (inside.has(from) && inside.has(to)) next.set(from, [...(next.get(from) ?? []), to]);
  // Breadth-first from the first member back to itself.
  const start = members[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const at = queue.shift()!;
    for (const to of next.get(at) ?? []) {
      if (to === start) {
        const path = [start];
        for (let step: string | undefined = at; step !== undefined && step !== start; step = previous.get(step)) path.splice(1, 0, step);
        return [...path, start].join(' → ');
      }
      if (!previous.has(to)) {
        previous.set(to, at);
        queue.push(to);
      }
    }
  }
  return members.join(', ');
}

export interface Report {
  problems: string[];
  summary: string[];
}

/** Runs the three checks on a graph with the given floors. */
export function check(graph: Graph, floors: readonly (readonly string[])[] = FLOORS): Report {
  const problems: string[] = [];
  const valueEdges = graph.edges.filter((e) => !e.typeOnly);

  // 1. File cycles.
  const fileEdges = valueEdges.map((e): [string, string] => [e.from, e.to]);
  for (const members of cycles(graph.files, fileEdges)) problems.push(`file cycle: ${cyclePath(members, fileEdges)}`);

  // 2. Folder cycles.
  const folders = [...new Set(graph.files.map(folderOf))].sort();
  const folderPairs = new Map<string, Edge[]>();
  for (const edge of valueEdges) {
    const from = folderOf(edge.from);
    const to = folderOf(edge.to);
    if (from === to) continue;
    const key = `${from}\0${to}`;
    folderPairs.set(key, [...(folderPairs.get(key) ?? []), edge]);
  }
  const folderEdges = [...folderPairs.keys()].map((key): [string, string] => key.split('\0') as [string, string]);
  for (const members of cycles(folders, folderEdges)) {
    const inside = new Set(members);
    const via = [...folderPairs.values()]
      .flat()
      .filter((e) => inside.has(folderOf(e.from)) && inside.has(folderOf(e.to)))
      .map((e) => `    ${e.from} → ${e.to}`);
    problems.push(`folder cycle: ${cyclePath(members, folderEdges)}\n${via.join('\n')}`);
  }

  // 3. Floors: no value import from a lower floor to a higher one.
  const floorOf = new Map<string, number>();
  floors.forEach((names, floor) => {
    for (const name of names) floorOf.set(name, floor);
  });
  for (const folder of folders) if (!floorOf.has(folder)) problems.push(`folder ${folder} has no floor: add it to FLOORS in scripts/check-imports.ts`);
  for (const edge of valueEdges) {
    const from = floorOf.get(folderOf(edge.from));
    const to = floorOf.get(folderOf(edge.to));
    if (from !== undefined && to !== undefined && to > from) {
      problems.push(
        `upward import: ${edge.from} (floor ${from}, ${folderOf(edge.from)}) → ${edge.to} (floor ${to}, ${folderOf(edge.to)}); import only types upward`,
      );
    }
  }

  const typeEdges = graph.edges.length - valueEdges.length;
  const summary = [
    `${graph.files.length} files, ${graph.edges.length} imports (${valueEdges.length} values, ${typeEdges} type-only), ${folders.length} folders, ${folderEdges.length} folder-to-folder links`,
    ...floors.map((names, floor) => {
      const present = names.filter((n) => folders.includes(n));
      const reaches = new Set<number>();
      for (const [from, to] of folderEdges) if (floorOf.get(from) === floor && floorOf.get(to) !== undefined) reaches.add(floorOf.get(to)!);
      const below = [...reaches].sort((a, b) => a - b).join(', ');
      return `  floor ${floor}: ${present.join(', ') || '(none)'}${below ? `  → imports floors ${below}` : ''}`;
    }),
  ];
  return { problems, summary };
}

if (import.meta.main ?? process.argv[1] === import.meta.filename) {
  const dir = resolve(process.argv[2] ?? SERVER_SRC);
  const { problems, summary } = check(buildGraph(dir));
  console.log(`check-imports: ${relative(ROOT, dir) || '.'}`);
  for (const line of summary) console.log(line);
  if (problems.length > 0) {
    console.error(`\ncheck-imports: ${problems.length} problem(s):`);
    for (const problem of problems) console.error(`  ${problem}`);
    process.exit(1);
  }
  console.log('check-imports: no cycles between files or folders, no value import runs upward.');
}
