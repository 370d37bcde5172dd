/** The logger: JSON lines with ISO time and level names, credential fields censored, readable pretty form, settings checked. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../config.ts';
import { createLogger, prettyLine, readLogSettings } from './index.ts';

function capture(level: 'info' | 'debug' = 'info') {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level, destination }), lines };
}

describe('logger', () => {
  it('writes one JSON line with time, level name and fields, below the level nothing', async () => {
    const { logger, lines } = capture('info');
    logger.debug({ requestId: 'req_1' }, 'hidden');
    logger.info({ requestId: 'req_2', status: 200 }, 'request');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'info', msg: 'request', requestId: 'req_2', status: 200, time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  });

  it('censors credential fields and redacts error messages', async () => {
    const { logger, lines } = capture('debug');
    logger.info(
      { password: 'hunter2-hunter2', headers: { authorization: 'Bearer service_sk_live_abc', cookie: 'service_session=x' }, csrfToken: 'csrf_1' },
      'x',
    );
    logger.error({ err: new Error('connect to postgres://admin:pw@10.1.2.3:5432/db failed') }, 'y');
    await new Promise((resolve) => setImmediate(resolve));
    const text = JSON.stringify(lines);
    for (const secret of ['hunter2-hunter2', 'service_sk_live_abc', 'service_session=x', 'csrf_1', 'admin:pw', '10.1.2.3']) expect(text).not.toContain(secret);
    expect(lines[0]).toMatchObject({ password: '[redacted]', headers: { authorization: '[redacted]', cookie: '[redacted]' }, csrfToken: '[redacted]' });
  });

  it('censors a credential field at the top, one and two levels down, in arrays too, and leaves the caller its object', async () => {
    const { logger, lines } = capture('info');
    const fields = {
      token: 't0',
      upstream: { secret: 's1', host: 'engine', nested: { apiKey: 'k2', 'set-cookie': ['c2'] } },
      attempts: [{ signature: 'sig1', status: 500 }],
      when: new Date('2026-11-27T10:00:00Z'),
      status: 200,
    };
    logger.info(fields, 'request');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines[0]).toMatchObject({
      token: '[redacted]',
      upstream: { secret: '[redacted]', host: 'engine', nested: { apiKey: '[redacted]', 'set-cookie': '[redacted]' } },
      attempts: [{ signature: '[redacted]', status: 500 }],
      when: '2026-11-27T10:00:00.000Z',
      status: 200,
    });
    // The object logged is the caller's: it is not changed in place.
    expect(fields.upstream.nested.apiKey).toBe('k2');
    expect(fields.attempts[0]!.signature).toBe('sig1');
  });

  it("keeps an error's stack frames (file:line) and redacts only the values in its message", async () => {
    const { logger, lines } = capture('info');
    function failingStep(): never {
      throw new Error('login to postgres://admin:pw@10.1.2.3:5432/db failed with service_sk_live_abcdefabcdefabcdefabcdef');
    }
    try {
      failingStep();
    } catch (err) {
      logger.error({ err }, 'unhandled error');
    }
    await new Promise((resolve) => setImmediate(resolve));
    const { stack, message } = (lines[0] as { err: { stack: string; message: string } }).err;
    for (const secret of ['admin:pw', '10.1.2.3', 'service_sk_live_abc']) expect(JSON.stringify(lines[0])).not.toContain(secret);
    expect(message).toContain('[redacted]');
    const frames = stack.split('\n').slice(1);
    // The first frame is the function that threw, with this file and its line.
    expect(frames[0]).toMatch(/^ {4}at failingStep \(.*log\/index\.test\.ts:\d+:\d+\)$/);
    expect(frames.filter((frame) => /:\d+:\d+\)?$/.test(frame)).length).toBeGreaterThan(1);
    expect(stack.split('\n')[0]).toBe(`Error: ${message}`);
  });

  it('reads LOG_LEVEL and LOG_FORMAT, refusing other values', () => {
    expect(readLogSettings({})).toEqual({ level: 'info', format: 'json' });
    expect(readLogSettings({ LOG_LEVEL: 'DEBUG', LOG_FORMAT: 'pretty' })).toEqual({ level: 'debug', format: 'pretty' });
    expect(() => loadConfig({}, { LOG_LEVEL: 'verbose' })).toThrow(ConfigError);
    expect(() => loadConfig({}, { LOG_FORMAT: 'xml' })).toThrow(ConfigError);
  });

  it('formats a line readably for LOG_FORMAT=pretty', () => {
    const line = JSON.stringify({ level: 'info', time: '2026-11-23T12:01:02.345Z', msg: 'request', operationId: 'getRun', status: 200 });
    expect(prettyLine(line)).toBe('12:01:02.345 INFO  request {"operationId":"getRun","status":200}');
  });

  // The default destination queues lines and writes them from the thread pool: a process that ends at
  // once, however it ends, must still write every line it logged.
  it.each([
    ['flushLog, then process.exit', 'flushLog(logger); process.exit(0);', 0],
    ['process.exit at once', 'process.exit(0);', 0],
    // The server process (`serve`) installs flushLogOnCrash: the write in flight at the crash is waited for too.
    ['an uncaught exception in the server process', "flushLogOnCrash(logger); setImmediate(() => { throw new Error('fatal'); });", 1],
  ])('writes every queued line before the process ends (%s)', (_name, ending, status) => {
    const dir = mkdtempSync(join(tmpdir(), 'log-'));
    try {
      const script = join(dir, 'lines.ts');
      const module = new URL('./index.ts', import.meta.url).pathname;
      writeFileSync(
        script,
        `import { createLogger, flushLog, flushLogOnCrash } from ${JSON.stringify(module)};\n` +
          `const logger = createLogger();\nfor (let i = 0; i < 5000; i++) logger.info({ i, pad: 'x'.repeat(200) }, 'line');\n${ending}\n`,
      );
      const child = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      expect(child.status).toBe(status);
      const lines = child.stdout.split('\n').filter(Boolean);
      expect(lines).toHaveLength(5000);
      expect(JSON.parse(lines[4999]!)).toMatchObject({ i: 4999, msg: 'line' });
      // A crash still says why, on stderr, as Node would.
      if (status === 1) expect(child.stderr).toMatch(/^Error: fatal\n {4}at /m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
