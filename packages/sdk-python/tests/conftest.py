"""Fixtures of the Python SDK suite. The server is started by test/pytest.test.ts (vitest), which passes its
address, API key, admin credentials and the webhook receiver through SERVICE_TEST_* variables."""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import os
import struct
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.loopback import LoopbackProxy  # noqa: E402

import service_sdk  # noqa: E402


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.exit(f"{name} is not set: run this suite through `pnpm -s vitest run packages/sdk-python` (it starts the server)", 2)
    return value


_addresses = itertools.count(1)


def spread_addresses(request: httpx.Request) -> None:
    """Each request from its own client address (the server trusts one proxy): the suite sends more than the
    per-IP limit of 60 requests a minute."""
    n = next(_addresses)
    request.headers["x-forwarded-for"] = f"10.88.{(n >> 8) & 255}.{n & 255}"


async def aspread_addresses(request: httpx.Request) -> None:
    spread_addresses(request)


def http_client() -> httpx.Client:
    return httpx.Client(timeout=60, event_hooks={"request": [spread_addresses]})


def async_http_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=60, event_hooks={"request": [aspread_addresses]})


def totp_code(secret: str, at: float | None = None) -> str:
    """RFC 6238: SHA-1, 30 s steps, 6 digits."""
    key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    counter = int((time.time() if at is None else at) // 30)
    digest = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    code = (struct.unpack(">I", digest[offset : offset + 4])[0] & 0x7FFFFFFF) % 1_000_000
    return f"{code:06d}"


@pytest.fixture(scope="session")
def base_url() -> str:
    return _env("SERVICE_TEST_BASE_URL")


@pytest.fixture(scope="session")
def api_key() -> str:
    return _env("SERVICE_TEST_API_KEY")


@pytest.fixture(scope="session")
def client(base_url: str, api_key: str) -> Iterator[service_sdk.Client]:
    with service_sdk.Client(api_key=api_key, base_url=base_url, http_client=http_client()) as c:
        yield c


@pytest.fixture(scope="session")
def admin(base_url: str) -> Iterator[service_sdk.Client]:
    with service_sdk.Client.login(
        base_url=base_url,
        email=_env("SERVICE_TEST_ADMIN_EMAIL"),
        password=_env("SERVICE_TEST_ADMIN_PASSWORD"),
        totp_code=totp_code(_env("SERVICE_TEST_ADMIN_TOTP_SECRET")),
        http_client=http_client(),
    ) as c:
        yield c


@pytest.fixture(scope="session")
def proxy(base_url: str) -> Iterator[LoopbackProxy]:
    p = LoopbackProxy(int(_env("SERVICE_TEST_PROXY_PORT")), base_url)
    yield p
    p.close()


@pytest.fixture(scope="session")
def receiver() -> tuple[str, Path]:
    return _env("SERVICE_TEST_RECEIVER_URL"), Path(_env("SERVICE_TEST_DELIVERIES_DIR"))


def ask(content: str) -> dict[str, object]:
    return {"alias": "Sonata", "messages": [{"role": "user", "content": content}]}


def wait_until(condition, what: str, limit: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.time() + limit
    while not condition():
        if time.time() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.15)
