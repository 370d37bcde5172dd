/**
 * Graceful shutdown over real HTTP: `service serve` (embedded PGlite) receives SIGTERM while a
 * synchronous invocation is being answered and an invocation stream hangs in the engine. The listener
 * stops accepting connections at once; the synchronous request finishes within SHUTDOWN_GRACE_MS; the
 * stream ends with `event: error` `service_unavailable`; the process exits 0; after a restart the
 * streamed run is not left `in_progress`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliProcesses, until, type CliProcesses } from '@service/testing/cli-processes';

describe('graceful shutdown on SIGTERM', () => {
  let dir: string;
  let cli: CliProcesses;
  let apiKey: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'shutdown-'));
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY', 'METRICS_PORT']) delete env[name];
    // Every fragment of the local engine takes 100 ms: a synchronous answer is in flight for about a second.
    Object.assign(env, { SHUTDOWN_GRACE_MS: '4000', LOCAL_ENGINE_FRAGMENT_DELAY_MS: '100' });
    cli = cliProcesses(dir, env);
    apiKey = (JSON.parse(await cli.run('init', '--json')) as { apiKey: string }).apiKey;
  }, 60_000);

  afterAll(() => {
    cli?.killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finishes requests in flight, ends the open stream with service_unavailable and exits 0', { timeout: 120_000 }, async () => {
    const server = await cli.serve();
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const invoke = (content: string, stream: boolean) =>
      fetch(`${server.url}/v1/inference`, {
        method: 'POST',
        headers: stream ? { ...headers, accept: 'text/event-stream' } : headers,
        body: JSON.stringify({ alias: 'Sonata', agentSlug: 'sales', stream, messages: [{ role: 'user', content }] }),
      });

    // A stream that hangs in the engine after its first fragment.
    const streamed = await invoke('[[hang]] Draft a follow-up email to Dana', true);
    expect(streamed.status).toBe(200);
    const reader = streamed.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('delta')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const runId = /run_[A-Za-z0-9]+/.exec(streamed.headers.get('x-run-id') ?? text)?.[0];

    // A synchronous invocation in flight when the signal arrives.
    const synchronous = invoke('Summarise the quarter for the sales team in a few sentences', false);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGTERM');

    // No new connection is accepted while the stream is still open: a load balancer's health check on
    // /readyz over a new connection is refused (ECONNREFUSED), not answered (docs/operations.md).
    let refusal: unknown;
    await until(
      () =>
        fetch(`${server.url}/readyz`).then(
          () => false,
          (err: unknown) => {
            refusal = (err as { cause?: { code?: string } }).cause?.code;
            return true;
          },
        ),
      'the listener to refuse connections',
      3_000,
    );
    expect(refusal).toBe('ECONNREFUSED');

    const answer = await synchronous;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { content: string }).content.length).toBeGreaterThan(0);

    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const last = /event: error\ndata: (.+)\n/.exec(text);
    expect(last, text).not.toBeNull();
    const error = JSON.parse(last![1]!) as Record<string, unknown>;
    expect(error).toMatchObject({ error: 'service_unavailable', message: 'The server is restarting; retry the request.', requestId: expect.any(String) });
    expect(error.runId).toMatch(/^run_/);

    expect(await exited).toBe(0);
    expect(server.output()).toContain('shutting down');

    // After a restart the stopped run is not left running.
    const again = await cli.serve();
    const run = await fetch(`${again.url}/runs/${String(runId ?? error.runId)}`, { headers });
    expect(run.status).toBe(200);
    const { run: stopped } = (await run.json()) as { run: { status: string } };
    expect(['canceled', 'failed']).toContain(stopped.status);
    again.child.kill('SIGTERM');
  });
});
