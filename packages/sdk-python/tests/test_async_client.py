"""service_sdk.AsyncClient against the real server: the same surface with await and async for."""

from __future__ import annotations

import asyncio
import os

import pytest

import service_sdk
from tests.conftest import ask, async_http_client, totp_code


def run(coroutine):  # type: ignore[no-untyped-def]
    return asyncio.run(coroutine)


def test_async_invocation_stream_list_usage_and_errors(base_url: str, api_key: str) -> None:
    async def scenario() -> None:
        async with service_sdk.AsyncClient(api_key=api_key, base_url=base_url, http_client=async_http_client()) as client:
            answer = await client.inference.create(ask("Draft an email."))
            assert answer["runId"].startswith("run_")
            assert (await client.runs.retrieve(answer["runId"]))["run"]["status"] == "completed"

            deltas: list[str] = []
            end = None
            async for event in client.inference.stream(ask("Summarise the pipeline.")):
                if isinstance(event, service_sdk.StreamDelta):
                    deltas.append(event.delta)
                else:
                    end = event
            assert deltas and end is not None
            assert (await client.runs.retrieve(end.run_id))["run"]["content"] == "".join(deltas)

            # The same shape as the sync client and TypeScript: awaited, a page; iterated, every run of every page.
            page = await client.runs.list(limit=2)
            assert isinstance(page, service_sdk.AsyncRunPage)
            assert len(page.data) == 2 and page.limit == 2 and page.offset == 0 and page.has_next_page()
            assert (await page.get_next_page()).offset == 2
            ids = [run["id"] async for run in client.runs.list(limit=2)]
            assert len(ids) == page.total == len(set(ids))
            assert [run["id"] async for run in page] == ids
            assert len([each async for each in page.iter_pages()]) == -(-page.total // 2)

            assert (await client.runs.poll(answer["runId"]))["run"]["id"] == answer["runId"]
            assert (await client.usage.current())["consumedStu"] > 0

            with pytest.raises(service_sdk.NotFoundError) as missing:
                await client.runs.retrieve("run_0000000000000000Zz")
            assert missing.value.code == "not_found"
            with pytest.raises(service_sdk.InternalServerError) as failed:
                async for _ in client.inference.stream(ask("Report [[fail-mid-stream]]")):
                    pass
            assert failed.value.code == "engine_error" and failed.value.run_id

    run(scenario())


def test_async_retries_a_lost_answer_with_one_idempotency_key(proxy, api_key: str) -> None:  # type: ignore[no-untyped-def]
    async def scenario() -> None:
        proxy.script("drop-response")
        async with service_sdk.AsyncClient(api_key=api_key, base_url=proxy.url, http_client=async_http_client()) as client:
            answer = await client.inference.create(ask("Send the proposal."))
            assert answer["runId"].startswith("run_")
        keys = [r["headers"].get("idempotency-key") for r in proxy.seen]
        assert len(keys) == 2 and keys[0] == keys[1]

    run(scenario())


def test_async_login_creates_and_revokes_a_key(base_url: str) -> None:
    async def scenario() -> None:
        admin = await service_sdk.AsyncClient.login(
            base_url=base_url,
            email=os.environ["SERVICE_TEST_ADMIN2_EMAIL"],
            password=os.environ["SERVICE_TEST_ADMIN2_PASSWORD"],
            totp_code=totp_code(os.environ["SERVICE_TEST_ADMIN2_TOTP_SECRET"]),
            http_client=async_http_client(),
        )
        async with admin:
            assert admin.session is not None and admin.session["user"]["email"] == os.environ["SERVICE_TEST_ADMIN2_EMAIL"]
            created = await admin.api_keys.create({"name": "async sdk test", "scopes": ["usage:read"]})
            async with service_sdk.AsyncClient(api_key=created["secret"], base_url=base_url, http_client=async_http_client()) as limited:
                assert (await limited.usage.current())["period"]
                await admin.api_keys.revoke(created["id"])
                with pytest.raises(service_sdk.AuthenticationError) as revoked:
                    await limited.usage.current()
                assert revoked.value.code == "api_key_not_found"
            destinations = await admin.webhooks.destinations.list()
            assert isinstance(destinations["data"], list)

    run(scenario())
