/**
 * @module `service webhooks inbound …`, `service webhooks outbound …` and `service approvals decide`:
 * the webhook settings and approval decisions from the command line, for scripts and tests. With a
 * server's address (`--url`, or SERVICE_URL; for `outbound create`, whose --url is the receiver's, SERVICE_URL
 * only) they go through its operator API (cli/operator-api.ts), the same output either way; without one they
 * work on the store directly (like `keys`), so with the embedded store they run while the server is stopped,
 * and queued pings and replays are delivered by the server's worker once it runs.
 */
import { systemClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { decideApproval } from '../domain/approvals/decision.ts';
import { COMMAND_LINE } from '../domain/audit/index.ts';
import { approvalDecider } from '../domain/approvals/decider.ts';
import type { Schema } from '../contract.ts';
import type { Db } from '../store/db.ts';
import { createWebhookServices, type WebhookServices } from '../webhook-services.ts';
import { OPERATOR_API_HELP, OPERATOR_API_OPTIONS, type OperatorApi, operatorApi, operatorWorkspace, workspacePath } from './operator-api.ts';
import { resolveWorkspace } from './keys.ts';
import { resolveSecretKey } from '../runtime/secret-key.ts';
import { openCliStore } from '../runtime/store.ts';
import { type CommandTable, commandsOf, type Flags, type Print } from './commands.ts';
import { UsageError, WORKSPACE_COMMAND_OPTIONS } from './usage.ts';
import { bodyFromFlags, wholeNumber } from './flags.ts';
import { WORKSPACE_EVENT_TYPES } from '../domain/webhooks/envelope.ts';
import {
  zCreateInboundWebhookBody,
  zCreateWebhookDestinationBody,
  zDecideApprovalOfWorkspaceBody,
  zSendWebhookDestinationTestEventBody,
} from '../../../../generated/zod.ts';

const COMMON = WORKSPACE_COMMAND_OPTIONS;
/** Every command also goes through a running server's operator API (`--url` or SERVICE_URL, and OPERATOR_TOKEN). */
const REMOTE = { ...COMMON, ...OPERATOR_API_OPTIONS } as const;

/** The flag of each field of CreateInboundWebhookRequest, for messages. */
const INBOUND_FLAGS: Record<string, string> = {
  slug: '--slug',
  algorithm: '--algorithm',
  signatureHeader: '--signature-header',
  timestampRequired: '--timestamp-required',
  requestsPerMinute: '--rpm',
  template: '--template',
  agentSlug: '--agent',
  alias: '--alias',
};

const OPTIONS = {
  'webhooks inbound create': {
    ...REMOTE,
    slug: { type: 'string' },
    algorithm: { type: 'string' },
    'signature-header': { type: 'string' },
    'timestamp-required': { type: 'boolean' },
    rpm: { type: 'string' },
    template: { type: 'string' },
    agent: { type: 'string' },
    alias: { type: 'string' },
  },
  'webhooks inbound list': REMOTE,
  'webhooks inbound pause': REMOTE,
  'webhooks inbound resume': REMOTE,
  'webhooks inbound revoke': REMOTE,
  // Its --url is the receiver's: the server comes from SERVICE_URL.
  'webhooks outbound create': { ...COMMON, 'operator-token': OPERATOR_API_OPTIONS['operator-token'], url: { type: 'string' }, events: { type: 'string' } },
  'webhooks outbound list': REMOTE,
  'webhooks outbound rotate-secret': REMOTE,
  'webhooks outbound pause': REMOTE,
  'webhooks outbound resume': REMOTE,
  'webhooks outbound ping': REMOTE,
  'webhooks outbound test-event': { ...REMOTE, type: { type: 'string' } },
  'webhooks outbound replay': REMOTE,
  'approvals decide': { ...REMOTE, decision: { type: 'string' }, by: { type: 'string' } },
} as const;

type Command = keyof typeof OPTIONS;

const WHERE = `  --workspace W       the workspace (default: the only one)
  --data-dir D        embedded store directory when there is no --url (default ./data, or DATA_DIR)
  --json              machine-readable output
${OPERATOR_API_HELP}`;

/** For `webhooks outbound create`, whose --url is the receiver's. */
const WHERE_RECEIVER = `  --workspace W       the workspace (default: the only one)
  --data-dir D        embedded store directory when there is no SERVICE_URL (default ./data, or DATA_DIR)
  --json              machine-readable output
  (a running server: SERVICE_URL and OPERATOR_TOKEN, or --operator-token T; --url is the receiver's here)`;

export const WEBHOOK_HELP: Record<Command | 'webhooks', string> = {
  webhooks: `Usage: service webhooks inbound  create|list|pause|resume|revoke [options]
       service webhooks outbound create|list|rotate-secret|pause|resume|ping|test-event|replay [options]
       service approvals decide <approval id> --decision approved|rejected

Run \`service webhooks <inbound|outbound> <command> --help\` for the options of a command.
Signing secrets (whsec_ + 32 base62) are shown once and stored encrypted (AES-256-GCM under
SECRET_KEY, or the key file <data dir>/secret.key of the embedded store).`,
  'webhooks inbound create': `Usage: service webhooks inbound create --slug S [--algorithm sha256|sha512] [--signature-header H]
         [--timestamp-required] [--rpm N] [--template T] [--agent A] [--alias A] [--json] [--url U]

Creates an inbound webhook at POST /webhooks/inbound/S (and /v1/webhooks/inbound/S).
  --slug S               lowercase letters, digits and '-', unique across the service
  --algorithm            HMAC algorithm of the sender's signature (default sha256)
  --signature-header H   header carrying the signature (default X-SERVICE-Signature)
  --timestamp-required   require X-SERVICE-Timestamp (±300 s, at most 60 s ahead)
  --rpm N                requests per minute per IP, 1 to 10000 (default 60)
  --template T           Liquid template rendering the JSON body into the agent's input
                         (default: the body as compact JSON)
  --agent A              target agent (default orchestrator)
  --alias A              Prelude, Sonata, Symphony or Concerto (default Sonata)
With --json it prints {"slug","secret"}. The secret is shown once.
${WHERE}`,
  'webhooks inbound list': `Usage: service webhooks inbound list [--workspace W] [--json] [--data-dir D] [--url U]

Lists the workspace's inbound webhooks with their settings and status (never a secret).
${WHERE}`,
  'webhooks inbound pause': `Usage: service webhooks inbound pause <slug> [--workspace W] [--json] [--data-dir D] [--url U]

While paused, the slug answers 404 webhook_unavailable.
${WHERE}`,
  'webhooks inbound resume': `Usage: service webhooks inbound resume <slug> [--workspace W] [--json] [--data-dir D] [--url U]

Accepts events again.
${WHERE}`,
  'webhooks inbound revoke': `Usage: service webhooks inbound revoke <slug> [--workspace W] [--json] [--data-dir D] [--url U]

Revokes for good: the slug answers 404 webhook_not_found and stays taken.
${WHERE}`,
  'webhooks outbound create': `Usage: service webhooks outbound create --url U --events a,b [--workspace W] [--json] [--data-dir D]

Adds an HTTPS destination. Plain http://, credentials in the URL and private, loopback,
link-local or metadata addresses are refused unless WEBHOOK_ALLOW_HOSTS names them.
  --url U        https:// URL of the receiver
  --events a,b   any of ${WORKSPACE_EVENT_TYPES.join(', ')}
With --json it prints {"id","secret"}. The secret is shown once.
${WHERE_RECEIVER}`,
  'webhooks outbound list': `Usage: service webhooks outbound list [--workspace W] [--json] [--data-dir D] [--url U]

Lists destinations with their status and consecutive failures (never a secret).
${WHERE}`,
  'webhooks outbound rotate-secret': `Usage: service webhooks outbound rotate-secret <dst id> [--workspace W] [--json] [--data-dir D] [--url U]

Issues a new signing secret, shown once; every later attempt, retries included, uses it.
With --json it prints {"id","secret"}.
${WHERE}`,
  'webhooks outbound pause': `Usage: service webhooks outbound pause <dst id> [--workspace W] [--json] [--data-dir D] [--url U]

Holds deliveries to the destination until it is resumed.
${WHERE}`,
  'webhooks outbound resume': `Usage: service webhooks outbound resume <dst id> [--workspace W] [--json] [--data-dir D] [--url U]

Active again, with the failure count reset (also after the automatic pause of 20 failures).
${WHERE}`,
  'webhooks outbound ping': `Usage: service webhooks outbound ping <dst id> [--workspace W] [--json] [--data-dir D] [--url U]

Queues a signed ping event to the destination (not workspace activity; no STU).
With --json it prints {"eventIds":[...]}.
${WHERE}`,
  'webhooks outbound test-event': `Usage: service webhooks outbound test-event <dst id> --type T [--workspace W] [--json] [--data-dir D] [--url U]

Queues a signed test event of type T with sample data, marked "test": true (not workspace activity;
no STU). It is attempted once and never retried, and does not count toward the destination's health.
  --type T   ping, ${WORKSPACE_EVENT_TYPES.join(', ')}
With --json it prints {"eventIds":[...]}.
${WHERE}`,
  'webhooks outbound replay': `Usage: service webhooks outbound replay <dst id> [--workspace W] [--json] [--data-dir D] [--url U]

Queues again every delivery of the destination that was given up, with the same event ids.
With --json it prints {"eventIds":[...]}.
${WHERE}`,
  'approvals decide': `Usage: service approvals decide <approval id> --decision approved|rejected [--by EMAIL] [--workspace W] [--json] [--url U]

Decides a pending approval and emits approval.decided with decided_by.
  --decision   approved or rejected
  --by EMAIL   the owner or admin it is recorded for (default: the first owner, else the first admin)
${WHERE}`,
};

/** `webhooks inbound …`, `webhooks outbound …` and `approvals decide` in the command table. */
export const webhookCommands: CommandTable = {
  groups: {
    webhooks: WEBHOOK_HELP.webhooks,
    'webhooks inbound': WEBHOOK_HELP.webhooks,
    'webhooks outbound': WEBHOOK_HELP.webhooks,
    approvals: WEBHOOK_HELP.webhooks,
  },
  commands: commandsOf(OPTIONS, (command) => ({
    options: OPTIONS[command],
    help: WEBHOOK_HELP[command],
    run: ({ values, positionals, print, env }) => runWebhookCommand(command, values, positionals, print, env),
  })),
};

async function runWebhookCommand(command: Command, values: Flags, positionals: string[], print: Print, env: NodeJS.ProcessEnv): Promise<number> {
  const needsOne = !command.endsWith(' create') && !command.endsWith(' list');
  if (needsOne && positionals.length !== 1) throw new UsageError(`Give exactly one ${idName(command)}.\n\n${WEBHOOK_HELP[command]}`);
  if (!needsOne && positionals.length > 0) throw new UsageError(`Unexpected argument: ${positionals[0]}\n\n${WEBHOOK_HELP[command]}`);
  // The request the route would receive, checked by the contract's schema before anything is opened or called.
  const act = actionOf(command, values, positionals[0]!);
  const json = values.json === true;
  const output = async (commands: WebhookCommands) => {
    const { value, text } = await act(commands);
    print(json ? JSON.stringify(value) : text);
    return 0;
  };

  const config = loadConfig({ 'data-dir': str(values['data-dir']) }, env);
  // `webhooks outbound create --url` is the receiver's address: that command takes the server from SERVICE_URL.
  const api = operatorApi(command === 'webhooks outbound create' ? { ...values, url: undefined } : values, config);
  if (api) return output(operatorWebhookCommands(api, await operatorWorkspace(api, str(values.workspace))));
  const secretKey = await resolveSecretKey(config);
  const store = await openCliStore(config, command);
  try {
    const workspaceId = await resolveWorkspace(store.db, str(values.workspace));
    const webhooks = createWebhookServices({ db: store.db, clock: systemClock, webhooks: { secretKey, allowList: config.webhookAllowHosts } });
    return await output(storeWebhookCommands(store.db, webhooks, workspaceId));
  } finally {
    await store.close();
  }
}

type InboundRequest = Schema<'CreateInboundWebhookRequest'>;
type DestinationRequest = Schema<'CreateWebhookDestinationRequest'>;
type TestEventRequest = Schema<'SendTestEventRequest'>;
type DecisionRequest = Schema<'OperatorApprovalDecision'>;
type InboundChange = 'pause' | 'resume' | 'revoke';
type InboundWebhook = Schema<'InboundWebhook'>;
type Destination = Schema<'WebhookDestination'>;
type Queued = Schema<'DeliveryAccepted'>;
type Approval = Schema<'Approval'>;

/** What a command prints: `value` with --json, else `text`. */
interface Printed {
  value: unknown;
  text: string;
}

/**
 * The command, on the store or through the operator API, and what it prints (the same whichever way it went). Its
 * flags are read here, before anything is opened or called: a bad one is a usage error at once.
 */
function actionOf(command: Command, values: Flags, target: string): (commands: WebhookCommands) => Promise<Printed> {
  const help = WEBHOOK_HELP[command];
  const created = ({ name, secret }: { name: string; secret: string }, value: unknown): Printed => ({ value, text: `${name}\n${secret}   (shown once)` });
  const queued = (value: Queued): Printed => ({ value, text: value.eventIds.length ? `Queued: ${value.eventIds.join(', ')}` : 'Nothing to replay.' });
  switch (command) {
    case 'webhooks inbound create': {
      const body = bodyFromFlags(
        zCreateInboundWebhookBody,
        {
          slug: str(values.slug),
          algorithm: str(values.algorithm),
          signatureHeader: str(values['signature-header']),
          timestampRequired: values['timestamp-required'] ? true : undefined,
          requestsPerMinute: wholeNumber(values.rpm),
          template: str(values.template),
          agentSlug: str(values.agent),
          alias: str(values.alias),
        },
        INBOUND_FLAGS,
        help,
      );
      return async (c) => {
        const hook = await c.inbound.create(body);
        return created({ name: hook.slug, secret: hook.secret }, hook);
      };
    }
    case 'webhooks inbound list':
      return async (c) => {
        const list = await c.inbound.list();
        const lines = list.map((w) => `${w.slug}  ${w.status}  ${w.algorithm}  agent ${w.agentSlug}  ${w.requestsPerMinute}/min`);
        return { value: { data: list }, text: lines.join('\n') || 'No inbound webhooks.' };
      };
    case 'webhooks inbound pause':
    case 'webhooks inbound resume':
    case 'webhooks inbound revoke': {
      const action: InboundChange = command === 'webhooks inbound pause' ? 'pause' : command === 'webhooks inbound resume' ? 'resume' : 'revoke';
      return async (c) => {
        const webhook = await c.inbound.change(action, target);
        return { value: webhook, text: `${webhook.slug}: ${webhook.status}` };
      };
    }
    case 'webhooks outbound create': {
      const events = str(values.events)
        ?.split(',')
        .map((e) => e.trim())
        .filter(Boolean);
      const body = bodyFromFlags(zCreateWebhookDestinationBody, { url: str(values.url), events }, { url: '--url', events: '--events' }, help);
      return async (c) => {
        const destination = await c.destinations.create(body);
        return created({ name: destination.id, secret: destination.secret }, destination);
      };
    }
    case 'webhooks outbound rotate-secret':
      return async (c) => {
        const destination = await c.destinations.rotateSecret(target);
        return created({ name: destination.id, secret: destination.secret }, destination);
      };
    case 'webhooks outbound list':
      return async (c) => {
        const list = await c.destinations.list();
        const lines = list.map((d) => `${d.id}  ${d.status}  ${d.url}  [${d.events.join(', ')}]  failures ${d.consecutiveFailures}`);
        return { value: { data: list }, text: lines.join('\n') || 'No destinations.' };
      };
    case 'webhooks outbound pause':
    case 'webhooks outbound resume': {
      const action = command === 'webhooks outbound pause' ? 'pause' : 'resume';
      return async (c) => {
        const destination = await c.destinations.change(action, target);
        return { value: destination, text: `${destination.id}: ${destination.status}` };
      };
    }
    case 'webhooks outbound ping':
    case 'webhooks outbound replay': {
      const action = command === 'webhooks outbound ping' ? 'ping' : 'replay';
      return async (c) => queued(await c.destinations.queue(action, target));
    }
    case 'webhooks outbound test-event': {
      const { type } = bodyFromFlags(zSendWebhookDestinationTestEventBody, { type: str(values.type) }, { type: '--type' }, help);
      return async (c) => queued(await c.destinations.testEvent(target, type));
    }
    case 'approvals decide': {
      const body = bodyFromFlags(
        zDecideApprovalOfWorkspaceBody,
        { decision: str(values.decision), decidedBy: str(values.by) },
        { decision: '--decision', decidedBy: '--by' },
        help,
      );
      return async (c) => {
        const approval = await c.decide(target, body);
        return { value: approval, text: `${approval.id}: ${approval.status} by ${approval.decidedBy}` };
      };
    }
  }
}

/** What the commands do, on the store or through the operator API; both answer alike. */
interface WebhookCommands {
  inbound: {
    create(body: InboundRequest): Promise<{ slug: string; secret: string }>;
    list(): Promise<InboundWebhook[]>;
    change(action: InboundChange, slug: string): Promise<InboundWebhook>;
  };
  destinations: {
    create(body: DestinationRequest): Promise<{ id: string; secret: string }>;
    list(): Promise<Destination[]>;
    rotateSecret(id: string): Promise<{ id: string; secret: string }>;
    change(action: 'pause' | 'resume', id: string): Promise<Destination>;
    queue(action: 'ping' | 'replay', id: string): Promise<Queued>;
    testEvent(id: string, type: TestEventRequest['type']): Promise<Queued>;
  };
  decide(approvalId: string, body: DecisionRequest): Promise<Approval>;
}

/** What a create or rotate prints of what it made: its name and its secret (shown once), nothing else. */
const slugAndSecret = ({ slug, secret }: { slug: string; secret: string }) => ({ slug, secret });
const idAndSecret = ({ id, secret }: { id: string; secret: string }) => ({ id, secret });

/** On the store directly, the actor in the audit log being the operator at the command line. */
function storeWebhookCommands(db: Db, webhooks: WebhookServices, workspaceId: string): WebhookCommands {
  const { inbound, destinations } = webhooks;
  return {
    inbound: {
      create: async (body) => slugAndSecret(await inbound.create(workspaceId, body, COMMAND_LINE)),
      list: () => inbound.list(workspaceId),
      change: (action, slug) => inbound[action](workspaceId, slug, COMMAND_LINE),
    },
    destinations: {
      create: async (body) => idAndSecret(await destinations.create(workspaceId, body, COMMAND_LINE)),
      list: () => destinations.list(workspaceId),
      rotateSecret: async (id) => idAndSecret(await destinations.rotateSecret(workspaceId, id, COMMAND_LINE)),
      change: (action, id) => destinations[action](workspaceId, id, COMMAND_LINE),
      queue: (action, id) => destinations[action](workspaceId, id, COMMAND_LINE),
      testEvent: (id, type) => destinations.testEvent(workspaceId, id, type, COMMAND_LINE),
    },
    decide: async (approvalId, { decision, decidedBy }) =>
      decideApproval(db, systemClock, { workspaceId, approvalId, decision, decidedBy: await approvalDecider(db, workspaceId, decidedBy) }, COMMAND_LINE),
  };
}

/** Through a running server's operator API (`/operator/workspaces/{id}/inbound-webhooks|webhook-destinations|approvals`). */
function operatorWebhookCommands(api: OperatorApi, workspaceId: string): WebhookCommands {
  const hook = (...rest: string[]) => workspacePath(workspaceId, 'inbound-webhooks', ...rest);
  const dst = (...rest: string[]) => workspacePath(workspaceId, 'webhook-destinations', ...rest);
  return {
    inbound: {
      create: async (body) => slugAndSecret(await api.call<Schema<'InboundWebhookCreated'>>('POST', hook(), body)),
      list: async () => (await api.call<Schema<'InboundWebhookList'>>('GET', hook())).data,
      change: (action, slug) => api.call<InboundWebhook>(action === 'revoke' ? 'DELETE' : 'POST', action === 'revoke' ? hook(slug) : hook(slug, action)),
    },
    destinations: {
      create: async (body) => idAndSecret(await api.call<Schema<'WebhookDestinationCreated'>>('POST', dst(), body)),
      list: async () => (await api.call<Schema<'WebhookDestinationList'>>('GET', dst())).data,
      rotateSecret: async (id) => idAndSecret(await api.call<Schema<'WebhookDestinationCreated'>>('POST', dst(id, 'rotate-secret'))),
      change: (action, id) => api.call<Destination>('POST', dst(id, action)),
      queue: (action, id) => api.call<Queued>('POST', dst(id, action)),
      testEvent: (id, type) => api.call<Queued>('POST', dst(id, 'test-events'), { type }),
    },
    decide: (approvalId, body) => api.call<Approval>('POST', workspacePath(workspaceId, 'approvals', approvalId, 'decision'), body),
  };
}

function idName(command: Command): string {
  return command.startsWith('webhooks inbound') ? 'slug' : command.startsWith('approvals') ? 'approval id' : 'destination id';
}

function str(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
