"""The admin surface of a client from ``login``: API keys, webhook settings, approvals, the agents'
configuration and the drafts agents wrote (sync and async)."""

from __future__ import annotations

from typing import Any, cast

from ._generated import models
from ._generated.operations import AsyncOperations, Operations


class ApiKeys:
    def __init__(self, ops: Operations) -> None:
        self._ops = ops

    def list(self) -> models.ApiKeyList:
        return self._ops.list_api_keys()

    def create(self, body: models.CreateApiKeyRequest) -> models.ApiKeyCreated:
        """The secret is in this answer only."""
        return self._ops.create_api_key(body=body)

    def revoke(self, id: str) -> Any:  # noqa: A002
        return self._ops.revoke_api_key(id=id)

    def rotate(self, id: str) -> Any:  # noqa: A002
        return self._ops.rotate_api_key(id=id)


class InboundWebhooks:
    def __init__(self, ops: Operations) -> None:
        self._ops = ops

    def list(self) -> Any:
        return self._ops.list_inbound_webhooks()

    def create(self, body: models.CreateInboundWebhookRequest) -> Any:
        return self._ops.create_inbound_webhook(body=body)

    def revoke(self, slug: str) -> Any:
        return self._ops.revoke_inbound_webhook(slug=slug)

    def pause(self, slug: str) -> Any:
        return self._ops.pause_inbound_webhook(slug=slug)

    def resume(self, slug: str) -> Any:
        return self._ops.resume_inbound_webhook(slug=slug)


class WebhookDestinations:
    def __init__(self, ops: Operations) -> None:
        self._ops = ops

    def list(self) -> Any:
        return self._ops.list_webhook_destinations()

    def create(self, body: models.CreateWebhookDestinationRequest) -> models.WebhookDestinationCreated:
        """The signing secret is in this answer only."""
        return self._ops.create_webhook_destination(body=body)

    def rotate_secret(self, id: str) -> Any:  # noqa: A002
        return self._ops.rotate_webhook_destination_secret(id=id)

    def pause(self, id: str) -> Any:  # noqa: A002
        return self._ops.pause_webhook_destination(id=id)

    def resume(self, id: str) -> Any:  # noqa: A002
        return self._ops.resume_webhook_destination(id=id)

    def ping(self, id: str) -> Any:  # noqa: A002
        return self._ops.ping_webhook_destination(id=id)

    def send_test_event(self, id: str, event_type: str) -> models.DeliveryAccepted:  # noqa: A002
        """A test event of any type (sample data, ``"test": true``), attempted once and never retried."""
        return self._ops.send_webhook_destination_test_event(id=id, body=cast(models.SendTestEventRequest, {"type": event_type}))

    def replay(self, id: str) -> Any:  # noqa: A002
        return self._ops.replay_webhook_destination(id=id)


class Webhooks:
    def __init__(self, ops: Operations) -> None:
        self.inbound = InboundWebhooks(ops)
        self.destinations = WebhookDestinations(ops)


class Approvals:
    def __init__(self, ops: Operations) -> None:
        self._ops = ops

    def decide(self, approval_id: str, body: models.ApprovalDecision) -> Any:
        return self._ops.decide_approval(approval_id=approval_id, body=body)


class Drafts:
    """What the workspace's agents wrote for people to review (any member's session reads them)."""

    def __init__(self, ops: Operations) -> None:
        self._ops = ops

    def list(self, *, run_id: str | None = None, agent_slug: str | None = None, limit: int | None = None, offset: int | None = None) -> models.DraftList:
        """A page of drafts, newest first, by run and by agent."""
        return self._ops.list_drafts(query=_query(run_id=run_id, agent_slug=agent_slug, limit=limit, offset=offset))

    def retrieve(self, draft_id: str) -> models.Draft:
        """One draft; another workspace's, or none, raises ``NotFoundError``."""
        return self._ops.get_draft(draft_id=draft_id)


class AgentConfigurations:
    """An agent's instructions, step limit, tools and approval policy (members read; an owner or admin changes)."""

    def __init__(self, ops: Operations) -> None:
        self._ops = ops

    def retrieve(self, slug: str) -> models.AgentConfiguration:
        return self._ops.get_agent_configuration(slug=slug)

    def update(self, slug: str, body: models.AgentConfigurationUpdate) -> models.AgentConfiguration:
        """Replaces the whole configuration; ``instructions: None`` returns to the department's default."""
        return self._ops.update_agent_configuration(slug=slug, body=body)


