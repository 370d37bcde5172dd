"""Invocation: ``POST /v1/inference``, synchronous or streamed, and the Set B message routes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from ._errors import create_service_error
from ._generated import models
from ._generated.operations import OPERATIONS
from ._sse import aiter_sse, iter_sse
from ._transport import AsyncTransport, SyncTransport


@dataclass(frozen=True)
class StreamDelta:
    """One redacted text fragment."""

    delta: str
    type: Literal["delta"] = "delta"


@dataclass(frozen=True)
class StreamEnd:
    """The closing event: the run's id and its token usage."""

    run_id: str
    usage: models.TokenUsage
    type: Literal["end"] = "end"


StreamEvent = StreamDelta | StreamEnd


def _event(name: str, data: str, response: httpx.Response) -> StreamEvent | None:
    payload: Mapping[str, Any] = json.loads(data)
    if name == "end":
        return StreamEnd(run_id=str(payload["runId"]), usage=payload["usage"])
    if name == "error":
        raise create_service_error(response.status_code, payload, response.headers)
    if name == "message" and isinstance(payload.get("delta"), str):
        return StreamDelta(delta=payload["delta"])
    return None


def _no_end(response: httpx.Response) -> Exception:
    return create_service_error(
        response.status_code, {"error": "internal_error", "message": "the stream ended without its end event"}, response.headers
    )


def _lines(chunks: Iterator[str]) -> Iterator[str]:
    buffer = ""
    for chunk in chunks:
        buffer += chunk
        *complete, buffer = buffer.replace("\r\n", "\n").split("\n")
        yield from complete
    if buffer:
        yield buffer


async def _alines(chunks: AsyncIterator[str]) -> AsyncIterator[str]:
    buffer = ""
    async for chunk in chunks:
        buffer += chunk
        *complete, buffer = buffer.replace("\r\n", "\n").split("\n")
        for line in complete:
            yield line
    if buffer:
        yield buffer


def stream_operation(transport: SyncTransport, operation_id: str, **kwargs: Any) -> Iterator[StreamEvent]:
    """Iterates a streamed answer; leaving the loop early closes the connection (the generator's close)."""
    with transport.send(OPERATIONS[operation_id], stream=True, **kwargs) as response:
        for name, data in iter_sse(_lines(response.iter_text())):
            event = _event(name, data, response)
            if event is not None:
                yield event
                if isinstance(event, StreamEnd):
                    return
        raise _no_end(response)


async def astream_operation(transport: AsyncTransport, operation_id: str, **kwargs: Any) -> AsyncIterator[StreamEvent]:
    async with transport.send(OPERATIONS[operation_id], stream=True, **kwargs) as response:
        async for name, data in aiter_sse(_alines(response.aiter_text())):
            event = _event(name, data, response)
            if event is not None:
                yield event
                if isinstance(event, StreamEnd):
                    return
        raise _no_end(response)


class Inference:
    def __init__(self, transport: SyncTransport) -> None:
        self._transport = transport

    def create(self, body: models.InferenceRequest, *, idempotency_key: str | None = None, **options: Any) -> models.InferenceResponse:
        """Invokes an agent (the orchestrator by default); the answer carries ``runId``."""
        result: models.InferenceResponse = self._transport.call(
            "createInference", body=dict(body, stream=False), idempotency_key=idempotency_key, **options
        )
        return result

    def stream(self, body: models.InferenceRequest, **options: Any) -> Iterator[StreamEvent]:
        """Fragments, then the end event. An ``event: error`` raises a ``ServiceError`` (with ``run_id``)."""
        return stream_operation(self._transport, "createInference", body=body, **options)


class Agents:
    def __init__(self, transport: SyncTransport) -> None:
        self._transport = transport

    def list(self, **options: Any) -> models.AgentList:
        result: models.AgentList = self._transport.call("listAgents", **options)
        return result

    def message(self, slug: str, body: models.AgentMessageRequest, **options: Any) -> models.InferenceResponse:
        result: models.InferenceResponse = self._transport.call(
            "sendAgentMessage", path={"slug": slug}, body=dict(body, stream=False), **options
        )
        return result

    def message_stream(self, slug: str, body: models.AgentMessageRequest, **options: Any) -> Iterator[StreamEvent]:
        return stream_operation(self._transport, "sendAgentMessage", path={"slug": slug}, body=body, **options)


class Orchestrator:
    def __init__(self, transport: SyncTransport) -> None:
        self._transport = transport

    def message(self, body: models.AgentMessageRequest, **options: Any) -> models.InferenceResponse:
        result: models.InferenceResponse = self._transport.call("sendOrchestratorMessage", body=dict(body, stream=False), **options)
        return result

    def message_stream(self, body: models.AgentMessageRequest, **options: Any) -> Iterator[StreamEvent]:
        return stream_operation(self._transport, "sendOrchestratorMessage", body=body, **options)


class AsyncInference:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def create(self, body: models.InferenceRequest, *, idempotency_key: str | None = None, **options: Any) -> models.InferenceResponse:
        result: models.InferenceResponse = await self._transport.call(
            "createInference", body=dict(body, stream=False), idempotency_key=idempotency_key, **options
        )
        return result

    def stream(self, body: models.InferenceRequest, **options: Any) -> AsyncIterator[StreamEvent]:
        """``async for event in client.inference.stream(...)``."""
        return astream_operation(self._transport, "createInference", body=body, **options)


class AsyncAgents:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def list(self, **options: Any) -> models.AgentList:
        result: models.AgentList = await self._transport.call("listAgents", **options)
        return result

    async def message(self, slug: str, body: models.AgentMessageRequest, **options: Any) -> models.InferenceResponse:
        result: models.InferenceResponse = await self._transport.call(
            "sendAgentMessage", path={"slug": slug}, body=dict(body, stream=False), **options
        )
        return result

    def message_stream(self, slug: str, body: models.AgentMessageRequest, **options: Any) -> AsyncIterator[StreamEvent]:
        return astream_operation(self._transport, "sendAgentMessage", path={"slug": slug}, body=body, **options)


class AsyncOrchestrator:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def message(self, body: models.AgentMessageRequest, **options: Any) -> models.InferenceResponse:
        result: models.InferenceResponse = await self._transport.call(
            "sendOrchestratorMessage", body=dict(body, stream=False), **options
        )
        return result

    def message_stream(self, body: models.AgentMessageRequest, **options: Any) -> AsyncIterator[StreamEvent]:
        return astream_operation(self._transport, "sendOrchestratorMessage", body=body, **options)
