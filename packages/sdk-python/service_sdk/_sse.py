"""A Server-Sent Events reader over decoded lines: an ``SseEvent(event, data, id)`` per event.

The name defaults to ``message``; ``id`` is the event's own ``id:`` line (a run's stream: the event's ``sequence``),
None without one. As the SSE specification says, an event not closed by its blank line when the lines end is
discarded: a stream cut in the middle of an event yields only the events it delivered whole.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import NamedTuple


class SseEvent(NamedTuple):
    event: str
    data: str
    id: str | None


class _Collector:
    def __init__(self) -> None:
        self.event = ""
        self.data: list[str] = []
        self.id: str | None = None

    def feed(self, line: str) -> SseEvent | None:
        line = line.rstrip("\r\n")
        if line == "":
            done = SseEvent(self.event or "message", "\n".join(self.data), self.id) if self.data else None
            self.event, self.data, self.id = "", [], None
            return done
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            self.event = value
        elif field == "data":
            self.data.append(value)
        elif field == "id" and "\0" not in value:
            self.id = value
        return None


def iter_sse(lines: Iterator[str]) -> Iterator[SseEvent]:
    collector = _Collector()
    for line in lines:
        event = collector.feed(line)
        if event:
            yield event


async def aiter_sse(lines: AsyncIterator[str]) -> AsyncIterator[SseEvent]:
    collector = _Collector()
    async for line in lines:
        event = collector.feed(line)
        if event:
            yield event


def iter_lines(chunks: Iterator[str]) -> Iterator[str]:
    """Lines of decoded text chunks (``\\r\\n`` or ``\\n``); the last one even without its line end."""
    buffer = ""
    for chunk in chunks:
        buffer += chunk
        *complete, buffer = buffer.replace("\r\n", "\n").split("\n")
        yield from complete
    if buffer:
        yield buffer


async def aiter_lines(chunks: AsyncIterator[str]) -> AsyncIterator[str]:
    buffer = ""
    async for chunk in chunks:
        buffer += chunk
        *complete, buffer = buffer.replace("\r\n", "\n").split("\n")
        for line in complete:
            yield line
    if buffer:
        yield buffer