class AsyncApiKeys:
    def __init__(self, ops: AsyncOperations) -> None:
        self._ops = ops

    async def list(self) -> models.ApiKeyList:
        return await self._ops.list_api_keys()

    async def create(self, body: models.CreateApiKeyRequest) -> models.ApiKeyCreated:
        return await self._ops.create_api_key(body=body)

    async def revoke(self, id: str) -> Any:  # noqa: A002
        return await self._ops.revoke_api_key(id=id)

    async def rotate(self, id: str) -> Any:  # noqa: A002
        return await self._ops.rotate_api_key(id=id)


class AsyncInboundWebhooks:
    def __init__(self, ops: AsyncOperations) -> None:
        self._ops = ops

    async def list(self) -> Any:
        return await self._ops.list_inbound_webhooks()

    async def create(self, body: models.CreateInboundWebhookRequest) -> Any:
        return await self._ops.create_inbound_webhook(body=body)

    async def revoke(self, slug: str) -> Any:
        return await self._ops.revoke_inbound_webhook(slug=slug)

    async def pause(self, slug: str) -> Any:
        return await self._ops.pause_inbound_webhook(slug=slug)

    async def resume(self, slug: str) -> Any:
        return await self._ops.resume_inbound_webhook(slug=slug)


class AsyncWebhookDestinations:
    def __init__(self, ops: AsyncOperations) -> None:
        self._ops = ops

    async def list(self) -> Any:
        return await self._ops.list_webhook_destinations()

    async def create(self, body: models.CreateWebhookDestinationRequest) -> models.WebhookDestinationCreated:
        return await self._ops.create_webhook_destination(body=body)

    async def rotate_secret(self, id: str) -> Any:  # noqa: A002
        return await self._ops.rotate_webhook_destination_secret(id=id)

    async def pause(self, id: str) -> Any:  # noqa: A002
        return await self._ops.pause_webhook_destination(id=id)

    async def resume(self, id: str) -> Any:  # noqa: A002
        return await self._ops.resume_webhook_destination(id=id)

    async def ping(self, id: str) -> Any:  # noqa: A002
        return await self._ops.ping_webhook_destination(id=id)

    async def send_test_event(self, id: str, event_type: str) -> models.DeliveryAccepted:  # noqa: A002
        """A test event of any type (sample data, ``"test": true``), attempted once and never retried."""
        return await self._ops.send_webhook_destination_test_event(id=id, body=cast(models.SendTestEventRequest, {"type": event_type}))

    async def replay(self, id: str) -> Any:  # noqa: A002
        return await self._ops.replay_webhook_destination(id=id)


class AsyncWebhooks:
    def __init__(self, ops: AsyncOperations) -> None:
        self.inbound = AsyncInboundWebhooks(ops)
        self.destinations = AsyncWebhookDestinations(ops)


class AsyncApprovals:
    def __init__(self, ops: AsyncOperations) -> None:
        self._ops = ops

    async def decide(self, approval_id: str, body: models.ApprovalDecision) -> Any:
        return await self._ops.decide_approval(approval_id=approval_id, body=body)


class AsyncDrafts:
    def __init__(self, ops: AsyncOperations) -> None:
        self._ops = ops

    async def list(
        self, *, run_id: str | None = None, agent_slug: str | None = None, limit: int | None = None, offset: int | None = None
    ) -> models.DraftList:
        return await self._ops.list_drafts(query=_query(run_id=run_id, agent_slug=agent_slug, limit=limit, offset=offset))

    async def retrieve(self, draft_id: str) -> models.Draft:
        return await self._ops.get_draft(draft_id=draft_id)


class AsyncAgentConfigurations:
    def __init__(self, ops: AsyncOperations) -> None:
        self._ops = ops

    async def retrieve(self, slug: str) -> models.AgentConfiguration:
        return await self._ops.get_agent_configuration(slug=slug)

    async def update(self, slug: str, body: models.AgentConfigurationUpdate) -> models.AgentConfiguration:
        return await self._ops.update_agent_configuration(slug=slug, body=body)


def _query(**params: Any) -> dict[str, Any]:
    """The query parameters that were given."""
    return {name: value for name, value in params.items() if value is not None}
