/**
 * @module `service users reset-password|reset-totp --email E`: the operator's recovery of an account,
 * for example a workspace's last owner, whom no owner can reset from the panel. Prints a single-use
 * reset link (token) valid 24 hours and ends every session of the account. With `--url` (or
 * SERVICE_URL) through the running server's operator API (`POST /operator/users/resets`, operator
 * token); without it on the store directly (the embedded store only while the server is stopped).
 */
import { systemClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { zOperatorUserResetRequest } from '../../../../generated/zod.ts';
import { COMMAND_LINE } from '../domain/audit/index.ts';
import { type AccountReset, type AccountResetKind, resetUserByEmail } from '../domain/sessions/resets.ts';
import { ServiceError } from '../errors.ts';
import type { CommandRun, CommandTable, Flags } from './commands.ts';
import { bodyFromFlags } from './flags.ts';
import { openCliStore } from '../runtime/store.ts';
import { UsageError } from './usage.ts';
import { operatorApi } from './operator-api.ts';
import { str } from './workspaces.ts';

const OPTIONS = {
  email: { type: 'string' },
  'data-dir': { type: 'string' },
  url: { type: 'string' },
  'operator-token': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const WHERE = `  --email E           the account's email (one account per email in the deployment)
  --url U             a running server (or SERVICE_URL): use its operator API instead of the store
  --operator-token T  the operator token for --url (or OPERATOR_TOKEN; prefer the variable)
  --data-dir D        embedded store directory when there is no --url (default ./data, or DATA_DIR)
  --json              machine-readable output: the AccountReset of the contract`;

const HELP = {
  'users reset-password': `Usage: service users reset-password --email E [--json] [--url U] [--data-dir D]

Creates a single-use password reset for the account and ends all of its sessions. The person redeems
the token once within 24 hours with POST /account-resets/redeem {"token","password"}, where password is
the new one (at least 12 characters); their two-step verification stays as it is.
${WHERE}`,
  'users reset-totp': `Usage: service users reset-totp --email E [--json] [--url U] [--data-dir D]

Creates a single-use two-step (TOTP) reset for the account and ends all of its sessions. The person
redeems the token once within 24 hours with POST /account-resets/redeem {"token","password"}, where
password is their current password; the answer (202) carries the new TOTP secret and changes nothing
until the same request is sent again with "totpCode", the authenticator's current code.
${WHERE}`,
};

function command(kind: AccountResetKind, name: 'users reset-password' | 'users reset-totp') {
  return {
    options: OPTIONS,
    help: HELP[name],
    async run({ values, positionals, print, env }: CommandRun) {
      if (positionals.length > 0) throw new UsageError(`Unexpected argument: ${positionals[0]}\n\n${HELP[name]}`);
      const body = bodyFromFlags(zOperatorUserResetRequest, { email: values.email, reset: kind }, { email: '--email', reset: '--email' }, HELP[name]);
      const reset = await createReset(values, env, body);
      print(values.json ? JSON.stringify(reset) : describe(reset));
      return 0;
    },
  };
}

export const userCommands: CommandTable = {
  // `service users` alone keeps showing the list of every command (the group is cli.ts's).
  groups: {},
  commands: {
    'users reset-password': command('password', 'users reset-password'),
    'users reset-totp': command('totp', 'users reset-totp'),
  },
};

async function createReset(values: Flags, env: NodeJS.ProcessEnv, body: { email: string; reset: AccountResetKind }): Promise<AccountReset> {
  const config = loadConfig({ 'data-dir': str(values['data-dir']) }, env);
  const api = operatorApi(values, config);
  if (api) return api.call<AccountReset>('POST', 'operator/users/resets', body);
  const store = await openCliStore(config, 'users');
  try {
    return await resetUserByEmail(store.db, systemClock, body, COMMAND_LINE);
  } catch (err) {
    // An unknown email is the operator's to fix: say it plainly.
    if (err instanceof ServiceError && err.status < 500) throw new UsageError(err.message);
    throw err;
  } finally {
    await store.close();
  }
}

function describe(reset: AccountReset): string {
  const what = reset.reset === 'totp' ? 'two-step verification (TOTP)' : reset.reset === 'password' ? 'password' : 'password and two-step verification';
  return [
    `Reset of the ${what} of ${reset.email} (${reset.userId}); every session of the account has ended.`,
    `Token:   ${reset.token}   (single use, shown once; give it to the person)`,
    `Expires: ${reset.expiresAt}`,
    `Redeem:  POST /account-resets/redeem {"token":"…","password":"${reset.reset === 'totp' ? 'their current password' : 'a new password, 12+ characters'}"}`,
    ...(reset.reset === 'password' ? [] : ['         then the same with "totpCode": the code of the new secret the first answer (202) shows']),
  ].join('\n');
}
