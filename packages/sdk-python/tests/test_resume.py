"""Resuming dropped streams against the real server, through a loopback TCP proxy that cuts the SDK's connection after
a number of bytes of an answer (tests/cutting_proxy.py): an invocation stream cut anywhere gives the caller the uncut
stream (the same fragments, each once, the same end or error); ``runs.events`` replays a finished run's log, follows a
live one and resumes a cut one without repeating an event; a server that keeps cutting ends in
``StreamInterruptedError`` after ``max_retries`` attempts. ``Client`` throughout, and ``AsyncClient`` for the same."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

import service_sdk
from service_sdk import models
from tests.conftest import ask, async_http_client, http_client, wait_until
from tests.cutting_proxy import CutRule, CuttingProxy
from tests.loopback import LoopbackProxy

INVOCATION = re.compile(r"^POST /v1/inference ")
EVENTS = re.compile(r"^GET /v1/runs/[^/]+/events ")
QUESTION = "Summarise the sales pipeline by stage, with the risks of each."


@dataclass
class Outcome:
    deltas: list[str] = field(default_factory=list)
    end: service_sdk.StreamEnd | None = None
    error: BaseException | None = None


def collect(stream: Iterable[service_sdk.StreamEvent]) -> Outcome:
    outcome = Outcome()
    try:
        for event in stream:
            if isinstance(event, service_sdk.StreamDelta):
                outcome.deltas.append(event.delta)
            else:
                outcome.end = event
    except Exception as error:  # noqa: BLE001 - the outcome is what is compared
        outcome.error = error
    return outcome


def text_of(events: Iterable[models.RunEvent]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "text.delta")


def run_id_of(request_line: str) -> str:
    match = re.search(r"/v1/runs/([^/]+)/events", request_line)
    assert match, request_line
    return match.group(1)


@pytest.fixture(scope="module")
def cutting(base_url: str) -> Iterator[CuttingProxy]:
    proxy = CuttingProxy(base_url)
    yield proxy
    proxy.close()


@pytest.fixture(scope="module")
def through(cutting: CuttingProxy, api_key: str) -> Iterator[service_sdk.Client]:
    with service_sdk.Client(api_key=api_key, base_url=cutting.url, http_client=http_client(), max_retries=2) as c:
        yield c


@pytest.fixture(scope="module")
def uncut(cutting: CuttingProxy, through: service_sdk.Client) -> tuple[Outcome, int]:
    """The reference: the same question through the proxy, not cut, and the size of its answer's body."""
    cutting.cut()
    outcome = collect(through.inference.stream(ask(QUESTION)))
    assert outcome.error is None and outcome.end is not None and len(outcome.deltas) > 5
    [request] = cutting.requests(INVOCATION)
    assert not request.cut and not cutting.requests(EVENTS)
    return outcome, request.body_bytes


