/**
 * @module The rules of the tenant isolation matrix (isolation.test.ts), apart from the test that
 * runs it: every operation of the contract is classified, and each classification fits its path.
 *
 * Kinds:
 * - `resource`: a path parameter names a resource of a workspace; another workspace's id is
 *   `404 not_found` with the same body as an id that does not exist.
 * - `list`: the answer lists the caller's resources; none of another workspace's ids appear.
 * - `own`: acts on the caller's own workspace without naming a resource in the path (usage,
 *   creation, invocation, the MCP bridge); its own check shows nothing of the other workspace.
 *   A path parameter is allowed only with a reason (`pathParameter`), e.g. an agent slug of the
 *   catalog, which names no tenant resource.
 * - `inbound`: signed by an inbound webhook's own secret instead of a credential.
 * - `public`: no credential at all (login).
 */

export type IsolationKind = 'resource' | 'list' | 'own' | 'inbound' | 'public';

/** The part of a classification these rules read. */
export interface Classification {
  kind: IsolationKind;
  /** For `own`: why the operation's path parameter names no tenant resource. */
  pathParameter?: string;
}

/** The part of a route these rules read (generated/routes.ts has more). */
export interface OperationRef {
  operationId: string;
  path: string;
}

/** `/runs/{run_id}/cancel` → `['run_id']`. */
export function pathParameters(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
}

/** Operations of the contract that the table does not classify: each one fails the matrix. */
export function unclassified(operations: readonly OperationRef[], table: Readonly<Record<string, Classification>>): string[] {
  return operations.filter((op) => !Object.hasOwn(table, op.operationId)).map((op) => op.operationId);
}

/** Entries of the table that name no operation of the contract (renamed or removed). */
export function stale(operations: readonly OperationRef[], table: Readonly<Record<string, Classification>>): string[] {
  const known = new Set(operations.map((op) => op.operationId));
  return Object.keys(table).filter((id) => !known.has(id));
}

/**
 * Classifications that do not fit the operation's path: a `resource` without a path parameter, or
 * an operation with a path parameter that is neither `resource` nor `inbound` and gives no reason.
 */
export function misfits(operations: readonly OperationRef[], table: Readonly<Record<string, Classification>>): string[] {
  const problems: string[] = [];
  for (const op of operations) {
    const entry = table[op.operationId];
    if (!entry) continue;
    const params = pathParameters(op.path);
    if (entry.kind === 'resource' && params.length === 0) problems.push(`${op.operationId}: 'resource' but ${op.path} has no path parameter`);
    if (params.length > 0 && entry.kind !== 'resource' && entry.kind !== 'inbound' && !entry.pathParameter) {
      problems.push(`${op.operationId}: ${op.path} names {${params.join('}, {')}} but is '${entry.kind}' without a reason`);
    }
  }
  return problems;
}
