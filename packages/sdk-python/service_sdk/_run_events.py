"""A run's event log, ``GET /v1/runs/{run_id}/events``, as an iterator of typed ``RunEvent`` dicts.

From the start or after a ``sequence``, live until the terminal event (``run.completed``, ``run.failed`` or
``run.canceled``), then done. When the connection drops before the terminal event it reconnects with
``Last-Event-ID`` = the last ``sequence`` received, and never yields an event twice. Reconnections are bounded: at
most ``max_retries`` failed attempts in a row without a new event (a drop, a connection failure, or an answer the
retry rules of ``_retry`` retry, waiting as they say); an event received starts the count again.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any, cast

import httpx

from ._errors import ConnectionError, ServiceError, StreamInterruptedError
from ._generated import models
from ._generated.operations import OPERATIONS
from ._retry import is_retriable, retry_delay
from ._sse import SseEvent, aiter_lines, aiter_sse, iter_lines, iter_sse
from ._transport import AsyncTransport, SyncTransport

#: The events that end a run's log; every log ends with exactly one.
TERMINAL_EVENT_TYPES = ("run.completed", "run.failed", "run.canceled")


def is_terminal_run_event(event: models.RunEvent) -> bool:
    return event["type"] in TERMINAL_EVENT_TYPES


class _Follow:
    """The state of one follow: the last ``sequence`` received and the failed attempts since the last event."""

    def __init__(self, run_id: str, after: int, max_retries: int, dropped: BaseException | None) -> None:
        self.run_id = run_id
        self.last = after
        self.max_retries = max_retries
        self.failures = 1 if dropped is not None else 0
        self.cause: BaseException | None = dropped
        self.hints: Mapping[str, str] | None = None

    def request(self) -> dict[str, Any]:
        headers = {"last-event-id": str(self.last)} if self.last > 0 else {}
        # One attempt per request: this loop applies the retry rules, so that drops and refusals share one budget.
        return {"path": {"run_id": self.run_id}, "headers": headers, "max_retries": 0, "stream": True}

    def delay(self) -> float:
        """Seconds to wait before the next attempt; raises once the attempts are used up."""
        if self.cause is None:
            return 0.0
        wait = retry_delay(self.failures - 1, self.hints) if self.failures <= self.max_retries else None
        if wait is None:
            raise self._exhausted()
        return wait

    def accept(self, sse: SseEvent) -> models.RunEvent | None:
        """The event, unless it is not one or was already yielded."""
        try:
            event = json.loads(sse.data)
        except ValueError:
            return None
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            return None
        sequence = event.get("sequence", int(sse.id) if sse.id and sse.id.isdigit() else None)
        if not isinstance(sequence, int) or sequence <= self.last:
            return None
        self.last, self.failures, self.cause = sequence, 0, None
        return cast(models.RunEvent, {**event, "sequence": sequence})

    def failed(self, error: BaseException) -> None:
        """Counts a failed attempt; a ServiceError the retry rules do not retry is raised as it is."""
        if isinstance(error, ServiceError):
            if not is_retriable(error, True):
                raise error
            self.hints = error.headers
        else:
            self.hints = None
        self.cause = error
        self.failures += 1

    def closed_early(self) -> None:
        self.failed(ConnectionError(f"the event stream of run {self.run_id} closed before its terminal event"))

    def _exhausted(self) -> BaseException:
        # After the last attempt: its ServiceError as it is (a 429 or 503 past the retries), otherwise the interruption.
        if isinstance(self.cause, ServiceError):
            return self.cause
        error = StreamInterruptedError(
            f"the stream of run {self.run_id} dropped {self.failures} times in a row before its terminal event "
            f"(last event {self.last}): {self.cause}",
            run_id=self.run_id,
            last_event_id=self.last,
        )
        error.__cause__ = self.cause
        return error


def follow_run_events(
    transport: SyncTransport,
    run_id: str,
    *,
    after: int = 0,
    max_retries: int | None = None,
    dropped: BaseException | None = None,
) -> Iterator[models.RunEvent]:
    """The run's events in order of ``sequence``. ``dropped``: the caller's own stream of this run already dropped (an
    invocation stream resuming here), which counts as the first failed attempt."""
    follow = _Follow(run_id, after, transport.config.max_retries if max_retries is None else max_retries, dropped)
    while True:
        wait = follow.delay()
        if wait:
            time.sleep(wait)
        try:
            with transport.send(OPERATIONS["getRunEventsV1"], **follow.request()) as response:
                for sse in iter_sse(iter_lines(response.iter_text())):
                    event = follow.accept(sse)
                    if event is not None:
                        yield event
                        if is_terminal_run_event(event):
                            return
            follow.closed_early()
        except (ServiceError, ConnectionError, httpx.TransportError) as error:
            follow.failed(error)


async def afollow_run_events(
    transport: AsyncTransport,
    run_id: str,
    *,
    after: int = 0,
    max_retries: int | None = None,
    dropped: BaseException | None = None,
) -> AsyncIterator[models.RunEvent]:
    follow = _Follow(run_id, after, transport.config.max_retries if max_retries is None else max_retries, dropped)
    while True:
        wait = follow.delay()
        if wait:
            await asyncio.sleep(wait)
        try:
            async with transport.send(OPERATIONS["getRunEventsV1"], **follow.request()) as response:
                async for sse in aiter_sse(aiter_lines(response.aiter_text())):
                    event = follow.accept(sse)
                    if event is not None:
                        yield event
                        if is_terminal_run_event(event):
                            return
            follow.closed_early()
        except (ServiceError, ConnectionError, httpx.TransportError) as error:
            follow.failed(error)