@pytest.mark.parametrize(
    ("where", "at", "last_event_id_sent"),
    [
        ("right after the headers", lambda size: 0, False),
        ("inside the first fragment", lambda size: 12, False),
        ("after a third of the answer", lambda size: size // 3, True),
        ("after two thirds of the answer", lambda size: 2 * size // 3, True),
        ("inside the end event", lambda size: size - 12, True),
    ],
)
def test_a_cut_invocation_stream_resumes_to_the_uncut_stream(
    where: str, at: Any, last_event_id_sent: bool, cutting: CuttingProxy, through: service_sdk.Client, client: service_sdk.Client,
    uncut: tuple[Outcome, int],
) -> None:
    reference, size = uncut
    cutting.cut(CutRule(INVOCATION, at(size), times=1))
    resumed = collect(through.inference.stream(ask(QUESTION)))
    assert resumed.error is None, where
    assert cutting.requests(INVOCATION)[0].cut
    assert resumed.deltas == reference.deltas
    assert resumed.end is not None and reference.end is not None
    assert resumed.end.usage == reference.end.usage
    assert resumed.end.run_id != reference.end.run_id
    [resume] = cutting.requests(EVENTS)
    assert resume.line == f"GET /v1/runs/{resumed.end.run_id}/events"
    if last_event_id_sent:
        assert int(resume.headers["last-event-id"]) > 0
    else:
        assert "last-event-id" not in resume.headers
    detail = client.runs.retrieve(resumed.end.run_id)
    assert detail["run"]["status"] == "completed" and detail["run"]["content"] == "".join(reference.deltas)


def test_a_cut_the_server_sees_resumes_to_the_uncut_stream(
    cutting: CuttingProxy, through: service_sdk.Client, client: service_sdk.Client, uncut: tuple[Outcome, int]
) -> None:
    """The server sees its client go; the run goes on for a reader (STREAM_RESUME_MS), and the resume gets the rest."""
    reference, size = uncut
    cutting.cut(CutRule(INVOCATION, size // 3, times=1, close_server_side=True))
    resumed = collect(through.inference.stream(ask(QUESTION)))
    assert cutting.requests(INVOCATION)[0].cut
    [resume] = cutting.requests(EVENTS)
    run_id = run_id_of(resume.line)
    assert int(resume.headers["last-event-id"]) > 0
    assert resumed.error is None and resumed.deltas == reference.deltas
    assert resumed.end is not None and reference.end is not None
    assert (resumed.end.run_id, resumed.end.usage) == (run_id, reference.end.usage)
    logged = list(client.runs.events(run_id))
    assert logged[-1]["type"] == "run.completed" and text_of(logged) == "".join(reference.deltas)


def test_a_cut_stream_of_a_failing_run_raises_the_same_error(cutting: CuttingProxy, through: service_sdk.Client, client: service_sdk.Client) -> None:
    failing = ask("Write a long report on churn [[fail-mid-stream]]")
    cutting.cut()
    reference = collect(through.inference.stream(failing))
    assert isinstance(reference.error, service_sdk.InternalServerError)
    half = cutting.requests(INVOCATION)[0].body_bytes // 2
    cutting.cut(CutRule(INVOCATION, half, times=1))
    resumed = collect(through.inference.stream(failing))
    assert cutting.requests(INVOCATION)[0].cut and len(cutting.requests(EVENTS)) == 1
    assert resumed.deltas == reference.deltas and resumed.end is None
    assert isinstance(resumed.error, service_sdk.InternalServerError)
    was, now = reference.error, resumed.error
    assert (now.status, now.code, now.message) == (was.status, was.code, was.message) == (200, "engine_error", was.message)
    assert now.run_id is not None and now.run_id != was.run_id
    assert client.runs.retrieve(now.run_id)["run"]["status"] == "failed"


def test_a_cut_stream_of_a_run_canceled_meanwhile_ends_with_the_usage_billed(
    cutting: CuttingProxy, through: service_sdk.Client, client: service_sdk.Client
) -> None:
    # [[hang]]: one fragment, then the engine waits until the run is canceled.
    cutting.cut(CutRule(INVOCATION, 0, times=1))
    outcome: list[Outcome] = []
    reader = threading.Thread(target=lambda: outcome.append(collect(through.inference.stream(ask("Keep talking about the roadmap [[hang]]")))))
    reader.start()
    wait_until(lambda: bool(cutting.requests(EVENTS)), "the resume")
    run_id = run_id_of(cutting.requests(EVENTS)[0].line)
    assert client.runs.retrieve(run_id)["run"]["status"] == "in_progress"
    client.runs.cancel(run_id)
    reader.join(60)
    [resumed] = outcome
    assert resumed.error is None and resumed.end is not None
    usage = client.runs.retrieve(run_id)["run"]["usage"]
    assert resumed.end.run_id == run_id
    assert resumed.end.usage == {"inputTokens": usage["inputTokens"], "outputTokens": usage["outputTokens"]}
    logged = list(client.runs.events(run_id))
    assert logged[-1]["type"] == "run.canceled"
    assert resumed.deltas and "".join(resumed.deltas) == text_of(logged)


def test_resumes_are_bounded_when_every_resume_is_cut(cutting: CuttingProxy, through: service_sdk.Client, client: service_sdk.Client, uncut: tuple[Outcome, int]) -> None:
    reference, size = uncut
    cutting.cut(CutRule(INVOCATION, size // 2, times=1), CutRule(EVENTS, 0))
    resumed = collect(through.inference.stream(ask(QUESTION)))
    assert resumed.end is None
    error = resumed.error
    assert isinstance(error, service_sdk.StreamInterruptedError)
    assert isinstance(error, service_sdk.ConnectionError)
    resumes = cutting.requests(EVENTS)
    assert len(resumes) == 2 and all(r.cut for r in resumes)
    assert error.run_id == run_id_of(resumes[0].line)
    assert error.last_event_id == int(resumes[0].headers["last-event-id"]) > 0
    assert "dropped 3 times in a row" in str(error)
    rest = list(client.runs.events(error.run_id, after=error.last_event_id))
    assert "".join(resumed.deltas) + text_of(rest) == "".join(reference.deltas)


@pytest.fixture(scope="module")
def finished(client: service_sdk.Client) -> tuple[str, list[models.RunEvent]]:
    run_id = client.inference.create(ask("Draft a follow-up email to Dana about the renewal."))["runId"]
    return run_id, list(client.runs.events(run_id))


def test_runs_events_replays_a_finished_run(client: service_sdk.Client, finished: tuple[str, list[models.RunEvent]]) -> None:
    run_id, log = finished
    detail = client.runs.retrieve(run_id)
    assert log[0]["type"] == "run.created" and log[0]["sequence"] == 1 and log[0]["runId"] == run_id
    sequences = [e["sequence"] for e in log]
    assert sequences == sorted(set(sequences))
    assert text_of(log) == detail["run"]["content"]
    assert [e["type"] for e in log if e["type"] in service_sdk.TERMINAL_EVENT_TYPES] == ["run.completed"]
    assert log[-1]["type"] == "run.completed"
    assert log[-2]["type"] == "run.usage" and log[-2]["usage"] == detail["run"]["usage"]
    middle = sequences[len(sequences) // 2]
    assert list(client.runs.events(run_id, after=middle)) == [e for e in log if e["sequence"] > middle]


@pytest.mark.parametrize(("where", "half"), [("in the first event", False), ("in the middle", True)])
def test_runs_events_resumes_a_cut_log_without_repeating_an_event(
    where: str, half: bool, cutting: CuttingProxy, through: service_sdk.Client, finished: tuple[str, list[models.RunEvent]]
) -> None:
    run_id, log = finished
    cutting.cut()
    assert list(through.runs.events(run_id)) == log
    size = cutting.requests(EVENTS)[0].body_bytes
    cutting.cut(CutRule(EVENTS, size // 2 if half else 20, times=1))
    assert list(through.runs.events(run_id)) == log, where
    first, second = cutting.requests(EVENTS)
    assert first.cut and not second.cut
    if half:
        assert int(second.headers["last-event-id"]) > 1
    else:
        assert "last-event-id" not in second.headers


def test_runs_events_follows_a_live_run(through: service_sdk.Client, client: service_sdk.Client) -> None:
    hanging = client.inference.stream(ask("Keep talking about the hiring plan [[hang]]"))
    assert isinstance(next(hanging), service_sdk.StreamDelta)
    live = client.runs.list(status="in_progress", limit=1).data[0]["id"]
    seen: list[models.RunEvent] = []
    follower = threading.Thread(target=lambda: seen.extend(e for e in through.runs.events(live)))
    follower.start()
    wait_until(lambda: any(e["type"] == "text.delta" for e in seen), "the first fragment, live")
    assert not any(e["type"] == "run.canceled" for e in seen)
    client.runs.cancel(live)
    follower.join(60)
    assert seen[0]["type"] == "run.created" and seen[-1]["type"] == "run.canceled"
    assert seen == list(client.runs.events(live))
    end = next(hanging)
    assert isinstance(end, service_sdk.StreamEnd) and end.run_id == live


def test_runs_events_of_a_run_that_does_not_exist(client: service_sdk.Client) -> None:
    with pytest.raises(service_sdk.NotFoundError) as missing:
        list(client.runs.events("run_0000000000000000Zz"))
    assert missing.value.code == "not_found"


def test_runs_events_gives_up_after_one_plus_max_retries_attempts(
    cutting: CuttingProxy, through: service_sdk.Client, finished: tuple[str, list[models.RunEvent]]
) -> None:
    run_id, _ = finished
    cutting.cut(CutRule(EVENTS, 0))
    with pytest.raises(service_sdk.StreamInterruptedError) as interrupted:
        list(through.runs.events(run_id, after=2))
    assert (interrupted.value.run_id, interrupted.value.last_event_id) == (run_id, 2)
    assert [r.headers.get("last-event-id") for r in cutting.requests(EVENTS)] == ["2", "2", "2"]


def test_the_async_client_resumes_the_same_way(
    cutting: CuttingProxy, api_key: str, uncut: tuple[Outcome, int], finished: tuple[str, list[models.RunEvent]]
) -> None:
    reference, size = uncut
    run_id, log = finished

    async def scenario() -> None:
        async with service_sdk.AsyncClient(api_key=api_key, base_url=cutting.url, http_client=async_http_client(), max_retries=2) as client:
            cutting.cut(CutRule(INVOCATION, size // 2, times=1))
            deltas: list[str] = []
            end = None
            async for event in client.inference.stream(ask(QUESTION)):
                if isinstance(event, service_sdk.StreamDelta):
                    deltas.append(event.delta)
                else:
                    end = event
            assert cutting.requests(INVOCATION)[0].cut and len(cutting.requests(EVENTS)) == 1
            assert deltas == reference.deltas
            assert end is not None and reference.end is not None and end.usage == reference.end.usage

            cutting.cut(CutRule(EVENTS, 40, times=1))
            assert [e async for e in client.runs.events(run_id)] == log
            assert len(cutting.requests(EVENTS)) == 2

            cutting.cut(CutRule(EVENTS, 0))
            with pytest.raises(service_sdk.StreamInterruptedError):
                [e async for e in client.runs.events(run_id)]
            assert len(cutting.requests(EVENTS)) == 3

    asyncio.run(scenario())


@pytest.fixture(scope="module")
def chained(base_url: str, api_key: str) -> Iterator[tuple[LoopbackProxy, CuttingProxy, service_sdk.Client, Outcome, int]]:
    """SDK → cutting proxy → a proxy that answers canned errors (tests/loopback.py) → the server; and a reference."""
    canned = LoopbackProxy(0, base_url)
    cutting = CuttingProxy(canned.url)
    with service_sdk.Client(api_key=api_key, base_url=cutting.url, http_client=http_client(), max_retries=2) as c:
        reference = collect(c.inference.stream(ask("List the open renewals of this quarter.")))
        assert reference.end is not None
        yield canned, cutting, c, reference, cutting.seen[0].body_bytes
    cutting.close()
    canned.close()


def test_a_resume_answered_503_is_retried_as_the_retry_rules_say(chained: Any) -> None:
    canned, cutting, c, reference, size = chained
    cutting.cut(CutRule(INVOCATION, size // 2, times=1))
    canned.script("pass", {"status": 503, "headers": {"retry-after-ms": "20", "x-should-retry": "true"}, "body": {"error": "service_unavailable"}}, "pass")
    resumed = collect(c.inference.stream(ask("List the open renewals of this quarter.")))
    assert resumed.error is None and resumed.deltas == reference.deltas
    assert resumed.end is not None and resumed.end.usage == reference.end.usage
    assert [r["method"] for r in canned.seen] == ["POST", "GET", "GET"]
    assert canned.seen[1]["headers"]["last-event-id"] == canned.seen[2]["headers"]["last-event-id"]


@pytest.mark.parametrize(
    ("answer", "refusal"),
    [
        ({"status": 403, "body": {"error": "scope_required", "message": "needs tenant:read"}}, service_sdk.PermissionError),
        ({"status": 503, "headers": {"x-should-retry": "false"}, "body": {"error": "service_unavailable"}}, service_sdk.InternalServerError),
    ],
)
def test_a_refused_resume_raises_stream_interrupted_at_once(answer: dict[str, Any], refusal: type, chained: Any, client: service_sdk.Client) -> None:
    canned, cutting, c, reference, size = chained
    cutting.cut(CutRule(INVOCATION, size // 2, times=1))
    canned.script("pass", answer)
    resumed = collect(c.inference.stream(ask("List the open renewals of this quarter.")))
    error = resumed.error
    assert isinstance(error, service_sdk.StreamInterruptedError)
    assert isinstance(error.__cause__, refusal)
    assert [r["method"] for r in canned.seen] == ["POST", "GET"]
    assert error.last_event_id == int(canned.seen[1]["headers"]["last-event-id"])
    rest = list(client.runs.events(error.run_id, after=error.last_event_id))
    assert "".join(resumed.deltas) + text_of(rest) == "".join(reference.deltas)
