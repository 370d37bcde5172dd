/**
 * @module Test helper: a real PgBouncer (Debian's `pgbouncer` package) on loopback in front of the PostgreSQL of a
 * connection string, in transaction pooling mode, as an operator may put it between the service and PostgreSQL.
 * It trusts every client of the user in the URL (auth_type trust), listens on a free port of 127.0.0.1 and runs as
 * `nobody` when the tests run as root (PgBouncer refuses to run as root).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

export const PGBOUNCER = '/usr/sbin/pgbouncer';

export function pgbouncerInstalled(): boolean {
  return existsSync(PGBOUNCER);
}

export interface Pgbouncer {
  /** `databaseUrl` (a URL of the PostgreSQL it fronts) with PgBouncer's host and port instead. */
  via(databaseUrl: string): string;
  port: number;
  stop(): Promise<void>;
}

/** Starts PgBouncer in `poolMode` in front of `databaseUrl`'s server; resolves once it listens. */
export async function startPgbouncer(databaseUrl: string, poolMode: 'transaction' | 'session' = 'transaction'): Promise<Pgbouncer> {
  const target = new URL(databaseUrl);
  const user = decodeURIComponent(target.username || 'postgres');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
  // Readable by `nobody`, whom PgBouncer becomes when started as root.
  chmodSync(dir, 0o755);
  const ini = join(dir, 'pgbouncer.ini');
  const users = join(dir, 'users.txt');
  writeFileSync(users, `"${user}" ""\n`, { mode: 0o644 });
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${users}`,
      `pool_mode = ${poolMode}`,
      'max_client_conn = 500',
      'default_pool_size = 20',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'nobody'] : []), ini], { stdio: ['ignore', 'pipe', 'pipe'] });
  await listening(child, port);
  return {
    port,
    via(url) {
      const through = new URL(url);
      through.hostname = '127.0.0.1';
      through.port = String(port);
      return through.toString();
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once PgBouncer says it listens on `port`; rejects with what it printed if it exits first. */
function listening(child: ChildProcess, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`PgBouncer did not listen within 10 s: ${output}`));
    }, 10_000);
    const read = (data: Buffer) => {
      output += data.toString();
      if (output.includes(`listening on 127.0.0.1:${port}`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`PgBouncer exited (${code ?? signal}): ${output}`));
    });
  });
}
