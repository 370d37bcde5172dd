/**
 * @module Composes the local engine's answer: a department's voice shaped by effort and power
 * mode, picked deterministically from a hash of the request.
 */
import { createHash } from 'node:crypto';
import type { DepartmentSlug } from '../../vocabulary/catalog.ts';
import type { EngineRequest, Effort } from '../engine.ts';
import { DEPARTMENT_VOICES } from './departments.ts';

/** Advice points per effort level. `powerMode: low` halves them (rounded up) and drops the closing. */
const POINTS_BY_EFFORT: Readonly<Record<Effort, number>> = { low: 1, medium: 3, high: 4, 'x-high': 5, max: 6 };

interface AnswerPlan {
  readonly text: string;
  readonly seed: number;
}

/** `topic` is the shortened request (see topicOf), null when the request has no text of its own. */
export function composeAnswer(request: EngineRequest, department: DepartmentSlug, topic: string | null, extras: readonly string[]): AnswerPlan {
  const voice = DEPARTMENT_VOICES[department];
  const seed = seedOf(request);
  const low = request.powerMode === 'low';
  const wanted = POINTS_BY_EFFORT[request.effort ?? 'medium'];
  const count = low ? Math.ceil(wanted / 2) : wanted;
  const start = seed % voice.points.length;
  const points = Array.from({ length: count }, (_, i) => voice.points[(start + i) % voice.points.length]!);
  const lines = [
    `${pick(voice.openers, seed)} ${topic ? `About "${topic}":` : 'About your request:'}`,
    '',
    ...points.map((point, i) => `${i + 1}. ${point}`),
    ...(extras.length > 0 ? ['', ...extras] : []),
    ...(low ? [] : ['', pick(voice.closings, seed >>> 3)]),
  ];
  return { text: lines.join('\n'), seed };
}

/** The subject of the request as the answer quotes it: the latest user text, shortened; null if empty. */
export function topicOf(text: string): string | null {
  const clean = withoutClosingPunctuation(text.replace(/\s+/g, ' ').trim());
  if (clean === '') return null;
  const all = clean.split(' ');
  const head = all.slice(0, 12).join(' ');
  return all.length > 12 ? `${head}…` : head;
}

/**
 * The text without its closing `.`, `!` and `?`. Not `/[.!?]+$/`: that tries every position of a
 * long run of them and fails at its end, quadratic (500,000 of them held the event loop for minutes).
 */
function withoutClosingPunctuation(text: string): string {
  let end = text.length;
  while (end > 0 && '.!?'.includes(text[end - 1]!)) end -= 1;
  return text.slice(0, end);
}

/**
 * Same request, same seed: the whole answer is a function of it. maxTokens stays out, so a capped
 * answer is a prefix of the uncapped one.
 */
function seedOf(request: EngineRequest): number {
  const basis = JSON.stringify([request.alias, request.agentSlug, request.messages, request.effort, request.powerMode]);
  return createHash('sha256').update(basis).digest().readUInt32BE(0);
}

function pick<T>(items: readonly T[], seed: number): T {
  return items[seed % items.length]!;
}
