"""Resuming an invocation stream that dropped before its ``end`` or ``error`` event.

The rest comes from the run's event log (``GET /v1/runs/{X-Run-Id}/events``, ``Last-Event-ID`` = the ``id:`` of the
last fragment received), mapped back to the invocation stream's own events, so that the caller's loop sees the stream
it would have seen uncut: ``text.delta`` → ``StreamDelta``; ``run.usage`` then ``run.completed`` → ``StreamEnd`` with
that usage; ``run.failed`` → the same ``ServiceError`` as an ``event: error`` (its ``error`` and ``message``,
``run_id``, status 200); ``run.canceled`` → ``StreamEnd`` with the usage billed, as the server's own stream ends a
canceled run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from ._errors import ServiceError, StreamInterruptedError, create_service_error
from ._generated import models
from ._stream_events import StreamDelta, StreamEnd, StreamEvent
from ._run_events import afollow_run_events, follow_run_events
from ._transport import AsyncTransport, SyncTransport


class _Mapping:
    """What the resumed log said so far: the usage, the terminal event, the last ``sequence``."""

    def __init__(self, run_id: str, after: int) -> None:
        self.run_id = run_id
        self.last = after
        self.usage: models.TokenUsage | None = None
        self.terminal: models.RunEvent | None = None

    def fragment(self, event: models.RunEvent) -> StreamDelta | None:
        self.last = event["sequence"]
        if event["type"] == "text.delta":
            return StreamDelta(delta=event["delta"])
        if event["type"] == "run.usage":
            self.usage = {"inputTokens": event["usage"]["inputTokens"], "outputTokens": event["usage"]["outputTokens"]}
        elif event["type"] in ("run.completed", "run.canceled", "run.failed"):
            self.terminal = event
        return None

    def refused(self, error: ServiceError) -> StreamInterruptedError:
        # The invocation itself succeeded: a refused resume (a 404, a 403) is why the stream could not be completed.
        return StreamInterruptedError(
            f"the stream of run {self.run_id} dropped and could not be resumed: {error.status} {error.code}",
            run_id=self.run_id,
            last_event_id=self.last,
        )

    def ending(self, headers: Mapping[str, str]) -> bool:
        """True for an end to yield (completed or canceled); raises the error of a failed run."""
        terminal = self.terminal
        if terminal is None:
            raise StreamInterruptedError(
                f"the stream of run {self.run_id} ended without its terminal event", run_id=self.run_id, last_event_id=self.last
            )
        if terminal["type"] == "run.failed":
            body = {"error": terminal["error"], "message": terminal["message"], "runId": self.run_id}
            raise create_service_error(200, body, headers)
        return True


def _billed(detail: models.RunDetail) -> models.TokenUsage:
    """The run's usage when its log gave none before the terminal event (``run.usage`` is sent just before it)."""
    return {"inputTokens": detail["run"]["usage"]["inputTokens"], "outputTokens": detail["run"]["usage"]["outputTokens"]}


def resume_stream(
    transport: SyncTransport, run_id: str, after: int, headers: Mapping[str, str], dropped: BaseException, options: dict[str, Any]
) -> Iterator[StreamEvent]:
    mapping = _Mapping(run_id, after)
    try:
        for event in follow_run_events(transport, run_id, after=after, dropped=dropped, max_retries=options.get("max_retries")):
            fragment = mapping.fragment(event)
            if fragment is not None:
                yield fragment
    except ServiceError as error:
        raise mapping.refused(error) from error
    if mapping.ending(headers):
        usage = mapping.usage or _billed(transport.call("getRunV1", path={"run_id": run_id}))
        yield StreamEnd(run_id=run_id, usage=usage)


async def aresume_stream(
    transport: AsyncTransport, run_id: str, after: int, headers: Mapping[str, str], dropped: BaseException, options: dict[str, Any]
) -> AsyncIterator[StreamEvent]:
    mapping = _Mapping(run_id, after)
    try:
        async for event in afollow_run_events(transport, run_id, after=after, dropped=dropped, max_retries=options.get("max_retries")):
            fragment = mapping.fragment(event)
            if fragment is not None:
                yield fragment
    except ServiceError as error:
        raise mapping.refused(error) from error
    if mapping.ending(headers):
        usage = mapping.usage or _billed(await transport.call("getRunV1", path={"run_id": run_id}))
        yield StreamEnd(run_id=run_id, usage=usage)
