/**
 * A run's events across two `service serve` processes on one PostgreSQL database: the run executes
 * on server A; its reader is on server B, which hears the live tail through LISTEN/NOTIFY
 * (hub.ts). A client whose stream from A drops resumes on B with Last-Event-ID and gets
 * every later fragment once and the same terminal event. Runs when DATABASE_URL is set (CI), in a
 * database of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zRunEvent } from '../../../../../generated/zod.ts';
import { randomBase62 } from '../../random.ts';
import { cliProcesses, type CliProcesses } from '@service/testing/cli-processes';
import { parseSseWithIds } from '@service/testing/sse';
import { freshDatabase } from '@service/testing/store';

const DATABASE_URL = process.env.DATABASE_URL;
type RunEvent = ReturnType<typeof zRunEvent.parse>;

describe.skipIf(!DATABASE_URL)('run events across two servers on PostgreSQL', () => {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let dir: string;
  let cli: CliProcesses;
  let apiKey: string;
  let a: { url: string };
  let b: { url: string };

  beforeAll(async () => {
    database = await freshDatabase(DATABASE_URL!, 'runevents');
    dir = mkdtempSync(join(tmpdir(), 'run-events-two-servers-'));
    // Fragments 150 ms apart: the run (about 20 of them) is still executing on A while B follows it. At 30 ms a run
    // lasted some 0.6 s, which a loaded machine could spend on the hops before B reads the run (A's stream, B's
    // watch answered over NOTIFY, B's read of the run) and find it completed.
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url, LOCAL_ENGINE_FRAGMENT_DELAY_MS: '150', SECRET_KEY: randomBase62(40) };
    for (const name of ['REDIS_URL', 'METRICS_PORT']) delete env[name];
    cli = cliProcesses(dir, env);
    apiKey = (JSON.parse(await cli.run('init', '--json')) as { apiKey: string }).apiKey;
    [a, b] = (await Promise.all([cli.serve(), cli.serve()])) as [{ url: string }, { url: string }];
  }, 90_000);

  afterAll(async () => {
    cli?.killAll();
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  });

  const headers = () => ({ authorization: `Bearer ${apiKey}` });

  function invoke(content: string, signal?: AbortSignal) {
    return fetch(`${a.url}/v1/inference`, {
      method: 'POST',
      headers: { ...headers(), 'content-type': 'application/json' },
      body: JSON.stringify({ alias: 'Sonata', agentSlug: 'sales', stream: true, messages: [{ role: 'user', content }] }),
      ...(signal ? { signal } : {}),
    });
  }

  /** B's stream of the run's events; `onFirstFragment` is awaited when the first text.delta arrives. */
  async function eventsOnB(runId: string, lastEventId?: string, onFirstFragment?: () => Promise<void>): Promise<RunEvent[]> {
    const res = await fetch(`${b.url}/v1/runs/${runId}/events`, { headers: { ...headers(), ...(lastEventId ? { 'last-event-id': lastEventId } : {}) } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let raw = '';
    let seen = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      raw += decoder.decode(value, { stream: true });
      if (!seen && raw.includes('event: text.delta')) {
        seen = true;
        await onFirstFragment?.();
      }
    }
    return parseSseWithIds(raw).map((e) => zRunEvent.parse(e.data));
  }

  async function runOnB(runId: string): Promise<{ status: string; content: string | null }> {
    return ((await (await fetch(`${b.url}/runs/${runId}`, { headers: headers() })).json()) as { run: { status: string; content: string | null } }).run;
  }

  const text = (log: readonly RunEvent[]) => log.map((e) => (e.type === 'text.delta' ? e.delta : '')).join('');

  it('a stream dropped on A resumes on B with Last-Event-ID: each later fragment once, the same terminal, the same text', { timeout: 60_000 }, async () => {
    const controller = new AbortController();
    const res = await invoke('Draft a renewal proposal for Northwind with pricing tiers and next steps', controller.signal);
    const runId = res.headers.get('x-run-id')!;
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let raw = '';
    const complete = () => parseSseWithIds(raw.slice(0, raw.lastIndexOf('\n\n') + 2));
    while (complete().length < 2) raw += decoder.decode((await reader.read()).value, { stream: true });
    controller.abort();
    await reader.cancel().catch(() => {});
    const before = complete();
    const lastId = before.at(-1)!.id!;

    // The fragments reach B while the run still executes on A: live, not read from the store at its end.
    let live = '';
    const rest = await eventsOnB(runId, lastId, async () => {
      live = (await runOnB(runId)).status;
    });
    expect(live).toBe('in_progress');
    expect(rest.map((e) => e.sequence)).toEqual(rest.map((_, i) => Number(lastId) + 1 + i));
    expect(rest.at(-1)).toMatchObject({ type: 'run.completed', runId });
    const run = await runOnB(runId);
    expect(run.status).toBe('completed');
    expect(before.map((e) => (e.data as { delta: string }).delta).join('') + text(rest)).toBe(run.content);
  });

  it('B follows a run executing on A from its start to its terminal event, as A streams it', { timeout: 60_000 }, async () => {
    const res = await invoke('Summarise the Q3 pipeline by region and stage');
    const runId = res.headers.get('x-run-id')!;
    let live = '';
    const [log, stream] = await Promise.all([
      eventsOnB(runId, undefined, async () => {
        live = (await runOnB(runId)).status;
      }),
      res.text(),
    ]);
    expect(live).toBe('in_progress');
    const fragments = parseSseWithIds(stream)
      .filter((e) => e.event === 'message')
      .map((e) => ({ sequence: Number(e.id), delta: (e.data as { delta: string }).delta }));
    expect(log.slice(0, 2).map((e) => e.type)).toEqual(['run.created', 'run.routed']);
    expect(log.filter((e) => e.type === 'text.delta').map((e) => ({ sequence: e.sequence, delta: (e as { delta: string }).delta }))).toEqual(fragments);
    expect(log.map((e) => e.sequence)).toEqual(log.map((_, i) => 1 + i));
    expect(log.at(-1)!.type).toBe('run.completed');
  });
});
