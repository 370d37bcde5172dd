/**
 * @module Workspaces (tenants). Created by `init`; everything else in the store hangs off one.
 */
import type { Clock } from '../../clock.ts';
import { newId } from '../../random.ts';
import type { Db } from '../../store/db.ts';
import type { TableRow } from '../../../../../generated/db.ts';

export interface Workspace {
  id: string;
  name: string;
  createdAt: string;
}

export async function createWorkspace(db: Db, clock: Clock, name: string): Promise<Workspace> {
  const id = newId('wksp');
  const now = clock.now();
  await db.query(`INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)`, [id, name, now]);
  return { id, name, createdAt: now.toISOString() };
}

export async function listWorkspaces(db: Db): Promise<Workspace[]> {
  const rows = await db.query<Pick<TableRow<'workspaces'>, 'id' | 'name' | 'created_at'>>(
    `SELECT id, name, created_at FROM workspaces ORDER BY created_at, id`,
  );
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at.toISOString() }));
}
