/**
 * Body caps over real HTTP against `service serve` (embedded store): every body is capped while it
 * is read (64 KiB for login, 4 MiB for invocation), a declared Content-Length over the cap is
 * refused before the body is sent, a chunked body that would be 50 MB is cut off early, and
 * headers over 16 KiB get a JSON 431. Every refusal carries the spec's error body.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliProcesses, type CliProcesses } from '@service/testing/cli-processes';

const MIB = 1024 * 1024;

describe('body caps over HTTP', { timeout: 120_000 }, () => {
  let dir: string;
  let cli: CliProcesses;
  let url: URL;
  let apiKey: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'body-cap-'));
    const env: NodeJS.ProcessEnv = { ...process.env, TRUST_PROXY: '1' };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY']) delete env[name];
    cli = cliProcesses(dir, env);
    apiKey = (JSON.parse(await cli.run('init', '--json')) as { apiKey: string }).apiKey;
    url = new URL((await cli.serve()).url);
    // init and serve on a store of their own: minutes on a loaded machine.
  }, 240_000);
  afterAll(() => {
    cli?.killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  interface Answer {
    status: number;
    headers: Record<string, string | string[] | undefined>;
    body: Record<string, unknown>;
    sentBytes: number;
  }

  let ip = 0;
  /** Sends `total` bytes of `chunk`s (chunked unless `contentLength` is given) and stops writing once answered. */
  function send(
    path: string,
    options: { total: number; contentLength?: number; headers?: Record<string, string>; firstBytes?: string; pauseAfter?: number },
  ): Promise<Answer> {
    return new Promise((resolve, reject) => {
      let sentBytes = 0;
      let answered = false;
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path,
          method: 'POST',
          // A connection of its own: a request whose body is cut short leaves its socket unusable.
          agent: false,
          headers: {
            'content-type': 'application/json',
            'x-forwarded-for': `10.77.0.${(ip += 1)}`,
            ...(options.contentLength !== undefined ? { 'content-length': String(options.contentLength) } : {}),
            ...options.headers,
          },
        },
        (res) => {
          answered = true;
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => {
            req.destroy();
            resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) as Record<string, unknown>, sentBytes });
          });
        },
      );
      req.on('error', (err) => (answered ? undefined : reject(err)));
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const first = Buffer.from(options.firstBytes ?? '');
      const pump = () => {
        if (sentBytes === 0 && first.length > 0) {
          req.write(first);
          sentBytes += first.length;
        }
        while (!answered && sentBytes < options.total) {
          if (options.pauseAfter !== undefined && sentBytes >= options.pauseAfter) {
            setTimeout(pump, 100);
            return;
          }
          const piece = chunk.subarray(0, Math.min(chunk.length, options.total - sentBytes));
          sentBytes += piece.length;
          if (!req.write(piece)) {
            req.once('drain', pump);
            return;
          }
        }
        if (!answered && sentBytes >= options.total) req.end();
      };
      if (options.total === 0) req.end();
      else pump();
    });
  }

  /** `limit`: the per-IP budget of the route's class (60 API, 120 admin: login). */
  function expectTooLarge(answer: Answer, cap: number, limit = '60'): void {
    expect(answer.status).toBe(413);
    expect(answer.headers['x-request-id']).toMatch(/^req_/);
    expect(answer.headers['x-ratelimit-limit']).toBe(limit);
    expect(answer.body).toEqual({ error: 'payload_too_large', message: `The body is larger than ${cap} bytes` });
  }

  it('login refuses a declared 50 MB body at once, before it is sent', async () => {
    const answer = await send('/auth/login', { total: 0, contentLength: 50 * MIB });
    expectTooLarge(answer, 64 * 1024, '120');
  });

  it('login stops reading a chunked body that would be 50 MB soon after the cap', async () => {
    // Past 256 KiB (four times the cap, still in the kernel's buffers) the client stops writing and waits
    // for the answer, the body unfinished: the server discards what comes for 500 ms after its 413 and
    // then closes, and a client process starved of CPU for longer (a loaded test machine) would still be
    // writing then and lose the answer to EPIPE. A server that never answers fails on the test's timeout.
    const answer = await send('/auth/login', { total: 50 * MIB, firstBytes: '{"email":"', pauseAfter: 256 * 1024 });
    expectTooLarge(answer, 64 * 1024, '120');
    // The server answered long before the client could push 50 MB at it.
    expect(answer.sentBytes).toBeLessThan(50 * MIB);
  });

  it('an invocation is read up to 4 MiB, and refused above it', async () => {
    const auth = { authorization: `Bearer ${apiKey}` };
    const under = JSON.stringify({
      alias: 'Prelude',
      agentSlug: 'sales',
      messages: Array.from({ length: 6 }, () => ({ role: 'user', content: 'lorem ipsum dolor sit amet '.repeat(13_000) })),
    });
    expect(under.length).toBeGreaterThan(2 * MIB);
    const ok = await fetch(`${url.origin}/v1/inference`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'x-forwarded-for': '10.77.1.1' },
      body: under,
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ runId: expect.stringMatching(/^run_/) });

    const over = JSON.stringify({ alias: 'Prelude', messages: Array.from({ length: 9 }, () => ({ role: 'user', content: 'x'.repeat(500_000) })) });
    const refused = await send('/v1/inference', { total: Buffer.byteLength(over), headers: auth, firstBytes: over });
    expectTooLarge(refused, 4 * MIB);
    // A Content-Length that understates the body does not get more bytes read than the cap either.
    const lying = await fetch(`${url.origin}/v1/inference`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'x-forwarded-for': '10.77.1.2' },
      body: new Blob([over]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(lying.status).toBe(413);
  });

  it('headers over 16 KiB answer 431 with a JSON body and a request id', async () => {
    const res = await new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: '/usage/current', headers: { 'x-padding': 'p'.repeat(20 * 1024) } }, (r) => {
        let text = '';
        r.on('data', (d: Buffer) => (text += d.toString()));
        r.on('end', () => resolve({ status: r.statusCode!, headers: r.headers, text }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(res.status).toBe(431);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    expect(JSON.parse(res.text)).toEqual({ error: 'request_header_fields_too_large', message: expect.stringContaining('16384') });
  });
});
