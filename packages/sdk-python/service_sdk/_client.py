"""``Client`` and ``AsyncClient``: one object per credential.

With an API key they invoke agents and read runs and usage; ``Client.login`` opens an admin session whose
client also manages keys, webhooks and approvals. Every operation of the contract is also a method of the
client itself (snake_case of its operationId, generated in ``_generated/operations.py``).
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from ._admin import (
    AgentConfigurations,
    Approvals,
    ApiKeys,
    AsyncAgentConfigurations,
    AsyncApiKeys,
    AsyncApprovals,
    AsyncDrafts,
    AsyncWebhooks,
    Drafts,
    Webhooks,
)
from ._errors import ServiceError
from ._generated import models
from ._generated.operations import OPERATIONS, AsyncOperations, Operations
from ._inference import Agents, AsyncAgents, AsyncInference, AsyncOrchestrator, Inference, Orchestrator
from ._runs import AsyncRuns, Runs
from ._transport import AsyncTransport, Config, SyncTransport, resolve_config


def _session_cookie(response: httpx.Response) -> str | None:
    for value in response.headers.get_list("set-cookie"):
        match = re.search(r"(?:^|,\s*)(service_session=[^;,\s]*)", value)
        if match:
            return match.group(1)
    return None


class _Usage:
    def __init__(self, client: Client) -> None:
        self._client = client

    def current(self) -> models.Usage:
        return self._client.get_current_usage()


class _Mcp:
    def __init__(self, client: Client) -> None:
        self._client = client

    def create_token(self, *, expires_in_seconds: int | None = None) -> models.McpToken:
        body: models.CreateMcpTokenRequest = {} if expires_in_seconds is None else {"expiresInSeconds": expires_in_seconds}
        return self._client.create_mcp_token(body=body)


class Client(Operations):
    """The synchronous client. ``api_key`` defaults to ``SERVICE_API_KEY``, ``base_url`` to ``SERVICE_BASE_URL``
    or the production address; ``max_retries`` (2) and ``timeout`` (60 s, per attempt) as in the TypeScript SDK."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        max_retries: int = 2,
        timeout: float = 60.0,
        headers: dict[str, str] | None = None,
        http_client: httpx.Client | None = None,
        _config: Config | None = None,
        session: models.AdminSession | None = None,
    ) -> None:
        config = _config or resolve_config(api_key, base_url, max_retries, timeout)
        config.headers.update(headers or {})
        self._transport = SyncTransport(config, http_client)
        self.session = session
        self.inference = Inference(self._transport)
        self.agents = Agents(self._transport)
        self.orchestrator = Orchestrator(self._transport)
        self.runs = Runs(self._transport)
        self.usage = _Usage(self)
        self.mcp = _Mcp(self)
        self.api_keys = ApiKeys(self)
        self.webhooks = Webhooks(self)
        self.approvals = Approvals(self)
        self.drafts = Drafts(self)
        self.agent_configurations = AgentConfigurations(self)

    @property
    def base_url(self) -> str:
        return self._transport.config.base_url

    def _call(self, operation_id: str, **kwargs: Any) -> Any:
        return self._transport.call(operation_id, **kwargs)

    # The `login` operation itself stays reachable as Operations.login(client, body=...).
    @classmethod
    def login(  # type: ignore[override]
        cls, *, email: str, password: str, totp_code: str, base_url: str | None = None, timeout: float = 60.0, **kwargs: Any
    ) -> Client:
        """Opens an admin session; the returned client's calls carry its cookie and, for writes, its CSRF token."""
        config = resolve_config("", base_url, 0, timeout)
        transport = SyncTransport(config, kwargs.get("http_client"))
        with transport.send(OPERATIONS["login"], body={"email": email, "password": password, "totpCode": totp_code}) as response:
            response.read()
            session: models.AdminSession = response.json()
            cookie = _session_cookie(response)
        if cookie is None:
            raise ServiceError(status=response.status_code, code="not_authenticated", message="the login answer set no service_session cookie")
        config = resolve_config("", base_url, kwargs.pop("max_retries", 2), timeout)
        config.session_cookie, config.csrf_token = cookie, session["csrfToken"]
        return cls(_config=config, session=session, **kwargs)

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _AsyncUsage:
    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def current(self) -> models.Usage:
        return await self._client.get_current_usage()


class _AsyncMcp:
    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def create_token(self, *, expires_in_seconds: int | None = None) -> models.McpToken:
        body: models.CreateMcpTokenRequest = {} if expires_in_seconds is None else {"expiresInSeconds": expires_in_seconds}
        return await self._client.create_mcp_token(body=body)


class AsyncClient(AsyncOperations):
    """The asyncio client: the same surface, with ``await`` and ``async for``."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        max_retries: int = 2,
        timeout: float = 60.0,
        headers: dict[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        _config: Config | None = None,
        session: models.AdminSession | None = None,
    ) -> None:
        config = _config or resolve_config(api_key, base_url, max_retries, timeout)
        config.headers.update(headers or {})
        self._transport = AsyncTransport(config, http_client)
        self.session = session
        self.inference = AsyncInference(self._transport)
        self.agents = AsyncAgents(self._transport)
        self.orchestrator = AsyncOrchestrator(self._transport)
        self.runs = AsyncRuns(self._transport)
        self.usage = _AsyncUsage(self)
        self.mcp = _AsyncMcp(self)
        self.api_keys = AsyncApiKeys(self)
        self.webhooks = AsyncWebhooks(self)
        self.approvals = AsyncApprovals(self)
        self.drafts = AsyncDrafts(self)
        self.agent_configurations = AsyncAgentConfigurations(self)

    @property
    def base_url(self) -> str:
        return self._transport.config.base_url

    async def _call(self, operation_id: str, **kwargs: Any) -> Any:
        return await self._transport.call(operation_id, **kwargs)

    @classmethod
    async def login(  # type: ignore[override]
        cls, *, email: str, password: str, totp_code: str, base_url: str | None = None, timeout: float = 60.0, **kwargs: Any
    ) -> AsyncClient:
        config = resolve_config("", base_url, 0, timeout)
        transport = AsyncTransport(config)
        try:
            async with transport.send(OPERATIONS["login"], body={"email": email, "password": password, "totpCode": totp_code}) as response:
                await response.aread()
                session: models.AdminSession = json.loads(response.content)
                cookie = _session_cookie(response)
        finally:
            await transport.aclose()
        if cookie is None:
            raise ServiceError(status=response.status_code, code="not_authenticated", message="the login answer set no service_session cookie")
        config = resolve_config("", base_url, kwargs.pop("max_retries", 2), timeout)
        config.session_cookie, config.csrf_token = cookie, session["csrfToken"]
        return cls(_config=config, session=session, **kwargs)

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
