/**
 * @module Micro-benchmark of the redactor on the strings of an invocation: ids, timestamps, short
 * answers, error text, model text, and a stream of model text (one fragment, then the end). With
 * BEFORE (the path of another copy of `packages/server/src/redact/index.ts`, e.g. an older commit's
 * extracted with `git archive <commit> packages/server/src/redact | tar -x -C /tmp/redact-before`), both
 * run alternately, batch by batch, on the same inputs, after checking they give the same output.
 *
 *   pnpm tsx scripts/bench/redact.ts
 *   BEFORE=/tmp/redact-before/packages/server/src/redact/index.ts pnpm tsx scripts/bench/redact.ts
 *   (ROUNDS=7 BATCH=1000: batches per variant and case, strings per batch)
 *   BENCH_STREAMS=1 BEFORE=… pnpm tsx scripts/bench/redact.ts
 *   (instead: long texts streamed in fragments of 7, 16, 32 and 64 characters, CPU ms per text, each variant twice)
 *
 * Prints, per case, CPU µs per string (`process.cpuUsage`): the median of the rounds and their range.
 * Unique strings (a counter in each) measure the redactor itself; repeated ones what a memo saves.
 */
import * as current from '../../packages/server/src/redact/index.ts';

interface Redactor {
  text(s: string): string;
  stream(): { push(s: string): string; end(): string };
}
const variants: [string, Redactor][] = [];
if (process.env.BEFORE) variants.push(['before', ((await import(process.env.BEFORE)) as typeof current).createRedactor()]);
variants.push([process.env.BEFORE ? 'after' : 'current', current.createRedactor()]);

const answer =
  'Finance here; numbers first. About "Which invoices are more than 60 days overdue":\n\n1. Reconcile the open invoices against the ledger before deciding anything.\n2. Check the cash-flow impact over the next 90 days, not just this month.\n3. Flag the VAT treatment so the filing stays clean.\n\nI can produce the reconciliation report next.';
let serial = 0;
const unique = (make: (n: number) => string) => () => make(++serial);
const cases: [string, () => string, boolean][] = [
  ['run id', unique((n) => `run_${n.toString(36)}aB3dE9fGhJ${n}`), false],
  ['UUID', unique((n) => `3f2a9c1e-7b4d-4e8a-9c1f-${(0x100000000000 + n).toString(16)}`), false],
  ['timestamp', unique((n) => new Date(1.8e12 + n * 1000).toISOString()), false],
  ['short answer', unique((n) => `${n} matching entries, 2 invoices open.`), false],
  ['error message', unique((n) => `The request body is not valid: messages[${n}].content must be a string.`), false],
  [
    'fixed short strings, repeated',
    (() => {
      const fixed = ['Sonata', 'finance', 'Called ledger.search.', 'Sonata answered as Finance.'];
      return () => fixed[serial++ % fixed.length]!;
    })(),
    false,
  ],
  ['model text, 360 chars', unique((n) => `${answer} #${n}`), false],
  ['model text, 360 chars, repeated', () => answer, false],
  ['model text, 1,440 chars', unique((n) => `${answer}${answer}${answer}${answer} #${n}`), false],
  [
    'leaky text (trace, IP, model, key)',
    unique(
      (n) =>
        `Error: connect ECONNREFUSED 10.0.3.7:5432 at Socket.x (/app/node_modules/pg/lib/client.js:${n}:7); model gpt-4o-mini, key sk-proj-Abc123Def456Ghi789`,
    ),
    false,
  ],
  ['stream: model text, one fragment, end', unique((n) => `${answer} #${n}`), true],
];

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const BATCH = Number(process.env.BATCH ?? 1000);

function run(redactor: Redactor, inputs: string[], stream: boolean): number {
  const start = process.cpuUsage();
  if (stream) {
    for (const s of inputs) {
      const st = redactor.stream();
      st.push(s);
      st.end();
    }
  } else for (const s of inputs) redactor.text(s);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / inputs.length;
}

if (process.env.BENCH_STREAMS) {
  const prose = 'Finance here; numbers first. Reconcile the open invoices against the ledger before deciding anything. ';
  const texts: [string, string][] = [
    ['prose, 100 KB', prose.repeat(1000)],
    ['"a-a-" (near-matches), 100 KB', 'a-a-'.repeat(25000)],
    ['letters only, 100 KB', 'abcdefghij'.repeat(10000)],
    ['"g p " (a spelled name, never ended), 100 KB', 'g p '.repeat(25000)],
    ['"Error: " then 100 KB on one line', `Error: ${'x '.repeat(50000)}`],
    ['"1.2.3." (near IPs), 96 KB', '1.2.3.'.repeat(16000)],
  ];
  for (const [label, text] of texts) {
    for (const size of [7, 16, 32, 64]) {
      const cells: string[] = [];
      for (const [name, redactor] of [...variants, ...variants]) {
        const start = process.cpuUsage();
        const stream = redactor.stream();
        let out = '';
        for (let i = 0; i < text.length; i += size) out += stream.push(text.slice(i, i + size));
        out += stream.end();
        const used = process.cpuUsage(start);
        if (out !== redactor.text(text)) throw new Error(`${name}: the stream differs from the one-shot redaction on ${label}`);
        cells.push(`${name} ${((used.user + used.system) / 1000).toFixed(0)} ms`);
      }
      console.log(`${label.padEnd(46)} fragments of ${String(size).padStart(2)}: ${cells.join(', ')}`);
    }
  }
  process.exit(0);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [label, next, stream] of cases) {
  const probe = next();
  const outputs = new Set(variants.map(([, r]) => r.text(probe)));
  if (outputs.size > 1) throw new Error(`the variants disagree on ${label}`);
  const times = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  for (let round = -2; round < ROUNDS; round += 1) {
    const order = round % 2 === 0 ? variants : [...variants].reverse();
    for (const [name, redactor] of order) {
      const t = run(redactor, Array.from({ length: BATCH }, next), stream);
      if (round >= 0) times.get(name)!.push(t);
    }
  }
  const cells = [...times].map(([name, xs]) => `${name} ${median(xs).toFixed(2)} µs (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`);
  console.log(`${label.padEnd(40)} ${cells.map((c) => c.padEnd(34)).join(' ')}`);
}
