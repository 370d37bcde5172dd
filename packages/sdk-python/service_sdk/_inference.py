"""Invocation: ``POST /v1/inference``, synchronous or streamed, and the Set B message routes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import httpx

from ._errors import ConnectionError, create_service_error
from ._generated import models
from ._generated.operations import OPERATIONS
from ._sse import aiter_lines, aiter_sse, iter_lines, iter_sse
from ._stream_events import StreamDelta, StreamEnd, StreamEvent
from ._stream_resume import aresume_stream, resume_stream
from ._transport import AsyncTransport, SyncTransport


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


def _resume_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {"max_retries": kwargs.get("max_retries")}


def _dropped(response: httpx.Response, dropped: BaseException) -> BaseException:
    """Without ``X-Run-Id`` (a server without the run's event log) there is nothing to resume from."""
    return _no_end(response) if isinstance(dropped, ConnectionError) else dropped


def stream_operation(transport: SyncTransport, operation_id: str, **kwargs: Any) -> Iterator[StreamEvent]:
    """Iterates a streamed answer; leaving the loop early closes the connection (the generator's close). A stream that
    drops before its end resumes from the run's event log (``_stream_resume``)."""
    last_event_id = 0
    dropped: BaseException
    with transport.send(OPERATIONS[operation_id], stream=True, **kwargs) as response:
        try:
            for sse in iter_sse(iter_lines(response.iter_text())):
                event = _event(sse.event, sse.data, response)
                if event is not None:
                    if isinstance(event, StreamDelta) and sse.id is not None and sse.id.isdigit():
                        last_event_id = int(sse.id)
                    yield event
                    if isinstance(event, StreamEnd):
                        return
            dropped = ConnectionError("the stream ended without its end event")
        except httpx.TransportError as error:
            dropped = error
    run_id = response.headers.get("x-run-id")
    if not run_id:
        raise _dropped(response, dropped)
    yield from resume_stream(transport, run_id, last_event_id, response.headers, dropped, _resume_options(kwargs))


async def astream_operation(transport: AsyncTransport, operation_id: str, **kwargs: Any) -> AsyncIterator[StreamEvent]:
    last_event_id = 0
    dropped: BaseException
    async with transport.send(OPERATIONS[operation_id], stream=True, **kwargs) as response:
        try:
            async for sse in aiter_sse(aiter_lines(response.aiter_text())):
                event = _event(sse.event, sse.data, response)
                if event is not None:
                    if isinstance(event, StreamDelta) and sse.id is not None and sse.id.isdigit():
                        last_event_id = int(sse.id)
                    yield event
                    if isinstance(event, StreamEnd):
                        return
            dropped = ConnectionError("the stream ended without its end event")
        except httpx.TransportError as error:
            dropped = error
    run_id = response.headers.get("x-run-id")
    if not run_id:
        raise _dropped(response, dropped)
    async for resumed in aresume_stream(transport, run_id, last_event_id, response.headers, dropped, _resume_options(kwargs)):
        yield resumed


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
