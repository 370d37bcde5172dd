/**
 * @module The orchestrator's router: picks the departmental agent that handles a request.
 * Deterministic keyword scoring, so the same request always reaches the same department and
 * the choice can be explained. The rationale quotes only the router's own vocabulary, never the
 * caller's text, so it is safe to record as a run step.
 */
import { DEPARTMENT_SLUGS, getAgent, type DepartmentSlug } from './catalog.ts';
import { createTextMemo } from '../memo.ts';
import { ROUTER_KEYWORDS, type KeywordTable } from './router-keywords.ts';

interface RouterMessage {
  readonly role: string;
  readonly content: string;
}

interface RouteOptions {
  /** Departments the workspace may use (its plan, minus paused agents). Default: all ten. */
  readonly candidates?: readonly DepartmentSlug[];
  /** Where a request that matches nothing goes. Default: `customer-care`, the front desk every plan has. */
  readonly fallback?: DepartmentSlug;
  readonly keywords?: KeywordTable;
}

interface RouteDecision {
  readonly agentSlug: DepartmentSlug;
  /** One sentence for the run's routing step. Contains only catalog names and router terms. */
  readonly rationale: string;
  /** Router terms that matched, strongest first (at most five). */
  readonly matchedTerms: readonly string[];
  readonly score: number;
  /** True when nothing matched and the fallback was chosen. */
  readonly fallback: boolean;
}

/** Bounded work per message: a classifier needs the gist, not 500,000 characters. */
const MAX_CHARS_PER_MESSAGE = 50_000;
/**
 * Earlier turns are read newest first, at most this many characters in all: a 4 MiB conversation
 * of one-letter words cost seconds of scoring on the event loop, and the latest turns say most.
 */
const MAX_THREAD_CHARS = 50_000;

/**
 * Routes a request. The latest user message decides; when it matches nothing, the earlier user
 * turns of the conversation are scored together; when those match nothing either, the fallback.
 * Ties go to the department listed first in the catalog.
 */
export function routeRequest(messages: readonly RouterMessage[], options: RouteOptions = {}): RouteDecision {
  const candidates = options.candidates ?? DEPARTMENT_SLUGS;
  if (candidates.length === 0) throw new Error('routeRequest needs at least one candidate department');
  const tallies = options.keywords ? scorer(compile(options.keywords, candidates)) : defaultTallies;
  const userTexts = messages.filter((m) => m.role === 'user').map((m) => m.content.slice(0, MAX_CHARS_PER_MESSAGE));
  const latest = userTexts.at(-1) ?? '';

  const fromLatest = best(tallies(latest), candidates);
  if (fromLatest) return decide(fromLatest, '');
  const fromThread = best(tallies(threadText(userTexts)), candidates);
  if (fromThread) return decide(fromThread, " from the conversation's earlier turns");

  const fallback =
    options.fallback && candidates.includes(options.fallback) ? options.fallback : candidates.includes('customer-care') ? 'customer-care' : candidates[0]!;
  return {
    agentSlug: fallback,
    rationale: `No department matched the request; routed to ${nameOf(fallback)}, the default.`,
    matchedTerms: [],
    score: 0,
    fallback: true,
  };
}

/** Scores of a text against every term of `terms`, by department. */
function scorer(terms: readonly Term[]): (text: string) => Tally[] {
  return (text) => score(words(text), terms);
}

/**
 * The default vocabulary's scores, by text: an invocation routes the same text twice (when it starts and
 * in the local engine), and conversations repeat. Scored against every department once: `best` keeps to
 * the candidates, and a department's tally depends on its own terms only. At most 500 texts and 2,000,000
 * characters of them kept (a text over 500,000 characters is scored again each time).
 */
const DEFAULT_TERMS = compile(ROUTER_KEYWORDS, DEPARTMENT_SLUGS);
const TALLIES = createTextMemo<Tally[]>({ maxEntries: 500, maxChars: 2_000_000 });
const scoreDefault = scorer(DEFAULT_TERMS);
const defaultTallies = (text: string): Tally[] => TALLIES.get(text, scoreDefault);

/** Splits text into lowercase words without accents; keeps `follow-up`, `a/b`, `wi-fi` whole. */
export function words(text: string): string[] {
  const plain = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
  return plain.match(/[a-z0-9]+(?:[-/][a-z0-9]+)*/g) ?? [];
}

/** The user turns' text for the thread score: the newest turns up to {@link MAX_THREAD_CHARS}. */
function threadText(userTexts: readonly string[]): string {
  const kept: string[] = [];
  let budget = MAX_THREAD_CHARS;
  for (let i = userTexts.length - 1; i >= 0 && budget > 0; i -= 1) {
    const text = userTexts[i]!.slice(0, budget);
    kept.unshift(text);
    budget -= text.length;
  }
  // A newline between turns: a word never joins the end of one turn to the start of the next.
  return kept.join('\n');
}

interface Term {
  readonly department: DepartmentSlug;
  readonly label: string;
  readonly weight: number;
  readonly parts: readonly { readonly text: string; readonly prefix: boolean }[];
}

interface Tally {
  readonly department: DepartmentSlug;
  readonly score: number;
  readonly matched: readonly Term[];
}

function compile(table: KeywordTable, candidates: readonly DepartmentSlug[]): Term[] {
  return candidates.flatMap((department) =>
    Object.entries(table[department]).map(([term, weight]) => ({
      department,
      weight,
      label: term.replace(/\*/g, ''),
      parts: term.split(' ').map((part) => ({ text: part.replace(/\*$/, ''), prefix: part.endsWith('*') })),
    })),
  );
}

function score(tokens: readonly string[], terms: readonly Term[]): Tally[] {
  const byDepartment = new Map<DepartmentSlug, Term[]>();
  for (const term of terms) {
    if (!occurs(term, tokens)) continue;
    byDepartment.set(term.department, [...(byDepartment.get(term.department) ?? []), term]);
  }
  return [...byDepartment].map(([department, matched]) => ({
    department,
    // A term counts once however often it appears, so repeating a word cannot force a route.
    score: matched.reduce((sum, term) => sum + term.weight, 0),
    matched: [...matched].sort((a, b) => b.weight - a.weight),
  }));
}

function occurs(term: Term, tokens: readonly string[]): boolean {
  const n = term.parts.length;
  for (let i = 0; i + n <= tokens.length; i++) {
    if (term.parts.every((part, k) => (part.prefix ? tokens[i + k]!.startsWith(part.text) : tokens[i + k] === part.text))) {
      return true;
    }
  }
  return false;
}

function best(tallies: readonly Tally[], candidates: readonly DepartmentSlug[]): Tally | undefined {
  let winner: Tally | undefined;
  for (const department of candidates) {
    const tally = tallies.find((t) => t.department === department);
    if (tally && tally.score > 0 && (!winner || tally.score > winner.score)) winner = tally;
  }
  return winner;
}

function decide(tally: Tally, where: string): RouteDecision {
  const matchedTerms = tally.matched.slice(0, 5).map((term) => term.label);
  const quoted = matchedTerms
    .slice(0, 3)
    .map((label) => `"${label}"`)
    .join(', ');
  return {
    agentSlug: tally.department,
    rationale: `Routed to ${nameOf(tally.department)}${where}: the request mentions ${quoted}.`,
    matchedTerms,
    score: tally.score,
    fallback: false,
  };
}

function nameOf(slug: DepartmentSlug): string {
  return getAgent(slug)?.name ?? slug;
}
