/**
 * A run waiting for an approval survives kill -9 of its instance: the real server (`service serve`, embedded PGlite in a
 * temporary data directory, the local engine) pauses the README's run (the sales agent drafts an email, then asks to
 * send it), is killed with SIGKILL, and starts again: the run is still `in_progress` with the same `waitingFor`. Killed
 * once more, the owner decides while it is down (`service approvals decide` on the store); at the next start the run
 * resumes and completes, the email sent once, and nothing resumes it a second time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliProcesses, spreadApi, until, type CliProcesses } from '@service/testing/cli-processes';
import { zInferenceResponse, zRunDetail } from '../../../../../generated/zod.ts';

describe('a run waiting for an approval, kill -9 and restarts', { timeout: 180_000 }, () => {
  let dir: string;
  let apiKey: string;
  let cli: CliProcesses;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'waiting-crash-'));
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY']) delete env[name];
    env.TRUST_PROXY = '1';
    cli = cliProcesses(dir, env);
    apiKey = (JSON.parse(await cli.run('init', '--json')) as { apiKey: string }).apiKey;
  }, 60_000);

  afterAll(() => {
    cli?.killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  // Spread over addresses (TRUST_PROXY=1): the per-IP limit is not what this test is about.
  const api = spreadApi(() => apiKey, '10.8');
  const detailOf = async (url: string, runId: string) => {
    const res = await api(url, `/v1/runs/${runId}`);
    expect(res.status).toBe(200);
    return zRunDetail.parse(await res.json());
  };
  const kill = async (child: import('node:child_process').ChildProcess) => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };

  it('keeps the run waiting across kill -9, and a decision taken while it was down resumes it once', async () => {
    const first = await cli.serve();
    const asked = await api(first.url, '/v1/agents/sales/messages', {
      method: 'POST',
      body: JSON.stringify({ alias: 'Sonata', messages: [{ role: 'user', content: 'Send Dana Whitfield the Q4 renewal follow-up email.' }] }),
    });
    expect(asked.status).toBe(200);
    const body = zInferenceResponse.parse(await asked.json());
    expect(body.waitingFor).toMatchObject({ action: 'email.send' });
    const approvalId = body.waitingFor!.id;
    await kill(first.child);

    // Started again: the run still waits for the same approval, and nothing resumed it.
    const second = await cli.serve();
    const waiting = await detailOf(second.url, body.runId);
    expect(waiting.run).toMatchObject({ status: 'in_progress', waitingFor: { id: approvalId, action: 'email.send' } });
    expect(waiting.toolCalls.filter((c) => c.name === 'email.send')).toEqual([expect.objectContaining({ status: 'pending_approval', result: null })]);
    await kill(second.child);

    // Decided while no server runs (the CLI on the embedded store), then started again: the run resumes and ends.
    const decided = JSON.parse(await cli.run('approvals', 'decide', approvalId, '--decision', 'approved', '--json')) as { status: string };
    expect(decided.status).toBe('approved');
    const third = await cli.serve();
    let done = waiting;
    await until(
      async () => {
        done = await detailOf(third.url, body.runId);
        return done.run.status !== 'in_progress';
      },
      'the run to resume and end',
      60_000,
      250,
    );
    expect(done.run.status).toBe('completed');
    expect(done.run.waitingFor).toBeUndefined();
    expect(done.toolCalls.filter((c) => c.name === 'email.send')).toEqual([expect.objectContaining({ status: 'completed' })]);
    expect(done.steps.map((s) => s.kind)).toContain('approval');

    // Another start resumes nothing: the email was sent once.
    await kill(third.child);
    const fourth = await cli.serve();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = await detailOf(fourth.url, body.runId);
    expect(after.toolCalls.filter((c) => c.name === 'email.send')).toHaveLength(1);
    expect(after.run.status).toBe('completed');
  });
});
