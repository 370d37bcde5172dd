#!/usr/bin/env -S node --import tsx
/**
 * @module The `service` command line: init, keys create|list|revoke|rotate, users add|list,
 * totp, serve.
 * Errors are one readable line on stderr and a non-zero exit (2: usage, 1: anything else).
 */
import { systemClock } from './clock.ts';
import { agentCommands } from './cli/agents.ts';
import { type CommandTable, commandTable, commandsOf, dispatch, type Flags, type Print } from './cli/commands.ts';
import { formatKeys, type KeyCommands, keyCommands, operatorKeyCommands, resolveWorkspace } from './cli/keys.ts';
import { OPERATOR_API_OPTIONS, operatorApi, operatorWorkspace, workspacePath } from './cli/operator-api.ts';
import { DataDirLockedError } from './runtime/lock.ts';
import { startServer } from './cli/serve.ts';
import { assertWorkersPossible, isClusterPrimary, runPrimary, workerConfig, workerIndex } from './cli/cluster.ts';
import { openCliStore } from './runtime/store.ts';
import { HELP, UsageError } from './cli/usage.ts';
import { webhookCommands } from './cli/webhooks.ts';
import { userCommands } from './cli/users.ts';
import { workspaceCommands } from './cli/workspaces.ts';
import { secretKeyCommands } from './cli/secret-key-rotate.ts';
import { storeCommands } from './cli/store-copy.ts';
import { ConfigError, loadConfig, type ServerConfig } from './config.ts';
import { AlreadyInitialised, initWorkspace } from './domain/workspaces/init.ts';
import { createSecretBox } from './domain/webhooks/secret-box.ts';
import { resolveSecretKey } from './runtime/secret-key.ts';
import { totpCode } from './domain/sessions/totp.ts';
import { type AddedUser, addWorkspaceUser, listUsers } from './domain/sessions/users.ts';
import type { Schema } from './contract.ts';
import { bodyFromFlags } from './cli/flags.ts';
import { zCreateWorkspaceUserBody } from '../../../generated/zod.ts';
import { ServiceError } from './errors.ts';
import { COMMAND_LINE } from './domain/audit/index.ts';

type UserRecord = Schema<'WorkspaceUser'>;

