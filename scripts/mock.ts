/**
 * @module `pnpm mock`: the Prism mock of the contract (`generated/openapi.yaml`), answering with the
 * contract's examples, on the port and address asked for. Prism's own `--port` cannot be given twice,
 * so the script takes `--port` / `--host` (or PORT / HOST) and passes one of each.
 *
 *   pnpm mock                      http://127.0.0.1:4010
 *   pnpm mock --port 4020          (or PORT=4020 pnpm mock)
 *   pnpm mock --host 0.0.0.0       (or HOST)
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = resolve(import.meta.dirname, '..');

const HELP = `Usage: pnpm mock [--port P] [--host H] [--errors]

Serves the Prism mock of the contract (generated/openapi.yaml): every operation answers its documented
example; ask for a documented error with the header \`Prefer: code=404\`.
  --port P   port (default 4010, or PORT)
  --host H   address to bind (default 127.0.0.1, or HOST)
  --errors   answer 422/400 to requests that break the contract (Prism's --errors)
Run \`pnpm generate\` first after changing openapi/.`;

export interface MockSettings {
  port: number;
  host: string;
  errors: boolean;
}

/** Flags first, then PORT / HOST, then 4010 on 127.0.0.1. `pnpm mock -- --port N` passes the `--` on: ignored. */
export function mockSettings(argv: string[], env: NodeJS.ProcessEnv): MockSettings | 'help' {
  const { values, positionals } = parseArgs({
    args: argv.filter((arg) => arg !== '--'),
    options: { port: { type: 'string' }, host: { type: 'string' }, errors: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) return 'help';
  if (positionals.length > 0) throw new Error(`Unexpected argument: ${positionals[0]}`);
  const text = values.port ?? (env.PORT || '4010');
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw new Error(`Not a port number: ${text}`);
  return { port, host: values.host ?? (env.HOST || '127.0.0.1'), errors: values.errors === true };
}

function main(): void {
  let settings: MockSettings | 'help';
  try {
    settings = mockSettings(process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${HELP}\n`);
    process.exit(2);
  }
  if (settings === 'help') {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  const args = ['mock', 'generated/openapi.yaml', '--host', settings.host, '--port', String(settings.port), ...(settings.errors ? ['--errors'] : [])];
  const prism = spawn(resolve(ROOT, 'node_modules/.bin/prism'), args, { cwd: ROOT, stdio: 'inherit' });
  // Ctrl-C or a SIGTERM stops Prism too; the script exits as Prism does.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => prism.kill(signal));
  prism.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

if (import.meta.url === `file://${process.argv[1]}`) main();
