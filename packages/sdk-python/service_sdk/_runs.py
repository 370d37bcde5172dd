"""Runs: retrieve, cancel, list and poll until terminal, by the spec's polling rule.

``list`` has the Stainless shape, the same as in TypeScript: ``Client.runs.list()`` is the first page (``data``,
``total``, the next page) and iterating it gives every run of every page; ``AsyncClient.runs.list()`` awaited is
that page, and ``async for`` over it gives every run of every page.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Generator, Iterator, Mapping
from typing import Any

from ._generated import models
from ._generated.operations import OPERATIONS
from ._run_events import afollow_run_events, follow_run_events
from ._transport import AsyncTransport, SyncTransport

#: ``completed``, ``failed`` and ``canceled`` end a run; ``in_progress`` means keep polling.
TERMINAL_STATUSES = ("completed", "failed", "canceled")


def _wait(wait: float, headers: Mapping[str, str]) -> float:
    """The next wait: at least the planned one, and until the window resets when none is left."""
    if headers.get("x-ratelimit-remaining") == "0":
        try:
            return max(wait, float(headers.get("x-ratelimit-reset", "0")) - time.time())
        except ValueError:
            return wait
    return wait


_NO_NEXT_PAGE = "no next page: check has_next_page() first"


class _PageFields:
    """The fields of one ``GET /runs`` page (the contract's ``RunList``) and where the next one starts."""

    def __init__(self, params: Mapping[str, Any], page: models.RunList) -> None:
        self._params = dict(params)
        self.data: list[models.Run] = page["data"]
        self.total: int = page["total"]
        self.limit: int = page["limit"]
        self.offset: int = page["offset"]

    def has_next_page(self) -> bool:
        """False on the last page (and on an empty one, so that a shrinking list cannot loop)."""
        return bool(self.data) and self.offset + len(self.data) < self.total

    def to_dict(self) -> models.RunList:
        """The page as the contract's ``RunList``."""
        return {"data": self.data, "total": self.total, "limit": self.limit, "offset": self.offset}

    def _next_params(self) -> dict[str, Any]:
        if not self.has_next_page():
            raise RuntimeError(_NO_NEXT_PAGE)
        return {**self._params, "offset": self.offset + len(self.data)}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(offset={self.offset}, limit={self.limit}, total={self.total}, data=<{len(self.data)} runs>)"


class RunPage(_PageFields):
    """``client.runs.list(...)``: one page (``data``, ``total``, ``limit``, ``offset``); iterating it gives every run
    from this page to the last one."""

    def __init__(self, transport: SyncTransport, params: Mapping[str, Any], page: models.RunList) -> None:
        super().__init__(params, page)
        self._transport = transport

    @classmethod
    def _fetch(cls, transport: SyncTransport, params: Mapping[str, Any]) -> RunPage:
        page: models.RunList = transport.call("listRuns", query=dict(params))
        return cls(transport, params, page)

    def get_next_page(self) -> RunPage:
        """The page after this one, with the same filters and ``limit``; ``RuntimeError`` when there is none."""
        return RunPage._fetch(self._transport, self._next_params())

    def iter_pages(self) -> Iterator[RunPage]:
        """This page, then each following one."""
        page = self
        yield page
        while page.has_next_page():
            page = page.get_next_page()
            yield page

    def __iter__(self) -> Iterator[models.Run]:
        for page in self.iter_pages():
            yield from page.data


class AsyncRunPage(_PageFields):
    """``await client.runs.list(...)``: one page; ``async for`` over it gives every run from this page to the last."""

    def __init__(self, transport: AsyncTransport, params: Mapping[str, Any], page: models.RunList) -> None:
        super().__init__(params, page)
        self._transport = transport

    @classmethod
    async def _fetch(cls, transport: AsyncTransport, params: Mapping[str, Any]) -> AsyncRunPage:
        page: models.RunList = await transport.call("listRuns", query=dict(params))
        return cls(transport, params, page)

    async def get_next_page(self) -> AsyncRunPage:
        """The page after this one, with the same filters and ``limit``; ``RuntimeError`` when there is none."""
        return await AsyncRunPage._fetch(self._transport, self._next_params())

    async def iter_pages(self) -> AsyncIterator[AsyncRunPage]:
        """This page, then each following one."""
        page = self
        yield page
        while page.has_next_page():
            page = await page.get_next_page()
            yield page

    async def __aiter__(self) -> AsyncIterator[models.Run]:
        async for page in self.iter_pages():
            for run in page.data:
                yield run


class AsyncRunPaginator:
    """``AsyncClient.runs.list(...)``: awaitable (the first :class:`AsyncRunPage`) and async-iterable (every run of
    every page). The first page is requested once, whichever is used first."""

    def __init__(self, transport: AsyncTransport, params: Mapping[str, Any]) -> None:
        self._transport = transport
        self._params = dict(params)
        self._first: AsyncRunPage | None = None

    async def _first_page(self) -> AsyncRunPage:
        if self._first is None:
            self._first = await AsyncRunPage._fetch(self._transport, self._params)
        return self._first

    def __await__(self) -> Generator[Any, None, AsyncRunPage]:
        return self._first_page().__await__()

    async def __aiter__(self) -> AsyncIterator[models.Run]:
        async for run in await self._first_page():
            yield run


class Runs:
    def __init__(self, transport: SyncTransport) -> None:
        self._transport = transport

    def retrieve(self, run_id: str, **options: Any) -> models.RunDetail:
        result: models.RunDetail = self._transport.call("getRun", path={"run_id": run_id}, **options)
        return result

    def cancel(self, run_id: str, **options: Any) -> models.RunDetail:
        result: models.RunDetail = self._transport.call("cancelRun", path={"run_id": run_id}, **options)
        return result

    def events(self, run_id: str, *, after: int = 0, max_retries: int | None = None) -> Iterator[models.RunEvent]:
        """``GET /v1/runs/{run_id}/events``: the run's events (``run.created``, ``run.routed``, ``text.delta``, …,
        ``run.usage``, then one of ``run.completed``, ``run.failed``, ``run.canceled``), replayed from the start or
        after ``after`` (a ``sequence``), then live until the terminal event, after which the loop ends. A dropped
        connection is resumed with ``Last-Event-ID`` (at most ``max_retries`` failed attempts in a row, with backoff;
        then ``StreamInterruptedError``), and no event is yielded twice. A run that does not exist raises
        ``NotFoundError``. Leaving the loop early (``close()``) ends the request."""
        return follow_run_events(self._transport, run_id, after=after, max_retries=max_retries)

    def list(self, **params: Any) -> RunPage:
        """The first page (requested now). Filters: ``status``, ``agent_slug``, ``limit`` (1–200), ``offset``."""
        return RunPage._fetch(self._transport, params)

    def poll(self, run_id: str, *, interval: float = 1.0, max_interval: float = 10.0) -> models.RunDetail:
        """Reads the run until it is terminal: first after ``interval`` s, growing by half up to ``max_interval``."""
        wait = interval
        while True:
            with self._transport.send(OPERATIONS["getRun"], path={"run_id": run_id}) as response:
                response.read()
                detail: models.RunDetail = response.json()
                headers = response.headers
            if detail["run"]["status"] in TERMINAL_STATUSES:
                return detail
            time.sleep(_wait(wait, headers))
            wait = min(max_interval, wait * 1.5)


class AsyncRuns:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def retrieve(self, run_id: str, **options: Any) -> models.RunDetail:
        result: models.RunDetail = await self._transport.call("getRun", path={"run_id": run_id}, **options)
        return result

    async def cancel(self, run_id: str, **options: Any) -> models.RunDetail:
        result: models.RunDetail = await self._transport.call("cancelRun", path={"run_id": run_id}, **options)
        return result

    def events(self, run_id: str, *, after: int = 0, max_retries: int | None = None) -> AsyncIterator[models.RunEvent]:
        """``async for event in client.runs.events(run_id)``: as ``Client.runs.events``."""
        return afollow_run_events(self._transport, run_id, after=after, max_retries=max_retries)

    def list(self, **params: Any) -> AsyncRunPaginator:
        """Await it for the first page, or ``async for`` it for every run. Filters as ``Client.runs.list``."""
        return AsyncRunPaginator(self._transport, params)

    async def poll(self, run_id: str, *, interval: float = 1.0, max_interval: float = 10.0) -> models.RunDetail:
        wait = interval
        while True:
            async with self._transport.send(OPERATIONS["getRun"], path={"run_id": run_id}) as response:
                await response.aread()
                detail: models.RunDetail = response.json()
                headers = response.headers
            if detail["run"]["status"] in TERMINAL_STATUSES:
                return detail
            await asyncio.sleep(_wait(wait, headers))
            wait = min(max_interval, wait * 1.5)