const COMMON = { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;
const KEYS_COMMON = { ...COMMON, workspace: { type: 'string' }, json: { type: 'boolean' } } as const;
/** The `keys` and `users add|list` commands also go through a running server's operator API. */
const KEYS_REMOTE = { ...KEYS_COMMON, ...OPERATOR_API_OPTIONS } as const;

const OPTIONS = {
  init: {
    ...COMMON,
    json: { type: 'boolean' },
    email: { type: 'string' },
    password: { type: 'string' },
    'workspace-name': { type: 'string' },
  },
  'keys create': {
    ...KEYS_REMOTE,
    name: { type: 'string' },
    scopes: { type: 'string' },
    'expires-in-days': { type: 'string' },
  },
  'keys list': KEYS_REMOTE,
  'users add': {
    ...KEYS_REMOTE,
    email: { type: 'string' },
    role: { type: 'string' },
    password: { type: 'string' },
    'no-totp': { type: 'boolean' },
  },
  'users list': KEYS_REMOTE,
  totp: { help: { type: 'boolean', short: 'h' } },
  'keys revoke': KEYS_REMOTE,
  'keys rotate': KEYS_REMOTE,
  serve: {
    ...COMMON,
    port: { type: 'string' },
    host: { type: 'string' },
    'tls-cert': { type: 'string' },
    'tls-key': { type: 'string' },
    workers: { type: 'string' },
  },
} as const;

type Command = keyof typeof OPTIONS;

/** `init`, `keys …`, `users …`, `totp`, `serve` in the command table. */
const mainCommands: CommandTable = {
  // `service keys` or `service users` alone shows the list of every command.
  groups: { keys: HELP.main!, users: HELP.main! },
  commands: commandsOf(OPTIONS, (command) => ({
    options: OPTIONS[command],
    help: HELP[command]!,
    run: ({ values, positionals, print, env }) => run(command, values, positionals, print, env),
  })),
};

/** Every command of the `service` command line. */
export const COMMANDS: CommandTable = commandTable(
  mainCommands,
  webhookCommands,
  agentCommands,
  workspaceCommands,
  userCommands,
  secretKeyCommands,
  storeCommands,
);

/** Runs one command line; `print` receives each output line, `env` stands for the process environment. */
export function runCli(argv: string[], print: Print = printLine, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return dispatch(argv, COMMANDS, HELP.main!, print, env);
}

/** Where a command line writes: its output lines and, on failure, one message. */
export interface CliStreams {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/**
 * Runs one command line as the `service` process does, minus the process: output to `streams.stdout`, a
 * failure's one-line message to `streams.stderr`; resolves with the exit code the process would exit
 * with. The process itself is this with `process.argv`, `process.env` and its own streams.
 */
export async function runCommandLine(argv: string[], env: NodeJS.ProcessEnv, streams: CliStreams): Promise<number> {
  try {
    return await runCli(argv, (line) => streams.stdout.write(`${line}\n`), env);
  } catch (err) {
    const { code, message } = describeFailure(err);
    streams.stderr.write(`${message}\n`);
    return code;
  }
}

/** The settings a command runs with: its flags first, then the environment (PORT, HOST, DATA_DIR, …), then the defaults. */
export function commandConfig(values: Flags, env: NodeJS.ProcessEnv): ServerConfig {
  return loadConfig(
    {
      'data-dir': str(values['data-dir']),
      port: str(values.port),
      host: str(values.host),
      'tls-cert': str(values['tls-cert']),
      'tls-key': str(values['tls-key']),
      workers: str(values.workers),
    },
    env,
  );
}

async function run(command: Command, values: Flags, positionals: string[], print: Print, env: NodeJS.ProcessEnv): Promise<number> {
  const config = commandConfig(values, env);

  if (command === 'totp') {
    const secret = onePositional(positionals, command, 'Give the Base32 secret.');
    try {
      print(totpCode(secret, systemClock.now()));
    } catch {
      throw new UsageError('Not a Base32 secret.');
    }
    return 0;
  }

  if (command === 'serve') {
    if (positionals.length > 0) throw new UsageError(`Unexpected argument: ${positionals[0]}\n\n${HELP.serve}`);
    assertWorkersPossible(config);
    if (isClusterPrimary(config)) return runPrimary(config, (line) => print(line));
    const index = workerIndex(env);
    // The first start's secrets only to a terminal: a piped stdout is the log in production. Of
    // several workers, the first prints the start-up lines; the others only their failures.
    const say = (line: string) => {
      if (index === undefined || index === 1 || line.startsWith('WARNING')) print(line);
    };
    const server = await startServer(workerConfig(config, index), say, { terminal: process.stdout.isTTY === true, worker: index });
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    print('Stopping.');
    await server.close();
    return 0;
  }

  if (command.startsWith('keys ')) {
    const api = operatorApi(values, config);
    if (api)
      return keyCommand(command as KeyCommand, operatorKeyCommands(api, await operatorWorkspace(api, str(values.workspace))), values, positionals, print);
  }
  // The new user's request, checked by the contract's schema before anything is opened or called.
  const newUser =
    command === 'users add'
      ? bodyFromFlags(
          zCreateWorkspaceUserBody,
          { email: str(values.email), role: str(values.role), password: str(values.password), totp: values['no-totp'] === true ? false : undefined },
          { email: '--email', role: '--role', password: '--password', totp: '--no-totp' },
          HELP[command]!,
        )
      : undefined;
  if (command === 'users add' || command === 'users list') {
    const api = operatorApi(values, config);
    if (api) {
      const users = workspacePath(await operatorWorkspace(api, str(values.workspace)), 'users');
      if (newUser) printAddedUser(await api.call<AddedUser>('POST', users, newUser), values.json === true, print);
      else printUsers((await api.call<{ data: UserRecord[] }>('GET', users)).data, values.json === true, print);
      return 0;
    }
  }

  // TOTP secrets are sealed at rest with the same key as the webhook secrets. The key is resolved
  // before the store is opened: with DATABASE_URL and no SECRET_KEY nothing is touched.
  const box = command === 'init' || command === 'users add' ? createSecretBox(await resolveSecretKey(config)) : undefined;
  const secretBox = async () => box ?? createSecretBox(await resolveSecretKey(config));
  const store = await openCliStore(config, command);
  try {
    const json = values.json === true;
    if (command === 'init') {
      const result = await initWorkspace(store.db, systemClock, {
        adminEmail: str(values.email),
        adminPassword: str(values.password),
        workspaceName: str(values['workspace-name']),
        firstOnly: true,
        withOperatorToken: true,
        secretBox: await secretBox(),
      }).catch((err: unknown) => {
        if (err instanceof AlreadyInitialised) throw new UsageError(`${err.message} Use \`service keys create\` for another key.`);
        throw err;
      });
      if (json) print(JSON.stringify(result));
      else
        print(
          [
            `Workspace:   ${result.workspaceId}`,
            `API key:     ${result.apiKey}   (every scope; shown once)`,
            `Admin email: ${result.admin.email}`,
            `Password:    ${result.admin.password}   (shown once)`,
            `TOTP secret: ${result.admin.totpSecret}   (add it to an authenticator app)`,
            `Operator:    ${result.operatorToken}   (operator token for /operator/workspaces; shown once)`,
          ].join('\n'),
        );
      return 0;
    }

    const workspaceId = await resolveWorkspace(store.db, str(values.workspace));
    switch (command) {
      case 'users add': {
        printAddedUser(await addWorkspaceUser(store.db, systemClock, workspaceId, newUser!, await secretBox(), COMMAND_LINE), json, print);
        return 0;
      }
      case 'users list': {
        printUsers(await listUsers(store.db, workspaceId), json, print);
        return 0;
      }
      case 'keys create':
      case 'keys list':
      case 'keys revoke':
      case 'keys rotate':
        return await keyCommand(command, keyCommands(store.db, systemClock, workspaceId), values, positionals, print);
    }
  } finally {
    await store.close();
  }
}

/** What `users add` prints of the new user, on the store or through the operator API: the password and TOTP secret once. */
function printAddedUser(user: AddedUser, json: boolean, print: Print): void {
  print(
    json
      ? JSON.stringify(user)
      : `${user.id}  ${user.email}  ${user.role}\npassword:    ${user.password}   (shown once)\ntotp secret: ${user.totpSecret ?? '(two-step verification off)'}`,
  );
}

function printUsers(users: UserRecord[], json: boolean, print: Print): void {
  print(
    json
      ? JSON.stringify({ data: users })
      : users.map((u) => `${u.id}  ${u.email}  ${u.role}  totp ${u.twoFactorEnabled ? 'on' : 'off'}`).join('\n') || 'No users.',
  );
}

type KeyCommand = 'keys create' | 'keys list' | 'keys revoke' | 'keys rotate';

/** `keys …` on the store or through the operator API: the same output either way. */
async function keyCommand(command: KeyCommand, keys: KeyCommands, values: Flags, positionals: string[], print: Print): Promise<number> {
  const json = values.json === true;
  switch (command) {
    case 'keys create': {
      const name = required(values.name, '--name', command);
      const scopes = required(values.scopes, '--scopes', command)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const days = values['expires-in-days'] === undefined ? undefined : Number(values['expires-in-days']);
      const key = await keys.create(name, scopes, days);
      print(json ? JSON.stringify(key) : `${key.id}\n${key.secret}   (shown once)\nexpires ${key.expiresAt}`);
      return 0;
    }
    case 'keys list': {
      const list = await keys.list();
      print(json ? JSON.stringify({ data: list }) : formatKeys(list));
      return 0;
    }
    case 'keys revoke': {
      const key = await keys.revoke(onePositional(positionals, command));
      print(json ? JSON.stringify(key) : `Revoked ${key.id} (${key.prefix}…).`);
      return 0;
    }
    case 'keys rotate': {
      const key = await keys.rotate(onePositional(positionals, command));
      print(json ? JSON.stringify(key) : `${key.id} replaces ${key.replaces}\n${key.secret}   (shown once)`);
      return 0;
    }
  }
}

function str(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function required(value: string | boolean | undefined, flag: string, command: Command): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`${flag} is required.\n\n${HELP[command]}`);
  return value;
}

function onePositional(positionals: string[], command: Command, what = 'Give exactly one key id.'): string {
  if (positionals.length !== 1) throw new UsageError(`${what}\n\n${HELP[command]}`);
  return positionals[0]!;
}

function printLine(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Exit code and message for a failure; never a stack trace for an expected one. */
export function describeFailure(err: unknown): { code: number; message: string } {
  if (err instanceof UsageError || err instanceof ConfigError) return { code: 2, message: err.message };
  if (err instanceof DataDirLockedError) return { code: 1, message: err.message };
  if (err instanceof ServiceError) return { code: 1, message: `${err.code}: ${err.publicMessage ?? err.code}` };
  return { code: 1, message: `Unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}` };
}

/**
 * The `service` process: this command line with the process's arguments, environment and streams, then its exit
 * code. Run when this module is the one `node` started, and by the server bundle's `service.mjs`
 * (`scripts/build-server-bundle.ts`).
 */
export function main(): void {
  runCommandLine(process.argv.slice(2), process.env, process).then((code) => process.exit(code));
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (invokedDirectly) main();
