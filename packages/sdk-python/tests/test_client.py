"""service_sdk.Client against the real server over HTTP."""

from __future__ import annotations

import re
import threading
import time

import pytest

import service_sdk
from service_sdk import models
from tests.conftest import ask, http_client, wait_until


def test_invokes_synchronously_and_reads_the_run(client: service_sdk.Client) -> None:
    answer = client.inference.create(ask("Draft a follow-up email to a lead."))
    assert re.fullmatch(r"run_[A-Za-z0-9]{16,32}", answer["runId"])
    assert answer["alias"] == "Sonata" and answer["content"]
    assert set(answer) <= set(models.InferenceResponse.__annotations__)
    detail = client.runs.retrieve(answer["runId"])
    assert detail["run"]["id"] == answer["runId"] and detail["run"]["status"] == "completed"
    assert detail["run"]["content"] == answer["content"]


def test_streams_fragments_then_the_end_event(client: service_sdk.Client) -> None:
    deltas: list[str] = []
    end: service_sdk.StreamEnd | None = None
    for event in client.inference.stream(ask("Summarise the pipeline by stage.")):
        if isinstance(event, service_sdk.StreamDelta):
            deltas.append(event.delta)
        else:
            end = event
    assert len(deltas) > 1 and end is not None
    assert end.usage["outputTokens"] > 0
    detail = client.runs.retrieve(end.run_id)
    assert detail["run"]["status"] == "completed"
    assert detail["run"]["content"] == "".join(deltas)


def test_a_stream_error_event_raises(client: service_sdk.Client) -> None:
    with pytest.raises(service_sdk.InternalServerError) as raised:
        for _ in client.inference.stream(ask("Write a long report [[fail-mid-stream]]")):
            pass
    assert raised.value.status == 200 and raised.value.code == "engine_error"
    assert raised.value.run_id is not None
    assert client.runs.retrieve(raised.value.run_id)["run"]["status"] == "failed"


def test_leaving_a_stream_early_closes_the_request(client: service_sdk.Client) -> None:
    stream = client.inference.stream(ask("Keep talking [[hang]]"))
    for event in stream:
        assert isinstance(event, service_sdk.StreamDelta)
        break
    stream.close()  # what a `for` loop's break leaves to the garbage collector, done at once
    newest = client.runs.list(limit=1).data[0]
    done = client.runs.poll(newest["id"], interval=0.1, max_interval=0.5)
    assert done["run"]["status"] == "canceled"


