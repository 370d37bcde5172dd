/**
 * @module `service workspaces create|list|update|delete` and `service operator-token create`: the
 * operator's commands. With `--url` (or SERVICE_URL) they call the running server's operator API with
 * the operator token (`--operator-token` or OPERATOR_TOKEN), so an operator adds a workspace without
 * stopping the server; without it they work on the store directly, which the embedded store only
 * allows while the server is stopped. Both ways print the same JSON.
 */
import { COMMAND_LINE } from '../domain/audit/index.ts';
import { systemClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { zCreateWorkspaceRequest, zUpdateWorkspaceRequest } from '../../../../generated/zod.ts';
import type { Schema } from '../contract.ts';
import { createOperatorToken } from '../domain/operators/index.ts';
import { createSecretBox } from '../domain/webhooks/secret-box.ts';
import { deleteWorkspace, listOperatorWorkspaces, type OperatorWorkspace, updateWorkspace } from '../domain/workspaces/index.ts';
import { createCustomerWorkspace } from '../domain/workspaces/init.ts';
import { ServiceError } from '../errors.ts';
import type { CommandTable, Flags } from './commands.ts';
import { bodyFromFlags, wholeNumber } from './flags.ts';
import { type OperatorApi, operatorApi } from './operator-api.ts';
import { resolveSecretKey } from '../runtime/secret-key.ts';
import { openCliStore } from '../runtime/store.ts';
import { UsageError } from './usage.ts';

type Created = Schema<'WorkspaceCreated'>;
type CreateBody = Schema<'CreateWorkspaceRequest'>;
type UpdateBody = Schema<'UpdateWorkspaceRequest'>;

/** The operator's actions, against the store or against a running server. */
interface Operations {
  list(): Promise<OperatorWorkspace[]>;
  create(body: CreateBody): Promise<Created>;
  update(id: string, body: UpdateBody): Promise<OperatorWorkspace>;
  remove(id: string): Promise<void>;
}

const TARGET = {
  'data-dir': { type: 'string' },
  url: { type: 'string' },
  'operator-token': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const WHERE = `  --url U             a running server (or SERVICE_URL): use its operator API instead of the store
  --operator-token T  the operator token for --url (or OPERATOR_TOKEN)
  --data-dir D        embedded store directory when there is no --url (default ./data, or DATA_DIR)
  --json              machine-readable output`;

const HELP = {
  workspaces: `Usage: service workspaces create|list|update|delete …

  workspaces create --name N --admin-email E   A workspace with its owner (TOTP) and a first API key
  workspaces list               Every workspace with its state, plan and ceilings
  workspaces update <id> …      Plan, ceiling, quota override, suspension, payment
  workspaces delete <id> --yes  Delete a workspace and all of its data

Without --url they change the store directly (the embedded store: only while the server is stopped).
With --url and the operator token they call the running server.`,
  'workspaces create': `Usage: service workspaces create --name N --admin-email E [--plan starter|growth|enterprise]
                                [--pending-payment] [--json] [--url U --operator-token T] [--data-dir D]

Creates a workspace, its first admin (owner, with two-step verification) and an API key holding every
scope that can be issued. Prints the key, the admin's password and TOTP secret once, as \`init\` does:
--json prints {"workspaceId","apiKey","admin":{"email","password","totpSecret"}}.
  --name N            the workspace's name
  --admin-email E     the owner's email (required)
  --plan P            starter, growth or enterprise (default growth)
  --pending-payment   its credentials answer 402 payment_not_completed until the payment is recorded
${WHERE}`,
  'workspaces list': `Usage: service workspaces list [--json] [--url U --operator-token T] [--data-dir D]

Lists every workspace: id, name, status, payment, plan, requests per minute and quota.
${WHERE}`,
  'workspaces update': `Usage: service workspaces update <workspaceId> [--plan P] [--rpm N] [--ip-rpm N|default] [--quota-stu N|plan]
                                [--status active|suspended] [--payment completed] [--name N] [--json]
                                [--url U --operator-token T] [--data-dir D]

Changes what the operator controls; every running instance applies it at its next request.
  --plan P            starter, growth or enterprise
  --rpm N             requests per minute of the workspace's credentials (default 600)
  --ip-rpm N|default  requests per minute from one client address for the workspace's authenticated
                      callers (keys, MCP tokens, sessions), instead of the default per-address 60
                      (at least 60); anonymous and failed-auth traffic keeps 60. Raise --rpm too:
                      the workspace's own ceiling still applies. \`default\` returns to the default
  --quota-stu N|plan  STU per period instead of the plan's quota; \`plan\` returns to the plan's
  --status S          suspended: keys, MCP tokens and inbound webhooks answer 403 tenant_forbidden
                      (nothing is deleted); active: everything works again
  --payment completed records the payment of a workspace created with --pending-payment
  --name N            rename
${WHERE}`,
  'workspaces delete': `Usage: service workspaces delete <workspaceId> --yes [--json] [--url U --operator-token T] [--data-dir D]

Deletes the workspace and all of its data: users, keys, tokens, runs, usage, webhooks, deliveries,
approvals. It cannot be undone (suspend it to stop it without losing anything). --yes confirms.
${WHERE}`,
  'operator-token create': `Usage: service operator-token create [--data-dir D]

Issues another operator token for the operator API, printed once (only its hash is stored). Works on
the store directly.
  --data-dir D        embedded store directory (default ./data, or DATA_DIR)`,
};

export const workspaceCommands: CommandTable = {
  groups: { workspaces: HELP.workspaces, 'operator-token': HELP['operator-token create'] },
  commands: {
    'workspaces create': {
      options: { ...TARGET, name: { type: 'string' }, 'admin-email': { type: 'string' }, plan: { type: 'string' }, 'pending-payment': { type: 'boolean' } },
      help: HELP['workspaces create'],
      async run({ values, positionals, print, env }) {
        noPositionals(positionals, HELP['workspaces create']);
        // The contract lets the API make up an owner address (owner-…@workspace.invalid); on the command
        // line that is a trap (nobody can receive an invitation or reset there), so the email is required.
        if (typeof values['admin-email'] !== 'string' || values['admin-email'] === '') {
          throw new UsageError(`--admin-email is required: the email of the new workspace's owner.\n\n${HELP['workspaces create']}`);
        }
        const body = bodyFromFlags(
          zCreateWorkspaceRequest,
          { name: values.name, adminEmail: values['admin-email'], plan: values.plan, pendingPayment: values['pending-payment'] === true },
          { name: '--name', adminEmail: '--admin-email', plan: '--plan', pendingPayment: '--pending-payment' },
          HELP['workspaces create'],
        );
        const created = await withOperations(values, env, (ops) => ops.create(body), { seals: true });
        const { workspaceId, apiKey, admin } = created;
        print(
          values.json
            ? JSON.stringify({ workspaceId, apiKey, admin })
            : [
                `Workspace:   ${workspaceId} (${created.workspace.name}, ${created.workspace.plan}${created.workspace.payment === 'pending' ? ', payment pending' : ''})`,
                `API key:     ${apiKey}   (every scope; shown once)`,
                `Owner email: ${admin.email}`,
                `Password:    ${admin.password}   (shown once)`,
                `TOTP secret: ${admin.totpSecret}   (add it to an authenticator app)`,
              ].join('\n'),
        );
        return 0;
      },
    },
    'workspaces list': {
      options: TARGET,
      help: HELP['workspaces list'],
      async run({ values, positionals, print, env }) {
        noPositionals(positionals, HELP['workspaces list']);
        const list = await withOperations(values, env, (ops) => ops.list());
        print(values.json ? JSON.stringify({ data: list }) : list.map(describe).join('\n') || 'No workspaces.');
        return 0;
      },
    },
    'workspaces update': {
      options: {
        ...TARGET,
        plan: { type: 'string' },
        rpm: { type: 'string' },
        'ip-rpm': { type: 'string' },
        'quota-stu': { type: 'string' },
        status: { type: 'string' },
        payment: { type: 'string' },
        name: { type: 'string' },
      },
      help: HELP['workspaces update'],
      async run({ values, positionals, print, env }) {
        const id = onePositional(positionals, HELP['workspaces update']);
        const quota = values['quota-stu'];
        const settings = ['plan', 'rpm', 'ip-rpm', 'quota-stu', 'status', 'payment', 'name'];
        if (!settings.some((flag) => values[flag] !== undefined)) {
          throw new UsageError(`Give at least one setting to change.\n\n${HELP['workspaces update']}`);
        }
        const body = bodyFromFlags(
          zUpdateWorkspaceRequest,
          {
            plan: values.plan,
            rpmLimit: wholeNumber(values.rpm),
            ipRpmLimit: values['ip-rpm'] === 'default' ? null : wholeNumber(values['ip-rpm']),
            quotaOverride: quota === 'plan' ? null : wholeNumber(quota),
            status: values.status,
            payment: values.payment,
            name: values.name,
          },
          { plan: '--plan', rpmLimit: '--rpm', ipRpmLimit: '--ip-rpm', quotaOverride: '--quota-stu', status: '--status', payment: '--payment', name: '--name' },
          HELP['workspaces update'],
        );
        const workspace = await withOperations(values, env, (ops) => ops.update(id, body));
        print(values.json ? JSON.stringify(workspace) : describe(workspace));
        return 0;
      },
    },
    'workspaces delete': {
      options: { ...TARGET, yes: { type: 'boolean' } },
      help: HELP['workspaces delete'],
      async run({ values, positionals, print, env }) {
        const id = onePositional(positionals, HELP['workspaces delete']);
        if (values.yes !== true) throw new UsageError(`Deleting removes all of the workspace's data: add --yes to confirm.\n\n${HELP['workspaces delete']}`);
        await withOperations(values, env, (ops) => ops.remove(id));
        print(values.json ? JSON.stringify({ deleted: id }) : `Deleted ${id} and all of its data.`);
        return 0;
      },
    },
    'operator-token create': {
      options: { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      help: HELP['operator-token create'],
      async run({ values, positionals, print, env }) {
        noPositionals(positionals, HELP['operator-token create']);
        const store = await openCliStore(loadConfig({ 'data-dir': str(values['data-dir']) }, env), 'operator-token create');
        try {
          print(`${await createOperatorToken(store.db, systemClock)}   (operator token; shown once)`);
        } finally {
          await store.close();
        }
        return 0;
      },
    },
  },
};

/** `seals`: the action seals a secret (the new owner's TOTP secret), so the key is needed before the store is opened. */
async function withOperations<T>(values: Flags, env: NodeJS.ProcessEnv, act: (ops: Operations) => Promise<T>, { seals = false } = {}): Promise<T> {
  const config = loadConfig({ 'data-dir': str(values['data-dir']) }, env);
  const api = operatorApi(values, config);
  if (api) return act(httpOperations(api));
  const sealing = seals ? createSecretBox(await resolveSecretKey(config)) : undefined;
  const store = await openCliStore(config, 'workspaces');
  try {
    const secretBox = async () => sealing ?? createSecretBox(await resolveSecretKey(config));
    return await act({
      list: () => listOperatorWorkspaces(store.db),
      create: async (body) => createCustomerWorkspace(store.db, systemClock, await secretBox(), body, COMMAND_LINE),
      update: (id, body) => updateWorkspace(store.db, systemClock, id, body, COMMAND_LINE),
      remove: (id) => deleteWorkspace(store.db, id),
    });
  } catch (err) {
    // The domain's refusals (an unknown id, an email in use) are the operator's to fix: say them plainly.
    if (err instanceof ServiceError && err.status < 500) throw new UsageError(err.message);
    throw err;
  } finally {
    await store.close();
  }
}

function httpOperations({ call }: OperatorApi): Operations {
  return {
    list: async () => (await call<{ data: OperatorWorkspace[] }>('GET', 'operator/workspaces')).data,
    create: (body) => call<Created>('POST', 'operator/workspaces', body),
    update: (id, body) => call<OperatorWorkspace>('PATCH', `operator/workspaces/${encodeURIComponent(id)}`, body),
    remove: (id) => call<void>('DELETE', `operator/workspaces/${encodeURIComponent(id)}`),
  };
}

function describe(w: OperatorWorkspace): string {
  const state = [w.status, w.payment === 'pending' ? 'payment pending' : undefined].filter(Boolean).join(', ');
  const perAddress = w.ipRpmLimit === null ? '' : `  ${w.ipRpmLimit} rpm per address`;
  return `${w.id}  ${w.name}  ${state}  plan ${w.plan}  ${w.rpmLimit} rpm${perAddress}  quota ${w.quotaStu} STU${w.quotaOverride === null ? '' : ' (override)'}`;
}

export function str(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function noPositionals(positionals: string[], help: string): void {
  if (positionals.length > 0) throw new UsageError(`Unexpected argument: ${positionals[0]}\n\n${help}`);
}

function onePositional(positionals: string[], help: string): string {
  if (positionals.length !== 1) throw new UsageError(`Give the workspace id.\n\n${help}`);
  return positionals[0]!;
}
