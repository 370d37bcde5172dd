"""Runs: retrieve, cancel, list (iterating every page) and poll until terminal, by the spec's polling rule."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Generator, Iterator, Mapping
from typing import Any

from ._generated import models
from ._generated.operations import OPERATIONS
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


class RunPager:
    """``client.runs.list(...)``: iterate it for every run of every page; ``.first_page()`` is one page."""

    def __init__(self, transport: SyncTransport, params: Mapping[str, Any]) -> None:
        self._transport = transport
        self._params = dict(params)

    def first_page(self) -> models.RunList:
        page: models.RunList = self._transport.call("listRuns", query=self._params)
        return page

    def pages(self) -> Iterator[models.RunList]:
        offset = int(self._params.get("offset") or 0)
        while True:
            page: models.RunList = self._transport.call("listRuns", query={**self._params, "offset": offset})
            yield page
            offset = page["offset"] + len(page["data"])
            if not page["data"] or offset >= page["total"]:
                return

    def __iter__(self) -> Iterator[models.Run]:
        for page in self.pages():
            yield from page["data"]


class AsyncRunPager:
    """``async for run in client.runs.list(...)``; ``await client.runs.list(...)`` is one page."""

    def __init__(self, transport: AsyncTransport, params: Mapping[str, Any]) -> None:
        self._transport = transport
        self._params = dict(params)

    async def first_page(self) -> models.RunList:
        page: models.RunList = await self._transport.call("listRuns", query=self._params)
        return page

    def __await__(self) -> Generator[Any, None, models.RunList]:
        return self.first_page().__await__()

    async def pages(self) -> AsyncIterator[models.RunList]:
        offset = int(self._params.get("offset") or 0)
        while True:
            page: models.RunList = await self._transport.call("listRuns", query={**self._params, "offset": offset})
            yield page
            offset = page["offset"] + len(page["data"])
            if not page["data"] or offset >= page["total"]:
                return

    async def __aiter__(self) -> AsyncIterator[models.Run]:
        async for page in self.pages():
            for run in page["data"]:
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

    def list(self, **params: Any) -> RunPager:
        """Filters: ``status``, ``agent_slug``, ``limit`` (1–200), ``offset``."""
        return RunPager(self._transport, params)

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

    def list(self, **params: Any) -> AsyncRunPager:
        return AsyncRunPager(self._transport, params)

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
