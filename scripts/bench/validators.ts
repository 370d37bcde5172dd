/**
 * @module Micro-benchmark of request validation: the contract's zod schema of an invocation body (generated/zod.ts,
 * what the server runs) against the same schema compiled by Ajv from the bundled contract (generated/openapi.json,
 * JSON Schema 2020-12 with formats: the fuzzer's judge, packages/fuzz `createValidator`). Bodies: the benchmark's
 * invocation, a conversation of 40 messages, and an invalid body (a message without `role`). Both validators must
 * agree on each body before anything is timed; each round runs them alternately, batch by batch.
 *
 *   pnpm tsx scripts/bench/validators.ts          (ROUNDS=7 BATCH=20000)
 *
 * Prints, per body, CPU µs per validation (`process.cpuUsage`, the body's `JSON.parse` included, as the server
 * parses before it validates): the median of the rounds and their range.
 */
import { fileURLToPath } from 'node:url';
import { zInferenceRequest } from '../../generated/zod.ts';
import { createValidator, loadDocument } from '../../packages/fuzz/src/index.ts';
import { helpFromModuleComment } from './help.ts';
import { INVOCATION } from './probes.ts';

helpFromModuleComment(import.meta.url);

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const BATCH = Number(process.env.BATCH ?? 20_000);

// The fuzzer's judge: Ajv over the bundled contract, each schema compiled once.
const ajv = createValidator(loadDocument(fileURLToPath(new URL('../../generated/openapi.json', import.meta.url))));
const INFERENCE_REQUEST = { $ref: '#/components/schemas/InferenceRequest' };

const conversation = {
  ...INVOCATION,
  messages: Array.from({ length: 40 }, (_, i) => ({
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: `Message ${i} of the conversation about the open opportunities in the pipeline for next quarter.`,
  })),
};
const bodies: [string, string][] = [
  ['invocation (the benchmark)', JSON.stringify(INVOCATION)],
  ['conversation of 40 messages', JSON.stringify(conversation)],
  ['invalid (a message without role)', JSON.stringify({ ...INVOCATION, messages: [{ content: 'hello' }] })],
];

const validators: [string, (text: string) => boolean][] = [
  ['zod (generated/zod.ts)', (text) => zInferenceRequest.safeParse(JSON.parse(text)).success],
  ['Ajv (compiled from the contract)', (text) => ajv.isValid(INFERENCE_REQUEST, JSON.parse(text))],
];

for (const [name, text] of bodies) {
  const verdicts = validators.map(([, validate]) => validate(text));
  if (new Set(verdicts).size !== 1) throw new Error(`the validators disagree on the ${name} body: ${verdicts.join(', ')}`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, text] of bodies) {
  const times = validators.map((): number[] => []);
  for (let round = 0; round < ROUNDS; round += 1)
    validators.forEach(([, validate], v) => {
      const before = process.cpuUsage();
      for (let i = 0; i < BATCH; i += 1) validate(text);
      const used = process.cpuUsage(before);
      times[v]!.push((used.user + used.system) / BATCH);
    });
  console.log(`${name} (${text.length} bytes):`);
  validators.forEach(([label], v) => {
    const t = times[v]!;
    console.log(`  ${label.padEnd(34)} ${median(t).toFixed(2)} µs (${Math.min(...t).toFixed(2)}-${Math.max(...t).toFixed(2)})`);
  });
}
