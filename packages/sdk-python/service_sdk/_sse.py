"""A Server-Sent Events reader over decoded lines: ``(event, data)`` per event; the name defaults to ``message``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator


class _Collector:
    def __init__(self) -> None:
        self.event = ""
        self.data: list[str] = []

    def feed(self, line: str) -> tuple[str, str] | None:
        line = line.rstrip("\r\n")
        if line == "":
            done = (self.event or "message", "\n".join(self.data)) if self.data else None
            self.event, self.data = "", []
            return done
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            self.event = value
        elif field == "data":
            self.data.append(value)
        return None

    def flush(self) -> tuple[str, str] | None:
        return (self.event or "message", "\n".join(self.data)) if self.data else None


def iter_sse(lines: Iterator[str]) -> Iterator[tuple[str, str]]:
    collector = _Collector()
    for line in lines:
        event = collector.feed(line)
        if event:
            yield event
    last = collector.flush()
    if last:
        yield last


async def aiter_sse(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, str]]:
    collector = _Collector()
    async for line in lines:
        event = collector.feed(line)
        if event:
            yield event
    last = collector.flush()
    if last:
        yield last
