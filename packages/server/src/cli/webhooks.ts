/**
 * @module `service webhooks inbound …`, `service webhooks outbound …` and `service approvals decide`:
 * the webhook settings and approval decisions from the command line, for scripts and tests. They
 * work on the store directly (like `keys`), so with the embedded store they run while the server
 * is stopped; queued pings and replays are delivered by the server's worker once it runs.
 */
import type { TableRow } from '../../../../generated/db.ts';
import { systemClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { decideApproval } from '../domain/approvals/decision.ts';
import { COMMAND_LINE } from '../domain/audit/index.ts';
import { fail } from '../errors.ts';
import type { Db } from '../store/db.ts';
import { createWebhookServices } from '../webhook-services.ts';
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
  zDecideApprovalBody,
  zSendWebhookDestinationTestEventBody,
} from '../../../../generated/zod.ts';

const COMMON = WORKSPACE_COMMAND_OPTIONS;

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
    ...COMMON,
    slug: { type: 'string' },
    algorithm: { type: 'string' },
    'signature-header': { type: 'string' },
    'timestamp-required': { type: 'boolean' },
    rpm: { type: 'string' },
    template: { type: 'string' },
    agent: { type: 'string' },
    alias: { type: 'string' },
  },
  'webhooks inbound list': COMMON,
  'webhooks inbound pause': COMMON,
  'webhooks inbound resume': COMMON,
  'webhooks inbound revoke': COMMON,
  'webhooks outbound create': { ...COMMON, url: { type: 'string' }, events: { type: 'string' } },
  'webhooks outbound list': COMMON,
  'webhooks outbound rotate-secret': COMMON,
  'webhooks outbound pause': COMMON,
  'webhooks outbound resume': COMMON,
  'webhooks outbound ping': COMMON,
  'webhooks outbound test-event': { ...COMMON, type: { type: 'string' } },
  'webhooks outbound replay': COMMON,
  'approvals decide': { ...COMMON, decision: { type: 'string' }, by: { type: 'string' } },
} as const;

type Command = keyof typeof OPTIONS;

const WHERE = `  --workspace W   the workspace (default: the only one)
  --data-dir D    embedded store directory (default ./data, or DATA_DIR)
  --json          machine-readable output`;

