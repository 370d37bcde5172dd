"""service_sdk.AsyncClient against the real server: the same surface with await and async for."""

from __future__ import annotations

import asyncio

import pytest

import service_sdk
from tests.conftest import ask, async_http_client


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

            page = await client.runs.list(limit=2)
            assert len(page["data"]) == 2
            ids = [run["id"] async for run in client.runs.list(limit=2)]
            assert len(ids) == page["total"] == len(set(ids))

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
