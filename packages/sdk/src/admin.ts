/**
 * @module The admin surface, open to a client from `ServiceClient.login`: API keys, webhook settings,
 * approvals, integrations, the agents' configuration and the drafts agents wrote. Every call carries the session cookie; writes carry `X-CSRF-Token`.
 */
import type { RequestOptions } from './core/transport.ts';
import type { OperationInputs, Operations, Schemas } from './generated/operations.ts';

export class ApiKeys {
  constructor(private readonly ops: Operations) {}
  list(options?: RequestOptions): Promise<Schemas['ApiKeyList']> {
    return this.ops.listApiKeys({}, options);
  }
  /** The secret is in this answer only. */
  create(body: Schemas['CreateApiKeyRequest'], options?: RequestOptions): Promise<Schemas['ApiKeyCreated']> {
    return this.ops.createApiKey({ body }, options);
  }
  revoke(id: string, options?: RequestOptions) {
    return this.ops.revokeApiKey({ path: { id } }, options);
  }
  rotate(id: string, options?: RequestOptions) {
    return this.ops.rotateApiKey({ path: { id } }, options);
  }
}

export class InboundWebhooks {
  constructor(private readonly ops: Operations) {}
  list(options?: RequestOptions) {
    return this.ops.listInboundWebhooks({}, options);
  }
  create(body: Schemas['CreateInboundWebhookRequest'], options?: RequestOptions) {
    return this.ops.createInboundWebhook({ body }, options);
  }
  revoke(slug: string, options?: RequestOptions) {
    return this.ops.revokeInboundWebhook({ path: { slug } }, options);
  }
  pause(slug: string, options?: RequestOptions) {
    return this.ops.pauseInboundWebhook({ path: { slug } }, options);
  }
  resume(slug: string, options?: RequestOptions) {
    return this.ops.resumeInboundWebhook({ path: { slug } }, options);
  }
}

export class WebhookDestinations {
  constructor(private readonly ops: Operations) {}
  list(options?: RequestOptions) {
    return this.ops.listWebhookDestinations({}, options);
  }
  /** The signing secret is in this answer only. */
  create(body: Schemas['CreateWebhookDestinationRequest'], options?: RequestOptions) {
    return this.ops.createWebhookDestination({ body }, options);
  }
  rotateSecret(id: string, options?: RequestOptions) {
    return this.ops.rotateWebhookDestinationSecret({ path: { id } }, options);
  }
  pause(id: string, options?: RequestOptions) {
    return this.ops.pauseWebhookDestination({ path: { id } }, options);
  }
  resume(id: string, options?: RequestOptions) {
    return this.ops.resumeWebhookDestination({ path: { id } }, options);
  }
  /** Sends the `ping` test event. */
  ping(id: string, options?: RequestOptions) {
    return this.ops.pingWebhookDestination({ path: { id } }, options);
  }
  /** Sends a test event of any type (sample data, `"test": true`), attempted once and never retried. */
  sendTestEvent(id: string, type: Schemas['SendTestEventRequest']['type'], options?: RequestOptions) {
    return this.ops.sendWebhookDestinationTestEvent({ path: { id }, body: { type } }, options);
  }
  replay(id: string, options?: RequestOptions) {
    return this.ops.replayWebhookDestination({ path: { id } }, options);
  }
}

export class Webhooks {
  readonly inbound: InboundWebhooks;
  readonly destinations: WebhookDestinations;
  constructor(ops: Operations) {
    this.inbound = new InboundWebhooks(ops);
    this.destinations = new WebhookDestinations(ops);
  }
}

export class Approvals {
  constructor(private readonly ops: Operations) {}
  decide(approvalId: string, body: Schemas['ApprovalDecision'], options?: RequestOptions) {
    return this.ops.decideApproval({ path: { approval_id: approvalId }, body }, options);
  }
}

/** What the workspace's agents wrote for people to review (any member's session reads them). */
export class Drafts {
  constructor(private readonly ops: Operations) {}
  /** A page of drafts, newest first; filters `run_id` and `agent_slug`, pages `limit`/`offset`. */
  list(query: NonNullable<OperationInputs['listDrafts']['query']> = {}, options?: RequestOptions): Promise<Schemas['DraftList']> {
    return this.ops.listDrafts({ query }, options);
  }
  /** One draft; another workspace's, or none, throws `NotFoundError`. */
  retrieve(draftId: string, options?: RequestOptions): Promise<Schemas['Draft']> {
    return this.ops.getDraft({ path: { draft_id: draftId } }, options);
  }
}

/** An agent's instructions, step limit, tools and approval policy (any member reads; an owner or admin changes). */
export class AgentConfigurations {
  constructor(private readonly ops: Operations) {}
  retrieve(slug: string, options?: RequestOptions): Promise<Schemas['AgentConfiguration']> {
    return this.ops.getAgentConfiguration({ path: { slug } }, options);
  }
  /** Replaces the whole configuration; `instructions: null` returns to the department's default. */
  update(slug: string, body: Schemas['AgentConfigurationUpdate'], options?: RequestOptions): Promise<Schemas['AgentConfiguration']> {
    return this.ops.updateAgentConfiguration({ path: { slug }, body }, options);
  }
}