export const WEBHOOK_HELP: Record<Command | 'webhooks', string> = {
  webhooks: `Usage: service webhooks inbound  create|list|pause|resume|revoke [options]
       service webhooks outbound create|list|rotate-secret|pause|resume|ping|test-event|replay [options]
       service approvals decide <approval id> --decision approved|rejected

Run \`service webhooks <inbound|outbound> <command> --help\` for the options of a command.
Signing secrets (whsec_ + 32 base62) are shown once and stored encrypted (AES-256-GCM under
SECRET_KEY, or the key file <data dir>/secret.key of the embedded store).`,
  'webhooks inbound create': `Usage: service webhooks inbound create --slug S [--algorithm sha256|sha512] [--signature-header H]
         [--timestamp-required] [--rpm N] [--template T] [--agent A] [--alias A] [--json]

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
${WHERE}  prints {"slug","secret"}
The secret is shown once.`,
  'webhooks inbound list': `Usage: service webhooks inbound list [--workspace W] [--json] [--data-dir D]

Lists the workspace's inbound webhooks with their settings and status (never a secret).`,
  'webhooks inbound pause': `Usage: service webhooks inbound pause <slug> [--workspace W] [--json] [--data-dir D]

While paused, the slug answers 404 webhook_unavailable.`,
  'webhooks inbound resume': `Usage: service webhooks inbound resume <slug> [--workspace W] [--json] [--data-dir D]

Accepts events again.`,
  'webhooks inbound revoke': `Usage: service webhooks inbound revoke <slug> [--workspace W] [--json] [--data-dir D]

Revokes for good: the slug answers 404 webhook_not_found and stays taken.`,
  'webhooks outbound create': `Usage: service webhooks outbound create --url U --events a,b [--workspace W] [--json] [--data-dir D]

Adds an HTTPS destination. Plain http://, credentials in the URL and private, loopback,
link-local or metadata addresses are refused unless WEBHOOK_ALLOW_HOSTS names them.
  --url U        https:// URL of the receiver
  --events a,b   any of ${WORKSPACE_EVENT_TYPES.join(', ')}
${WHERE}  prints {"id","secret"}
The secret is shown once.`,
  'webhooks outbound list': `Usage: service webhooks outbound list [--workspace W] [--json] [--data-dir D]

Lists destinations with their status and consecutive failures (never a secret).`,
  'webhooks outbound rotate-secret': `Usage: service webhooks outbound rotate-secret <dst id> [--workspace W] [--json] [--data-dir D]

Issues a new signing secret, shown once; every later attempt, retries included, uses it.
  --json   prints {"id","secret"}`,
  'webhooks outbound pause': `Usage: service webhooks outbound pause <dst id> [--workspace W] [--json] [--data-dir D]

Holds deliveries to the destination until it is resumed.`,
  'webhooks outbound resume': `Usage: service webhooks outbound resume <dst id> [--workspace W] [--json] [--data-dir D]

Active again, with the failure count reset (also after the automatic pause of 20 failures).`,
  'webhooks outbound ping': `Usage: service webhooks outbound ping <dst id> [--workspace W] [--json] [--data-dir D]

Queues a signed ping event to the destination (not workspace activity; no STU).
  --json   prints {"eventIds":[...]}`,
  'webhooks outbound test-event': `Usage: service webhooks outbound test-event <dst id> --type T [--workspace W] [--json] [--data-dir D]

Queues a signed test event of type T with sample data, marked "test": true (not workspace activity;
no STU). It is attempted once and never retried, and does not count toward the destination's health.
  --type T   ping, ${WORKSPACE_EVENT_TYPES.join(', ')}
  --json     prints {"eventIds":[...]}`,
  'webhooks outbound replay': `Usage: service webhooks outbound replay <dst id> [--workspace W] [--json] [--data-dir D]

Queues again every delivery of the destination that was given up, with the same event ids.
  --json   prints {"eventIds":[...]}`,
  'approvals decide': `Usage: service approvals decide <approval id> --decision approved|rejected [--by EMAIL] [--workspace W] [--json]

Decides a pending approval and emits approval.decided with decided_by.
  --decision   approved or rejected
  --by EMAIL   the deciding user (default: the workspace's first owner)
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

  const config = loadConfig({ 'data-dir': str(values['data-dir']) }, env);
  const secretKey = await resolveSecretKey(config);
  const store = await openCliStore(config, command);
  try {
    const workspaceId = await resolveWorkspace(store.db, str(values.workspace));
    const webhooks = createWebhookServices({ db: store.db, clock: systemClock, webhooks: { secretKey, allowList: config.webhookAllowHosts } });
    const json = values.json === true;
    const out = (value: unknown, text: string) => print(json ? JSON.stringify(value) : text);
    const target = positionals[0]!;
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
          WEBHOOK_HELP[command],
        );
        const created = await webhooks.inbound.create(workspaceId, body, COMMAND_LINE);
        out({ slug: created.slug, secret: created.secret }, `${created.slug}\n${created.secret}   (shown once)`);
        return 0;
      }
      case 'webhooks inbound list': {
        const list = await webhooks.inbound.list(workspaceId);
        out(
          { data: list },
          list.map((w) => `${w.slug}  ${w.status}  ${w.algorithm}  agent ${w.agentSlug}  ${w.requestsPerMinute}/min`).join('\n') || 'No inbound webhooks.',
        );
        return 0;
      }
      case 'webhooks inbound pause':
      case 'webhooks inbound resume':
      case 'webhooks inbound revoke': {
        const action = command.split(' ')[2] as 'pause' | 'resume' | 'revoke';
        const webhook = await webhooks.inbound[action](workspaceId, target, COMMAND_LINE);
        out(webhook, `${webhook.slug}: ${webhook.status}`);
        return 0;
      }
      case 'webhooks outbound create': {
        const events = str(values.events)
          ?.split(',')
          .map((e) => e.trim())
          .filter(Boolean);
        const body = bodyFromFlags(
          zCreateWebhookDestinationBody,
          { url: str(values.url), events },
          { url: '--url', events: '--events' },
          WEBHOOK_HELP[command],
        );
        const created = await webhooks.destinations.create(workspaceId, body, COMMAND_LINE);
        out({ id: created.id, secret: created.secret }, `${created.id}\n${created.secret}   (shown once)`);
        return 0;
      }
      case 'webhooks outbound list': {
        const list = await webhooks.destinations.list(workspaceId);
        out(
          { data: list },
          list.map((d) => `${d.id}  ${d.status}  ${d.url}  [${d.events.join(', ')}]  failures ${d.consecutiveFailures}`).join('\n') || 'No destinations.',
        );
        return 0;
      }
      case 'webhooks outbound rotate-secret': {
        const rotated = await webhooks.destinations.rotateSecret(workspaceId, target, COMMAND_LINE);
        out({ id: rotated.id, secret: rotated.secret }, `${rotated.id}\n${rotated.secret}   (shown once)`);
        return 0;
      }
      case 'webhooks outbound pause':
      case 'webhooks outbound resume': {
        const destination = await webhooks.destinations[command.endsWith('pause') ? 'pause' : 'resume'](workspaceId, target, COMMAND_LINE);
        out(destination, `${destination.id}: ${destination.status}`);
        return 0;
      }
      case 'webhooks outbound ping':
      case 'webhooks outbound replay': {
        const queued = await webhooks.destinations[command.endsWith('ping') ? 'ping' : 'replay'](workspaceId, target, COMMAND_LINE);
        out(queued, queued.eventIds.length ? `Queued: ${queued.eventIds.join(', ')}` : 'Nothing to replay.');
        return 0;
      }
      case 'webhooks outbound test-event': {
        const { type } = bodyFromFlags(zSendWebhookDestinationTestEventBody, { type: str(values.type) }, { type: '--type' }, WEBHOOK_HELP[command]);
        const queued = await webhooks.destinations.testEvent(workspaceId, target, type, COMMAND_LINE);
        out(queued, `Queued: ${queued.eventIds.join(', ')}`);
        return 0;
      }
      case 'approvals decide': {
        const { decision } = bodyFromFlags(zDecideApprovalBody, { decision: str(values.decision) }, { decision: '--decision' }, WEBHOOK_HELP[command]);
        const decidedBy = await decider(store.db, workspaceId, str(values.by));
        const approval = await decideApproval(store.db, systemClock, { workspaceId, approvalId: target, decision, decidedBy }, COMMAND_LINE);
        out(approval, `${approval.id}: ${approval.status} by ${approval.decidedBy}`);
        return 0;
      }
    }
  } finally {
    await store.close();
  }
  return 0;
}

/** The deciding user: by email, or the workspace's first owner (then admin). */
async function decider(db: Db, workspaceId: string, email: string | undefined): Promise<string> {
  const rows = email
    ? await db.query<Pick<TableRow<'users'>, 'id'>>(
        `SELECT u.id FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.workspace_id = $1 AND lower(u.email) = lower($2)`,
        [workspaceId, email],
      )
    : await db.query<Pick<TableRow<'users'>, 'id'>>(
        `SELECT user_id AS id FROM memberships WHERE workspace_id = $1 AND role IN ('owner', 'admin') ORDER BY role = 'owner' DESC, created_at LIMIT 1`,
        [workspaceId],
      );
  if (!rows[0]) throw fail('member_not_found', email ? `No user ${email} in this workspace.` : 'The workspace has no owner or admin.');
  return rows[0].id;
}

function idName(command: Command): string {
  return command.startsWith('webhooks inbound') ? 'slug' : command.startsWith('approvals') ? 'approval id' : 'destination id';
}

function str(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
