/**
 * The operator's commands on a real embedded store: agents list/pause/resume, plan show/set and the
 * manual kill switch, with what an invocation then sees, and each change in the audit log.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../clock.ts';
import { workspaceAgents } from '../domain/agents/settings.ts';
import { createSecretBox, ephemeralSecretKey } from '../domain/webhooks/secret-box.ts';
import { initWorkspace } from '../domain/workspaces/init.ts';
import { openStore } from '../store/open.ts';
import { seedDataDir } from '@service/testing/store';
import { runCli } from '../cli.ts';
import { UsageError } from './usage.ts';

let dir: string;
let databaseUrl: string | undefined;

beforeEach(async () => {
  // These commands read DATABASE_URL like the real CLI; this suite works on its own embedded store.
  databaseUrl = process.env.DATABASE_URL;
  delete process.env.DATABASE_URL;
  dir = await mkdtemp(join(tmpdir(), 'service-agents-cli-'));
  seedDataDir(dir);
  // The CLI keeps its embedded store under <data-dir>/pglite.
  const db = await openStore({ dataDir: join(dir, 'pglite') });
  await initWorkspace(db, systemClock, { secretBox: createSecretBox(ephemeralSecretKey()) });
  await db.close();
});
afterEach(async () => {
  if (databaseUrl !== undefined) process.env.DATABASE_URL = databaseUrl;
  await rm(dir, { recursive: true, force: true });
});

async function cli(...argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runCli([...argv, '--data-dir', dir], (line) => lines.push(line));
  return { code, out: lines.join('\n') };
}

describe('service agents / plan / kill-switch', () => {
  // Each command opens the embedded store afresh, as the CLI does: seconds of CPU each when other suites share the cores.
  it('pauses and resumes an agent, sets the plan, flips the manual switch', { timeout: 90_000 }, async () => {
    expect(await cli('agents', 'pause', 'legal', '--reason', 'Contract review backlog')).toEqual({ code: 0, out: 'Paused legal: Contract review backlog' });
    expect(await cli('plan', 'set', 'starter')).toEqual({ code: 0, out: 'Plan set to starter.' });
    const listed = JSON.parse((await cli('agents', 'list', '--json')).out) as { plan: string; data: { slug: string; state: string; reason: string | null }[] };
    expect(listed.plan).toBe('starter');
    expect(listed.data.find((a) => a.slug === 'legal')).toMatchObject({ state: 'not_in_plan', reason: 'Contract review backlog' });
    expect(listed.data.find((a) => a.slug === 'sales')).toMatchObject({ state: 'active', reason: null });

    const on = JSON.parse((await cli('kill-switch', 'on', '--json')).out) as { manual: boolean; activeSince: string };
    expect(on.manual).toBe(true);
    const status = JSON.parse((await cli('kill-switch', 'status', '--json')).out) as { manualSince: string; hour: { limitStu: number } };
    expect(status.manualSince).toBe(on.activeSince);
    expect(status.hour.limitStu).toBe(10_000_000);
    expect((await cli('kill-switch', 'off')).out).toBe('Manual kill switch off.');
    expect((await cli('agents', 'resume', 'legal')).out).toBe('Resumed legal.');

    const db = await openStore({ dataDir: join(dir, 'pglite') });
    try {
      const [ws] = await db.query<{ id: string }>(`SELECT id FROM workspaces`);
      const settings = await workspaceAgents(db, ws!.id);
      expect(settings.plan).toBe('starter');
      expect([...(settings.paused ?? new Map())]).toEqual([]);
      expect(await db.query(`SELECT 1 FROM kill_switches`)).toEqual([]);
      // Each change is in the workspace's audit log, the operator at the command line its actor (no address, no request).
      const audit = await db.query<Record<string, unknown>>(
        `SELECT action, actor_type, actor_id, actor_label, target_id, address, request_id FROM audit_events WHERE workspace_id = $1 AND actor_id = 'cli' ORDER BY created_at, action`,
        [ws!.id],
      );
      const cliActor = { actor_type: 'operator', actor_id: 'cli', actor_label: 'command line', address: null, request_id: null };
      expect(audit).toEqual([
        { action: 'agent.paused', target_id: 'legal', ...cliActor },
        { action: 'kill_switch.engaged', target_id: 'manual', ...cliActor },
        { action: 'kill_switch.released', target_id: 'manual', ...cliActor },
        { action: 'agent.resumed', target_id: 'legal', ...cliActor },
      ]);
    } finally {
      await db.close();
    }
  });

  it('refuses bad arguments with a usage error, and prints help', async () => {
    await expect(cli('agents', 'pause', 'legal')).rejects.toThrow(UsageError);
    await expect(cli('agents', 'pause', 'procurement', '--reason', 'x')).rejects.toThrow(/No agent has the slug procurement/);
    await expect(cli('plan', 'set', 'premium')).rejects.toThrow(/starter, growth, enterprise/);
    const help = await cli('kill-switch', 'on', '--help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: service kill-switch on/);
  });
});
