/**
 * @module The webhook services of one app, built once from its deps: inbound webhooks, outbound
 * destinations, the template renderer, and the secret box that seals both kinds of secret.
 */
import type { Clock } from './clock.ts';
import { createDestinationService, type DestinationService } from './domain/destinations/service.ts';
import { createInboundWebhookService, type InboundWebhookService } from './domain/inbound-webhooks/service.ts';
import { createSecretBox, ephemeralSecretKey, type SecretBox } from './domain/webhooks/secret-box.ts';
import { DestinationAllowList } from './domain/webhooks/ssrf-guard.ts';
import { createTemplateRenderer, type InboundTemplateRenderer } from './domain/webhooks/template.ts';
import type { Db } from './store/db.ts';

export interface WebhookDeps {
  /** The server's SECRET_KEY (32+ characters); a random one for this process when absent (tests). */
  secretKey?: string;
  /** Hosts, IPs or CIDRs that may be private or loopback (test receivers): WEBHOOK_ALLOW_HOSTS. */
  allowList?: readonly string[];
  /** Called after an inbound event was accepted or an event queued, to wake the worker early. */
  wake?: () => void;
}

export interface WebhookServices {
  secretBox: SecretBox;
  allowList: DestinationAllowList;
  inbound: InboundWebhookService;
  destinations: DestinationService;
  render: InboundTemplateRenderer;
  wake: () => void;
}

export function createWebhookServices(deps: { db: Db; clock: Clock; webhooks?: WebhookDeps | undefined }): WebhookServices {
  const { db, clock } = deps;
  const secretBox = createSecretBox(deps.webhooks?.secretKey ?? ephemeralSecretKey());
  const allowList = new DestinationAllowList(deps.webhooks?.allowList ?? []);
  return {
    secretBox,
    allowList,
    inbound: createInboundWebhookService({ db, clock, secretBox }),
    destinations: createDestinationService({ db, clock, secretBox, policy: { allowList } }),
    render: createTemplateRenderer(),
    wake: deps.webhooks?.wake ?? (() => {}),
  };
}
