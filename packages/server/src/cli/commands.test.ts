/**
 * The command table: every command of the `service` command line is in it once, with help, and
 * the dispatcher answers groups, unknown commands and --help the same way for all of them.
 */
import { describe, expect, it } from 'vitest';
import { COMMANDS, runCli } from '../cli.ts';
import { commandTable } from './commands.ts';
import { UsageError } from './usage.ts';

async function cli(...argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runCli(argv, (line) => lines.push(line), {});
  return { code, out: lines.join('\n') };
}

describe('the command table', () => {
  it('holds every command the main help lists, each with its own usage line', () => {
    expect(Object.keys(COMMANDS.commands).sort()).toEqual(
      [
        'agents list',
        'agents pause',
        'agents resume',
        'approvals decide',
        'init',
        'keys create',
        'keys list',
        'keys revoke',
        'keys rotate',
        'kill-switch off',
        'kill-switch on',
        'kill-switch status',
        'operator-token create',
        'plan set',
        'plan show',
        'secret-key rotate',
        'serve',
        'store copy',
        'totp',
        'users add',
        'users list',
        'users reset-password',
        'users reset-totp',
        'webhooks inbound create',
        'webhooks inbound list',
        'webhooks inbound pause',
        'webhooks inbound resume',
        'webhooks inbound revoke',
        'webhooks outbound create',
        'webhooks outbound list',
        'webhooks outbound pause',
        'webhooks outbound ping',
        'webhooks outbound replay',
        'webhooks outbound resume',
        'webhooks outbound rotate-secret',
        'webhooks outbound test-event',
        'workspaces create',
        'workspaces delete',
        'workspaces list',
        'workspaces update',
      ].sort(),
    );
    for (const [name, spec] of Object.entries(COMMANDS.commands)) expect(spec.help).toContain(`Usage: service ${name}`);
  });

  it('answers --help on every command with exit 0 and its help', async () => {
    for (const [name, spec] of Object.entries(COMMANDS.commands)) {
      expect(await cli(...name.split(' '), '--help')).toEqual({ code: 0, out: spec.help });
    }
  });

  it('prints a group help alone (exit 2) or asked for (exit 0), and names the group in an unknown command', async () => {
    expect(await cli('webhooks', 'inbound')).toEqual({ code: 2, out: COMMANDS.groups['webhooks inbound'] });
    expect(await cli('kill-switch', '--help')).toEqual({ code: 0, out: COMMANDS.groups['kill-switch'] });
    await expect(cli('webhooks', 'inbound', 'frobnicate')).rejects.toThrow(
      'Unknown command: webhooks inbound frobnicate. Run `service webhooks inbound --help`.',
    );
    await expect(cli('frobnicate')).rejects.toThrow(new UsageError('Unknown command: frobnicate. Run `service --help`.'));
  });

  it('refuses an unknown flag with the command help', async () => {
    await expect(cli('plan', 'show', '--verbose')).rejects.toThrow(/Unknown option '--verbose'[\s\S]*Usage: service plan show/);
  });

  it('refuses a command declared twice', () => {
    const part = { groups: {}, commands: { totp: COMMANDS.commands.totp! } };
    expect(() => commandTable(part, part)).toThrow('command "totp" is declared twice');
  });
});
