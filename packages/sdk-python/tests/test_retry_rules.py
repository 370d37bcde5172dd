"""The retry rules and the error mapping, as pure functions (the same rules as the TypeScript SDK)."""

from __future__ import annotations

from email.utils import formatdate
from time import time

import service_sdk
from service_sdk._errors import create_service_error
from service_sdk._retry import MAX_DELAY, is_retriable, retry_delay


def error(status: int, body: dict[str, object]) -> service_sdk.ServiceError:
    return create_service_error(status, body, {})


def test_what_is_retried() -> None:
    assert is_retriable(error(429, {"error": "rate_limit_exceeded", "retryAfterSec": 1}), False)
    assert is_retriable(error(503, {"error": "service_unavailable"}), True)
    assert not is_retriable(error(500, {"error": "internal_error"}), False)
    assert is_retriable(service_sdk.ConnectionError("refused"), True)
    assert not is_retriable(service_sdk.ConnectionError("refused"), False)
    assert not is_retriable(error(429, {"error": "quota_exceeded", "policy": "hardstop"}), True)
    assert not is_retriable(error(429, {"error": "kill_switch", "kind": "day"}), True)
    assert not is_retriable(error(501, {"error": "not_implemented"}), True)
    # No run was created: retried whether or not the request is repeatable.
    reserved = error(429, {"error": "budget_reserved", "budget": "hour", "retryAfterSec": 5})
    assert isinstance(reserved, service_sdk.RateLimitError)
    assert (reserved.budget, reserved.retry_after_sec) == ("hour", 5)
    assert is_retriable(reserved, False)


def test_x_should_retry_decides_first() -> None:
    def hinted(status: int, body: dict[str, object], should_retry: str) -> service_sdk.ServiceError:
        return create_service_error(status, body, {"x-should-retry": should_retry})

    # true: retried where the SDK's own rule would not (a POST's 503 without Idempotency-Key, a 4xx, too_many_attempts).
    assert is_retriable(hinted(503, {"error": "service_unavailable"}, "true"), False)
    assert is_retriable(hinted(409, {"error": "conflict"}, "true"), False)
    assert is_retriable(hinted(429, {"error": "too_many_attempts"}, "true"), False)
    # false: never retried, even a repeatable 503 or a rate limit.
    assert not is_retriable(hinted(503, {"error": "service_unavailable"}, "false"), True)
    assert not is_retriable(hinted(429, {"error": "rate_limit_exceeded", "retryAfterSec": 1}, "false"), True)
    # Anything else: the SDK's own rule; header names are matched without regard to case.
    assert not is_retriable(hinted(503, {"error": "service_unavailable"}, "maybe"), False)
    assert is_retriable(hinted(503, {"error": "service_unavailable"}, "maybe"), True)
    assert not is_retriable(create_service_error(503, {"error": "service_unavailable"}, {"X-Should-Retry": "false"}), True)


def test_prefers_retry_after_ms_bounded_by_a_minute() -> None:
    assert retry_delay(0, {"retry-after-ms": "1250", "retry-after": "2"}) == 1.25
    assert retry_delay(0, {"retry-after-ms": "0"}) == 0.0
    assert retry_delay(0, {"retry-after-ms": "120000", "retry-after": "1"}) is None
    # One that does not parse is ignored: Retry-After, then backoff.
    assert retry_delay(0, {"retry-after-ms": "soon", "retry-after": "2"}) == 2.0
    assert retry_delay(0, {"retry-after-ms": "soon"}, lambda: 1.0) == 0.5
    assert retry_delay(0, {"retry-after": "not a date"}, lambda: 1.0) == 0.5


def test_how_long_to_wait() -> None:
    assert retry_delay(0, {"retry-after": "1"}) == 1.0
    assert retry_delay(0, {"retry-after": "3600"}) is None
    in_two_seconds = retry_delay(0, {"retry-after": formatdate(time() + 2, usegmt=True)})
    assert in_two_seconds is not None and in_two_seconds <= 2.0
    assert retry_delay(0, None, lambda: 0.0) == 0.25
    assert retry_delay(0, None, lambda: 1.0) == 0.5
    assert retry_delay(20, None, lambda: 1.0) == MAX_DELAY


def test_each_code_has_its_class_and_fields() -> None:
    for code, status in service_sdk.ERROR_STATUS.items():
        assert issubclass(service_sdk.error_class_of(status, code), service_sdk.ServiceError)
    assert service_sdk.error_class_of(429, "quota_exceeded") is service_sdk.QuotaExceededError
    assert service_sdk.error_class_of(429, "kill_switch") is service_sdk.KillSwitchError
    assert service_sdk.error_class_of(403, "agent_disabled") is service_sdk.PermissionError
    quota = error(429, {"error": "quota_exceeded", "policy": "grace", "pctConsumed": 115.5, "resetAt": "2030-01-01T00:00:00Z", "requestId": "req_1"})
    assert isinstance(quota, service_sdk.QuotaExceededError)
    assert (quota.policy, quota.pct_consumed, quota.reset_at, quota.request_id) == ("grace", 115.5, "2030-01-01T00:00:00Z", "req_1")
    assert isinstance(service_sdk.TimeoutError("x"), TimeoutError) and isinstance(service_sdk.TimeoutError("x"), ConnectionError)
