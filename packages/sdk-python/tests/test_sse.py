"""The SSE reader (service_sdk/_sse.py) on text split at every character: each event's ``id:``, comments skipped,
CRLF, and an event cut before its blank line discarded (what a dropped connection leaves)."""

from __future__ import annotations

import pytest

from service_sdk._sse import SseEvent, iter_lines, iter_sse


@pytest.mark.parametrize(
    ("body", "want"),
    [
        (
            'id: 3\ndata: {"delta":"Hé"}\n\nid: 9\nevent: end\ndata: {"done":true}\n\n',
            [SseEvent("message", '{"delta":"Hé"}', "3"), SseEvent("end", '{"done":true}', "9")],
        ),
        ("data: a\n\n", [SseEvent("message", "a", None)]),
        ("id: 1\ndata: a\n\n: keep-alive\n\nid: 2\ndata: b\n\n", [SseEvent("message", "a", "1"), SseEvent("message", "b", "2")]),
        ("id: 1\r\nevent: run.created\r\ndata: x\r\n\r\n", [SseEvent("run.created", "x", "1")]),
        ("data: a\ndata: b\n\n", [SseEvent("message", "a\nb", None)]),
        ('id: 1\ndata: a\n\nid: 2\ndata: {"delta":"b"}\n', [SseEvent("message", "a", "1")]),
        ('id: 1\ndata: a\n\nid: 2\ndata: {"del', [SseEvent("message", "a", "1")]),
    ],
    ids=["ids and names", "no id", "keep-alive comment", "CRLF", "several data lines", "cut before the blank line", "cut inside data"],
)
def test_reads_events_whole_or_not_at_all(body: str, want: list[SseEvent]) -> None:
    assert list(iter_sse(iter_lines(iter(body)))) == want
