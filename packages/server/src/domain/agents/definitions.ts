/**
 * @module The agents' definitions in the store (`agent_definitions`): what an admin configured for an
 * agent of the workspace (instructions, step limit, tools, approval policy), and the defaults of an
 * agent never configured. Every change notifies `AGENT_DEFINITIONS_CHANNEL` with the workspace's id in
 * the statement that makes it, and tells this process's cache at once (`definitionsVersion`).
 */
import type { Schema } from '../../contract.ts';
import { fail } from '../../errors.ts';
import type { Db, Tx } from '../../store/db.ts';
import { notifySql } from '../../store/listen.ts';
import { date, int, json, nullable, row, selectRows, text } from '../../store/rows.ts';
import { AGENT_SLUGS, type AgentSlug } from '../../vocabulary/catalog.ts';
import type { AgentDefinition } from '../agent-loop/tool.ts';
import { defaultInstructions } from './instructions.ts';

/** Notified with a workspace's id whenever one of its agents' definitions changes (any instance). */
export const AGENT_DEFINITIONS_CHANNEL = 'service_agent_definitions';

/** Model calls per run of an agent never configured. */
export const DEFAULT_STEP_LIMIT = 8;
/** Entries of `approvals` an agent may have (the contract's schema says so; its validator cannot). */
const MAX_APPROVALS = 200;
/** A tool name in the approval policy: `<area>.<verb>`. */
const TOOL_NAME = /^[a-z0-9_-]{1,64}\.[a-z0-9_-]{1,64}$/;

export type AgentConfiguration = Schema<'AgentConfiguration'>;
export type AgentConfigurationUpdate = Schema<'AgentConfigurationUpdate'>;

/** One agent's row, as stored. */
interface StoredDefinition {
  instructions: string | null;
  stepLimit: number;
  tools: string[] | null;
  approvals: Record<string, 'required' | 'not_required'>;
  updatedAt: Date;
}

let version = 0;

/** This process's count of the definition changes it made itself: a cached definition read before the latest is not used. */
export function definitionsVersion(): number {
  return version;
}

/** Every agent's definition in the workspace, the defaults for those never configured (one statement). */
export async function readDefinitions(db: Db | Tx, workspaceId: string): Promise<Map<AgentSlug, AgentDefinition>> {
  const stored = await storedDefinitions(db, workspaceId);
  return new Map(AGENT_SLUGS.map((slug) => [slug, definitionOf(slug, stored.get(slug))]));
}

/** The agent's configuration as the panel shows it. */
export async function readConfiguration(db: Db | Tx, workspaceId: string, slug: AgentSlug): Promise<AgentConfiguration> {
  return configurationOf(slug, (await storedDefinitions(db, workspaceId, slug)).get(slug));
}

/**
 * The rules of an update the contract's validator does not check (distinct tools, the approval policy's
 * names and size). @throws ServiceError invalid_body naming the field
 */
export function checkUpdate(update: AgentConfigurationUpdate): void {
  if (update.tools !== null && new Set(update.tools).size !== update.tools.length)
    throw fail('invalid_body', "Invalid body field 'tools': must not name a tool twice.", { param: 'tools' });
  const names = Object.keys(update.approvals);
  if (names.length > MAX_APPROVALS || names.some((name) => !TOOL_NAME.test(name)))
    throw fail('invalid_body', "Invalid body field 'approvals'.", { param: 'approvals' });
}

/** Replaces the agent's definition, in the caller's transaction; every instance hears of it when it commits. */
export async function writeDefinition(tx: Tx, workspaceId: string, slug: AgentSlug, update: AgentConfigurationUpdate, now: Date): Promise<void> {
  await tx.query(
    `WITH changed AS (
       INSERT INTO agent_definitions (workspace_id, agent_slug, instructions, step_limit, tools, approvals, updated_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7)
       ON CONFLICT (workspace_id, agent_slug) DO UPDATE
         SET instructions = EXCLUDED.instructions, step_limit = EXCLUDED.step_limit, tools = EXCLUDED.tools,
             approvals = EXCLUDED.approvals, updated_at = EXCLUDED.updated_at
       RETURNING workspace_id
     ) SELECT ${notifySql(AGENT_DEFINITIONS_CHANNEL, 'changed.workspace_id')} FROM changed`,
    [
      workspaceId,
      slug,
      update.instructions,
      update.stepLimit,
      update.tools === null ? null : JSON.stringify(update.tools),
      JSON.stringify(update.approvals),
      now,
    ],
  );
  version += 1;
}

/** Tells this process's cache that a change committed (once more after the commit: a read cached meanwhile saw the row before it). */
export function definitionsChanged(): void {
  version += 1;
}

function definitionOf(slug: AgentSlug, stored: StoredDefinition | undefined): AgentDefinition {
  return {
    slug,
    instructions: stored?.instructions ?? defaultInstructions(slug),
    stepLimit: stored?.stepLimit ?? DEFAULT_STEP_LIMIT,
    tools: stored?.tools ?? null,
    approvals: stored?.approvals ?? {},
  };
}

function configurationOf(slug: AgentSlug, stored: StoredDefinition | undefined): AgentConfiguration {
  const definition = definitionOf(slug, stored);
  return {
    slug,
    instructions: definition.instructions,
    customInstructions: stored?.instructions != null,
    defaultInstructions: defaultInstructions(slug),
    stepLimit: definition.stepLimit,
    tools: definition.tools === null ? null : [...definition.tools],
    approvals: { ...definition.approvals },
    updatedAt: stored ? stored.updatedAt.toISOString() : null,
  };
}

const definitionRow = row({
  agent_slug: text,
  instructions: nullable(text),
  step_limit: int,
  tools: json,
  approvals: json,
  updated_at: date,
});

async function storedDefinitions(db: Db | Tx, workspaceId: string, slug?: AgentSlug): Promise<Map<string, StoredDefinition>> {
  const rows = await selectRows(
    db,
    definitionRow,
    `SELECT agent_slug, instructions, step_limit, tools, approvals, updated_at FROM agent_definitions
      WHERE workspace_id = $1 AND ($2::text IS NULL OR agent_slug = $2)`,
    [workspaceId, slug ?? null],
  );
  return new Map(
    rows.map((r) => [
      r.agent_slug,
      {
        instructions: r.instructions,
        stepLimit: r.step_limit,
        // Both drivers parse jsonb; a string is parsed here should one not.
        tools: parsed(r.tools) as string[] | null,
        approvals: (parsed(r.approvals) ?? {}) as StoredDefinition['approvals'],
        updatedAt: r.updated_at,
      },
    ]),
  );
}

function parsed(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}
