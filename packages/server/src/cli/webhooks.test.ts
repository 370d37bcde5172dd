/**
 * The webhook and approval commands on a temporary data directory (embedded store), JSON output
 * checked against the store. One command runs as a real process (the binary works);
 * the rest run in-process through the same entry point, which keeps the suite fast.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeFailure, runCli } from '../cli.ts';
import { openStore } from '../store/open.ts';
import { seedDataDir } from '@service/testing/store';
import { cliCommand } from '@service/testing/cli-processes';
import { WEBHOOK_HELP } from './webhooks.ts';

const SERVER_DIR = fileURLToPath(new URL('../../', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('service webhooks / approvals (CLI)', () => {
  let dir: string;
  const env: NodeJS.ProcessEnv = { ...process.env, WEBHOOK_ALLOW_HOSTS: '127.0.0.1' };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'SECRET_KEY']) delete env[name];

  /** In-process: the command's exit code and output as the binary would give them. */
  async function cli(...args: string[]): Promise<Run> {
    let stdout = '';
    try {
      // The same environment as the real processes: embedded store, allow-list, no DATABASE_URL.
      const code = await runCli([...args, '--data-dir', join(dir, 'data')], (line) => (stdout += `${line}\n`), env);
      return { code, stdout, stderr: '' };
    } catch (err) {
      const { code, message } = describeFailure(err);
      return { code, stdout, stderr: message };
    }
  }

  /** A real process: `node --import tsx cli.ts …`. */
  function binary(...args: string[]): Promise<Run> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [...cliCommand(args[0]), ...args, '--data-dir', join(dir, 'data')], { cwd: SERVER_DIR, env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
  }
  const json = async (...args: string[]) => {
    const r = await cli(...args, '--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'webhooks-cli-'));
    seedDataDir(join(dir, 'data'));
    // In-process: `init` is a real process in cli.test.ts; the real process of this suite is the test below.
    expect(await cli('init', '--json')).toMatchObject({ code: 0, stderr: '' });
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives --help on every command, and exits 0', async () => {
    const commands = Object.keys(WEBHOOK_HELP).filter((c) => c !== 'webhooks');
    const runs = await Promise.all(commands.map((command) => cli(...command.split(' '), '--help')));
    runs.forEach((r, i) => {
      expect({ command: commands[i], code: r.code }).toEqual({ command: commands[i], code: 0 });
      expect(r.stdout).toContain(`Usage: service ${commands[i]}`);
    });
  }, 120_000);

  it('runs as a real process: inbound create --json prints {slug, secret}', async () => {
    const r = await binary('webhooks', 'inbound', 'create', '--slug', 'from-binary', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ slug: 'from-binary', secret: expect.stringMatching(/^whsec_[0-9A-Za-z]{32}$/) });
  }, 120_000);

  it('inbound: create prints {slug, secret}; list, pause, resume and revoke', async () => {
    const created = await json(
      'webhooks',
      'inbound',
      'create',
      '--slug',
      'crm-leads',
      '--algorithm',
      'sha512',
      '--signature-header',
      'X-Crm-Signature',
      '--timestamp-required',
      '--rpm',
      '30',
      '--template',
      'Lead {{ name }}',
      '--agent',
      'sales',
    );
    expect(Object.keys(created).sort()).toEqual(['secret', 'slug']);
    expect(created).toEqual({ slug: 'crm-leads', secret: expect.stringMatching(/^whsec_[0-9A-Za-z]{32}$/) });
    const list = await json('webhooks', 'inbound', 'list');
    expect((list.data as unknown[]).filter((w) => (w as { slug: string }).slug === 'crm-leads')).toEqual([
      expect.objectContaining({
        slug: 'crm-leads',
        algorithm: 'sha512',
        signatureHeader: 'X-Crm-Signature',
        timestampRequired: true,
        requestsPerMinute: 30,
        template: 'Lead {{ name }}',
        agentSlug: 'sales',
        status: 'active',
      }),
    ]);
    expect(JSON.stringify(list)).not.toContain(created.secret as string);
    expect(await json('webhooks', 'inbound', 'pause', 'crm-leads')).toMatchObject({ status: 'paused' });
    expect(await json('webhooks', 'inbound', 'resume', 'crm-leads')).toMatchObject({ status: 'active' });
    expect(await json('webhooks', 'inbound', 'revoke', 'crm-leads')).toMatchObject({ status: 'revoked' });
    const bad = await cli('webhooks', 'inbound', 'create', '--slug', 'x', '--algorithm', 'md5');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--algorithm must be one of sha256, sha512');
  }, 120_000);

  it('outbound: create prints {id, secret}; list, rotate-secret, pause, resume, ping, test-event and replay', async () => {
    const created = await json('webhooks', 'outbound', 'create', '--url', 'https://127.0.0.1:9443/hook', '--events', 'run.completed,approval.decided');
    expect(created).toEqual({ id: expect.stringMatching(/^dst_/), secret: expect.stringMatching(/^whsec_[0-9A-Za-z]{32}$/) });
    const id = created.id as string;
    const list = await json('webhooks', 'outbound', 'list');
    expect(list.data).toEqual([
      expect.objectContaining({ id, url: 'https://127.0.0.1:9443/hook', events: ['run.completed', 'approval.decided'], status: 'active' }),
    ]);
    const rotated = await json('webhooks', 'outbound', 'rotate-secret', id);
    expect(rotated).toEqual({ id, secret: expect.stringMatching(/^whsec_/) });
    expect(rotated.secret).not.toBe(created.secret);
    expect(await json('webhooks', 'outbound', 'pause', id)).toMatchObject({ id, status: 'paused' });
    expect(await json('webhooks', 'outbound', 'resume', id)).toMatchObject({ id, status: 'active' });
    const ping = (await json('webhooks', 'outbound', 'ping', id)) as { eventIds: string[] };
    expect(ping).toEqual({ eventIds: [expect.stringMatching(/^evt_/)] });
    const testEvent = (await json('webhooks', 'outbound', 'test-event', id, '--type', 'run.failed')) as { eventIds: string[] };
    expect(testEvent).toEqual({ eventIds: [expect.stringMatching(/^evt_/)] });
    const badType = await cli('webhooks', 'outbound', 'test-event', id, '--type', 'run.started');
    expect(badType.code).toBe(2);
    expect(badType.stderr).toContain('--type must be one of');
    expect(await json('webhooks', 'outbound', 'replay', id)).toEqual({ eventIds: [] });
    const store = await openStore({ dataDir: join(dir, 'data', 'pglite') });
    try {
      // Both queued as test deliveries (attempted once, never retried), each with its own type.
      const queued = await store.query<{ event_id: string; type: string; test: boolean }>(
        `SELECT d.event_id, e.type, d.test FROM deliveries d JOIN outbox_events e ON e.id = d.event_id WHERE d.destination_id = $1 ORDER BY e.type`,
        [id],
      );
      expect(queued).toEqual([
        { event_id: ping.eventIds[0], type: 'ping', test: true },
        { event_id: testEvent.eventIds[0], type: 'run.failed', test: true },
      ]);
      const [audit] = await store.query<{ actor_type: string; details: unknown }>(
        `SELECT actor_type, details FROM audit_events WHERE action = 'destination.test_sent'`,
      );
      expect(audit).toEqual({ actor_type: 'operator', details: { type: 'run.failed', eventId: testEvent.eventIds[0] } });
    } finally {
      await store.close();
    }
    // Refused without the allow-list, and plain http always.
    const http = await cli('webhooks', 'outbound', 'create', '--url', 'http://example.com/h', '--events', 'run.completed');
    expect(http.code).toBe(2);
    const privateUrl = await cli('webhooks', 'outbound', 'create', '--url', 'https://10.0.0.8/h', '--events', 'run.completed');
    expect(privateUrl.code).toBe(1);
    expect(privateUrl.stderr).toContain('invalid_body');
  }, 120_000);

  it('approvals decide: the decision, decided_by the owner, and approval.decided queued', async () => {
    const db = await openStore({ dataDir: join(dir, 'data', 'pglite') });
    try {
      const [ws] = await db.query<{ id: string }>(`SELECT id FROM workspaces`);
      const now = new Date();
      await db.query(
        `INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, created_at, updated_at, window_hour, window_day)
         VALUES ('run_cliAAAAAAAAAAAAAAAA', $1, 'in_progress', 'finance', 'finance', 'Sonata', 'api', $2, $2, $2, $2)`,
        [ws!.id, now],
      );
      await db.query(
        `INSERT INTO approvals (id, workspace_id, run_id, agent_slug, action, summary, expires_at, created_at)
         VALUES ('apr_cliAAAAAAAAAAAAAAAA', $1, 'run_cliAAAAAAAAAAAAAAAA', 'finance', 'payment.initiate', 'Pay', $2, $3)`,
        [ws!.id, new Date(now.getTime() + 3_600_000), now],
      );
    } finally {
      await db.close();
    }
    const decided = await json('approvals', 'decide', 'apr_cliAAAAAAAAAAAAAAAA', '--decision', 'rejected');
    expect(decided).toMatchObject({ id: 'apr_cliAAAAAAAAAAAAAAAA', status: 'rejected', decidedBy: expect.stringMatching(/^usr_/) });
    const again = await cli('approvals', 'decide', 'apr_cliAAAAAAAAAAAAAAAA', '--decision', 'approved');
    expect(again.code).toBe(1);
    const check = await openStore({ dataDir: join(dir, 'data', 'pglite') });
    try {
      const events = await check.query<{ data: Record<string, unknown> }>(`SELECT data FROM outbox_events WHERE type = 'approval.decided'`);
      expect(events.map((e) => e.data)).toEqual([
        { approval_id: 'apr_cliAAAAAAAAAAAAAAAA', decision: 'rejected', decided_by: decided.decidedBy, run_id: 'run_cliAAAAAAAAAAAAAAAA' },
      ]);
      // The destination subscribed to approval.decided got its delivery queued.
      expect(await check.query(`SELECT 1 FROM deliveries d JOIN outbox_events e ON e.id = d.event_id WHERE e.type = 'approval.decided'`)).toHaveLength(1);
    } finally {
      await check.close();
    }
  }, 120_000);
});