def test_set_b_routes_and_mcp_token(client: service_sdk.Client) -> None:
    assert "sales" in [agent["slug"] for agent in client.agents.list()["data"]]
    to_sales = client.agents.message("sales", ask("Follow up with Dana about the renewal."))
    assert to_sales["agentSlug"] == "sales"
    assert client.orchestrator.message(ask("Plan a campaign."))["runId"].startswith("run_")
    token = client.mcp.create_token(expires_in_seconds=600)
    assert token["tokenType"] == "Bearer" and token["token"].startswith("service_mcp_")
    with service_sdk.Client(api_key=token["token"], base_url=client.base_url, http_client=http_client()) as mcp:
        tools = mcp.call_mcp_rpc(body={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert "invoke_agent" in str(tools)
    # Every operation is a method of the client (generated).
    assert client.get_run_v1(run_id=to_sales["runId"])["run"]["id"] == to_sales["runId"]


def test_lists_every_run_of_every_page(client: service_sdk.Client) -> None:
    for i in range(3):
        client.inference.create(ask(f"Lead {i}: send the brochure."))
    # The Stainless shape: list() is the first page (data, total, the next page), iterable over every run of every page.
    page = client.runs.list(limit=2)
    assert isinstance(page, service_sdk.RunPage)
    assert len(page.data) == 2 and page.limit == 2 and page.offset == 0 and page.total >= 5
    assert page.has_next_page()
    second = page.get_next_page()
    assert second.offset == 2 and second.total == page.total and second.data[0]["id"] != page.data[0]["id"]
    pages = list(page.iter_pages())
    assert len(pages) == -(-page.total // 2) and pages[0] is page and not pages[-1].has_next_page()
    with pytest.raises(RuntimeError, match="no next page"):
        pages[-1].get_next_page()
    ids = [run["id"] for run in client.runs.list(limit=2)]
    assert len(ids) == page.total == len(set(ids))
    assert [run["id"] for run in page] == ids


def test_polls_a_run_in_progress_until_terminal(client: service_sdk.Client, base_url: str, api_key: str) -> None:
    holder = service_sdk.Client(api_key=api_key, base_url=base_url, max_retries=0, http_client=http_client())
    outcome: list[object] = []

    def hold() -> None:
        try:
            outcome.append(holder.inference.create(ask("Hold on [[hang]]")))
        except service_sdk.ServiceError as error:
            outcome.append(error)

    thread = threading.Thread(target=hold)
    thread.start()
    held: list[str] = []
    wait_until(lambda: bool(held.extend(r["id"] for r in client.runs.list(status="in_progress").data) or held), "the held run")
    result: list[models.RunDetail] = []
    poller = threading.Thread(target=lambda: result.append(client.runs.poll(held[0], interval=0.1, max_interval=0.3)))
    poller.start()
    client.runs.cancel(held[0])
    poller.join(30)
    thread.join(60)
    assert result and result[0]["run"]["status"] == "canceled"


def test_reads_usage(client: service_sdk.Client) -> None:
    usage = client.usage.current()
    assert re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", usage["period"])
    assert usage["consumedStu"] > 0 and usage["quotaStu"] == 2_000_000
    assert set(usage) == set(models.Usage.__annotations__)


def test_401_403_404_400_503(client: service_sdk.Client, base_url: str) -> None:
    unknown = service_sdk.Client(api_key="service_sk_live_AAAAAAAAAAAAAAAAAAAAAAAA", base_url=base_url, http_client=http_client())
    with pytest.raises(service_sdk.AuthenticationError) as e401:
        unknown.usage.current()
    assert e401.value.status == 401 and e401.value.code == "api_key_not_found" and e401.value.request_id
    with pytest.raises(service_sdk.PermissionError) as e403:
        client.inference.create({**ask("Overdue invoices?"), "agentSlug": "finance"})  # type: ignore[typeddict-unknown-key]
    assert (e403.value.status, e403.value.code, e403.value.agent_slug) == (403, "agent_not_in_plan", "finance")
    with pytest.raises(service_sdk.NotFoundError) as e404:
        client.runs.retrieve("run_0000000000000000Zz")
    assert (e404.value.status, e404.value.code) == (404, "not_found")
    with pytest.raises(service_sdk.InvalidRequestError) as e400:
        client.inference.create({"alias": "GPT", "messages": []})  # type: ignore[typeddict-item]
    assert e400.value.status == 400 and e400.value.code in ("invalid_body", "invalid_request")
    with pytest.raises(service_sdk.InternalServerError) as e503:
        client.inference.create(ask("Answer this [[fail]]"), max_retries=0)
    assert (e503.value.status, e503.value.code) == (503, "service_unavailable")
    assert e503.value.headers.get("retry-after") == "30"
    assert e503.value.headers.get("retry-after-ms") == "30000"


def test_an_engine_failure_says_do_not_retry_and_is_not_retried(proxy, api_key: str) -> None:  # type: ignore[no-untyped-def]
    # Through the proxy, which passes everything to the real server and counts: the same Idempotency-Key would
    # answer the same failed run, so the server sends X-Should-Retry false and the SDK sends one request only.
    proxy.script()
    with service_sdk.Client(api_key=api_key, base_url=proxy.url, http_client=http_client()) as c:
        with pytest.raises(service_sdk.InternalServerError) as failed:
            c.inference.create(ask("Answer this too [[fail]]"))
    assert failed.value.headers.get("x-should-retry") == "false"
    assert [(r["method"], r["path"]) for r in proxy.seen] == [("POST", "/v1/inference")]


def test_retries_429_after_retry_after(proxy, api_key: str) -> None:  # type: ignore[no-untyped-def]
    proxy.script({"status": 429, "headers": {"retry-after": "1"}, "body": {"error": "rate_limit_exceeded", "retryAfterSec": 1}})
    with service_sdk.Client(api_key=api_key, base_url=proxy.url, http_client=http_client()) as c:
        assert c.usage.current()["period"]
    assert [r["path"] for r in proxy.seen] == ["/usage/current", "/usage/current"]


def test_raises_rate_limit_error_after_max_retries(proxy, api_key: str) -> None:  # type: ignore[no-untyped-def]
    limited = {"status": 429, "headers": {"retry-after": "0"}, "body": {"error": "rate_limit_exceeded", "retryAfterSec": 0}}
    proxy.script(limited, limited, limited)
    with service_sdk.Client(api_key=api_key, base_url=proxy.url, max_retries=2, http_client=http_client()) as c:
        with pytest.raises(service_sdk.RateLimitError) as raised:
            c.usage.current()
    assert raised.value.retry_after_sec == 0 and raised.value.request_id == "req_loopback_proxy"
    assert len(proxy.seen) == 3


def test_prefers_retry_after_ms(proxy, api_key: str) -> None:  # type: ignore[no-untyped-def]
    limited = {"error": "rate_limit_exceeded", "retryAfterSec": 30}
    proxy.script({"status": 429, "headers": {"retry-after": "30", "retry-after-ms": "40", "x-should-retry": "true"}, "body": limited})
    started = time.monotonic()
    with service_sdk.Client(api_key=api_key, base_url=proxy.url, http_client=http_client()) as c:
        assert c.usage.current()["period"]
    assert time.monotonic() - started < 5
    assert len(proxy.seen) == 2


def test_does_not_wait_a_retry_after_ms_beyond_a_minute(proxy, api_key: str) -> None:  # type: ignore[no-untyped-def]
    limited = {"error": "rate_limit_exceeded", "retryAfterSec": 90}
    proxy.script({"status": 429, "headers": {"retry-after": "1", "retry-after-ms": "90000"}, "body": limited})
    with service_sdk.Client(api_key=api_key, base_url=proxy.url, http_client=http_client()) as c:
        with pytest.raises(service_sdk.RateLimitError):
            c.usage.current()
    assert len(proxy.seen) == 1


def test_x_should_retry_true_retries_a_post_without_idempotency_key(proxy, api_key: str) -> None:  # type: ignore[no-untyped-def]
    busy = {"error": "service_unavailable", "message": "The service is at capacity; retry shortly.", "requestId": "req_x"}
    proxy.script({"status": 503, "headers": {"retry-after": "1", "retry-after-ms": "20", "x-should-retry": "true"}, "body": busy})
    with service_sdk.Client(api_key=api_key, base_url=proxy.url, http_client=http_client()) as c:
        assert c.mcp.create_token(expires_in_seconds=600)["token"]
    assert [(r["method"], r["path"]) for r in proxy.seen] == [("POST", "/v1/mcp/tenant/tokens")] * 2


def test_x_should_retry_false_is_never_retried(proxy, api_key: str) -> None:  # type: ignore[no-untyped-def]
    proxy.script({"status": 503, "headers": {"retry-after": "0", "x-should-retry": "false"}, "body": {"error": "service_unavailable", "requestId": "req_x"}})
    with service_sdk.Client(api_key=api_key, base_url=proxy.url, http_client=http_client()) as c:
        with pytest.raises(service_sdk.InternalServerError):
            c.usage.current()
    assert len(proxy.seen) == 1


def test_never_retries_quota_exceeded_or_kill_switch(proxy, api_key: str) -> None:  # type: ignore[no-untyped-def]
    quota = {"error": "quota_exceeded", "policy": "hardstop", "pctConsumed": 120.5, "resetAt": "2030-01-01T00:00:00.000Z"}
    proxy.script({"status": 429, "headers": {"retry-after": "0"}, "body": quota})
    with service_sdk.Client(api_key=api_key, base_url=proxy.url, http_client=http_client()) as c:
        with pytest.raises(service_sdk.QuotaExceededError) as raised:
            c.inference.create(ask("Hello"))
        assert (raised.value.policy, raised.value.pct_consumed, raised.value.reset_at) == ("hardstop", 120.5, "2030-01-01T00:00:00.000Z")
        assert len(proxy.seen) == 1
        proxy.script({"status": 429, "headers": {"retry-after": "0"}, "body": {"error": "kill_switch", "kind": "day"}})
        with pytest.raises(service_sdk.KillSwitchError) as killed:
            c.inference.create(ask("Hello"))
        assert killed.value.kind == "day" and len(proxy.seen) == 1


def test_a_lost_answer_is_retried_with_one_idempotency_key(client: service_sdk.Client, proxy, api_key: str) -> None:  # type: ignore[no-untyped-def]
    before = client.runs.list(limit=1).total
    proxy.script("drop-response")
    with service_sdk.Client(api_key=api_key, base_url=proxy.url, http_client=http_client()) as c:
        answer = c.inference.create(ask("Send the renewal proposal."))
    keys = [r["headers"].get("idempotency-key") for r in proxy.seen]
    assert len(keys) == 2 and keys[0] and keys[0] == keys[1]
    assert client.runs.list(limit=1).total == before + 1
    assert client.runs.retrieve(answer["runId"])["run"]["status"] == "completed"


def test_timeout_and_connection_errors(proxy, api_key: str) -> None:  # type: ignore[no-untyped-def]
    proxy.script("hang")
    with service_sdk.Client(api_key=api_key, base_url=proxy.url, max_retries=0, timeout=0.3) as c:
        with pytest.raises(service_sdk.TimeoutError):
            c.usage.current()
    with service_sdk.Client(api_key=api_key, base_url="http://127.0.0.1:19219", max_retries=0) as c:
        with pytest.raises(service_sdk.ConnectionError) as refused:
            c.usage.current()
    assert not isinstance(refused.value, service_sdk.TimeoutError)
