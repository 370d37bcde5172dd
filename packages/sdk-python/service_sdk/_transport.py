"""Sends one operation over httpx.

Builds the URL and headers from the generated operation table, adds the credential, retries what may be
retried (``_retry``) and turns every non-2xx answer into a ``ServiceError``. ``SyncTransport`` and
``AsyncTransport`` share everything but the I/O.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from ._errors import ConnectionError, ServiceError, TimeoutError, create_service_error
from ._generated.operations import OPERATIONS, SERVERS, OperationSpec
from ._retry import is_retriable, retry_delay

#: The production address, the first server of the contract.
DEFAULT_BASE_URL = SERVERS[0]


@dataclass
class Config:
    api_key: str | None
    base_url: str
    max_retries: int = 2
    timeout: float = 60.0
    #: The admin session of ``login``: the cookie and the CSRF token for writes.
    session_cookie: str | None = None
    csrf_token: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


def resolve_config(api_key: str | None, base_url: str | None, max_retries: int, timeout: float) -> Config:
    return Config(
        api_key=api_key if api_key is not None else os.environ.get("SERVICE_API_KEY") or None,
        base_url=(base_url or os.environ.get("SERVICE_BASE_URL") or DEFAULT_BASE_URL).rstrip("/"),
        max_retries=max_retries,
        timeout=timeout,
    )


@dataclass
class Prepared:
    method: str
    url: str
    headers: dict[str, str]
    content: bytes | None
    params: dict[str, str]
    repeatable: bool


def prepare(
    config: Config,
    spec: OperationSpec,
    *,
    path: Mapping[str, Any] | None,
    query: Mapping[str, Any] | None,
    headers: Mapping[str, str] | None,
    body: Any,
    idempotency_key: str | None,
    stream: bool,
    bearer: str | None = None,
    request_id: str | None = None,
) -> Prepared:
    route = spec["path"]
    for name in spec["path_params"]:
        value = (path or {}).get(name)
        if value is None or value == "":
            raise TypeError(f"{spec['id']}: path parameter {name} is required")
        route = route.replace("{" + name + "}", quote(str(value), safe=""))
    params = {key: _text(value) for key, value in (query or {}).items() if value is not None}
    sent: dict[str, str] = {"accept": "text/event-stream" if stream else "application/json", **config.headers}
    token = bearer or (config.api_key if spec["auth"] in ("apiKey", "mcpToken", "operatorToken") else None)
    if token:
        sent["authorization"] = f"Bearer {token}"
    if spec["auth"] == "adminSession" and config.session_cookie:
        sent["cookie"] = config.session_cookie
        if spec["csrf"] and config.csrf_token:
            sent["x-csrf-token"] = config.csrf_token
    key = (idempotency_key or str(uuid.uuid4())) if spec["idempotency_key"] else None
    if key:
        sent["idempotency-key"] = key
    if request_id:
        sent["x-request-id"] = request_id
    sent.update({name.lower(): value for name, value in (headers or {}).items()})
    content = None
    if body is not None or spec["body"] == "required":
        value = dict(body or {}, stream=True) if stream and spec["streamable"] else body
        content = json.dumps(value if value is not None else {}, separators=(",", ":")).encode()
        sent["content-type"] = "application/json"
    repeatable = spec["method"] in ("GET", "HEAD", "DELETE") or key is not None
    return Prepared(spec["method"], config.base_url + route, sent, content, params, repeatable)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _error_of(response: httpx.Response) -> ServiceError:
    try:
        body = response.json()
    except ValueError:
        body = None
    return create_service_error(response.status_code, body, response.headers)


def _connection_error(error: httpx.TransportError, url: str) -> ConnectionError:
    if isinstance(error, httpx.TimeoutException):
        return TimeoutError(f"no answer from {url} in time")
    return ConnectionError(f"could not reach {url}: {error}")


def _parse(spec: OperationSpec, response: httpx.Response) -> Any:
    if spec["response"] == "empty" or not response.content:
        return None
    return response.json()


class SyncTransport:
    def __init__(self, config: Config, http: httpx.Client | None = None) -> None:
        self.config = config
        self.http = http or httpx.Client(timeout=config.timeout)

    def call(self, operation_id: str, **kwargs: Any) -> Any:
        spec = OPERATIONS[operation_id]
        with self.send(spec, **kwargs) as response:
            response.read()
            return _parse(spec, response)

    @contextmanager
    def send(self, spec: OperationSpec, *, stream: bool = False, max_retries: int | None = None, **kwargs: Any) -> Iterator[httpx.Response]:
        """Sends with retries; yields a 2xx answer whose body is not read yet (so that it can be streamed)."""
        prepared = prepare(self.config, spec, stream=stream, **_request_fields(kwargs))
        retries = self.config.max_retries if max_retries is None else max_retries
        attempt = 0
        while True:
            failure: ServiceError | ConnectionError
            headers: Mapping[str, str] | None = None
            try:
                request = self.http.build_request(
                    prepared.method, prepared.url, headers=prepared.headers, content=prepared.content, params=prepared.params
                )
                response = self.http.send(request, stream=True)
            except httpx.TransportError as error:
                failure = _connection_error(error, prepared.url)
            else:
                if response.is_success:
                    try:
                        yield response
                    finally:
                        response.close()
                    return
                response.read()
                response.close()
                failure = _error_of(response)
                headers = response.headers
            delay = retry_delay(attempt, headers) if attempt < retries and is_retriable(failure, prepared.repeatable) else None
            if delay is None:
                raise failure
            time.sleep(delay)
            attempt += 1

    def close(self) -> None:
        self.http.close()


class AsyncTransport:
    def __init__(self, config: Config, http: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.http = http or httpx.AsyncClient(timeout=config.timeout)

    async def call(self, operation_id: str, **kwargs: Any) -> Any:
        spec = OPERATIONS[operation_id]
        async with self.send(spec, **kwargs) as response:
            await response.aread()
            return _parse(spec, response)

    @asynccontextmanager
    async def send(
        self, spec: OperationSpec, *, stream: bool = False, max_retries: int | None = None, **kwargs: Any
    ) -> AsyncIterator[httpx.Response]:
        prepared = prepare(self.config, spec, stream=stream, **_request_fields(kwargs))
        retries = self.config.max_retries if max_retries is None else max_retries
        attempt = 0
        while True:
            failure: ServiceError | ConnectionError
            headers: Mapping[str, str] | None = None
            try:
                request = self.http.build_request(
                    prepared.method, prepared.url, headers=prepared.headers, content=prepared.content, params=prepared.params
                )
                response = await self.http.send(request, stream=True)
            except httpx.TransportError as error:
                failure = _connection_error(error, prepared.url)
            else:
                if response.is_success:
                    try:
                        yield response
                    finally:
                        await response.aclose()
                    return
                await response.aread()
                await response.aclose()
                failure = _error_of(response)
                headers = response.headers
            delay = retry_delay(attempt, headers) if attempt < retries and is_retriable(failure, prepared.repeatable) else None
            if delay is None:
                raise failure
            await asyncio.sleep(delay)
            attempt += 1

    async def aclose(self) -> None:
        await self.http.aclose()


def _request_fields(kwargs: dict[str, Any]) -> dict[str, Any]:
    names = ("path", "query", "headers", "body", "idempotency_key", "bearer", "request_id")
    unknown = set(kwargs) - set(names)
    if unknown:
        raise TypeError(f"unexpected arguments: {', '.join(sorted(unknown))}")
    return {name: kwargs.get(name) for name in names}
