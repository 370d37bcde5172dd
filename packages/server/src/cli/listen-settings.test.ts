/**
 * Where `service serve` listens, as `pnpm start` (its `start:server`) and `pnpm dev` run it: the defaults are the CLI's
 * (port 8080, 127.0.0.1, ./data), PORT / HOST / DATA_DIR replace them, and flags win over both, also
 * when pnpm hands them on after a `--` (`pnpm start -- --port N`). The scripts are read from the root
 * package.json, so a flag hard-coded there (which would win over PORT) fails this test.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS, commandConfig, runCli } from '../cli.ts';
import { ConfigError } from '../config.ts';
import { parseCommandArgs } from './commands.ts';

const ROOT = resolve(import.meta.dirname, '../../../..');
const SCRIPTS = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** The settings of `pnpm <script> <extra>` with `env`: the script's `serve` arguments, then what pnpm appends. */
function settingsOf(script: string, extra: string[], env: NodeJS.ProcessEnv) {
  const match = /cli\.(?:js|ts) serve(.*)$/.exec(SCRIPTS[script]!);
  if (!match) throw new Error(`the ${script} script does not run \`serve\`: ${SCRIPTS[script]}`);
  const args = [...match[1]!.trim().split(/\s+/).filter(Boolean), ...extra];
  const { values } = parseCommandArgs(COMMANDS.commands.serve!, args);
  const config = commandConfig(values, env);
  return { port: config.port, host: config.host, dataDir: config.dataDir };
}

// `pnpm start` hands over to `start:server` (scripts/bootstrap.mjs, which test/bootstrap.test.ts covers).
describe.each(['start:server', 'dev'])('pnpm %s', (script) => {
  it('listens on 127.0.0.1:8080 with ./data by default', () => {
    expect(settingsOf(script, [], {})).toEqual({ port: 8080, host: '127.0.0.1', dataDir: resolve('data') });
  });

  it('honours PORT, HOST and DATA_DIR', () => {
    expect(settingsOf(script, [], { PORT: '18501', HOST: '0.0.0.0', DATA_DIR: '/srv/service' })).toEqual({
      port: 18501,
      host: '0.0.0.0',
      dataDir: '/srv/service',
    });
  });

  it.each([[['--', '--port', '18502']], [['--port', '18502']]])('takes %j over PORT', (extra) => {
    expect(settingsOf(script, [...extra, '--host', '::1'], { PORT: '18501', HOST: '0.0.0.0' })).toMatchObject({ port: 18502, host: '::1' });
  });
});

describe('the port', () => {
  it('reaches serve through the dispatcher after a `--` (pnpm start -- --port N)', async () => {
    // A port that is not one stops serve before it opens anything: the flag was read as a flag.
    await expect(runCli(['serve', '--', '--port', 'nope'], () => {}, {})).rejects.toThrow(new ConfigError('Not a port number: nope'));
  });

  it('is refused, with one line, when it is not a port number', () => {
    expect(() => commandConfig({}, { PORT: 'eighty' })).toThrow(new ConfigError('Not a port number: eighty'));
    expect(() => commandConfig({ port: '70000' }, {})).toThrow(ConfigError);
  });

  it('0 picks a free one', () => {
    expect(commandConfig({ port: '0' }, { PORT: '18501' }).port).toBe(0);
  });
});
