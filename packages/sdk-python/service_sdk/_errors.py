"""The SDK's errors.

Every non-2xx answer raises a ``ServiceError`` (or the subclass of its family) carrying the status, the
contract's ``error`` code, the message, the request id and the code's extra fields; a request that got no
answer raises ``ConnectionError`` or ``TimeoutError`` (which are also the built-in exceptions of those names).
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any

# Body field -> attribute, for the extra fields the contract's error schemas define.
EXTRA_FIELDS: dict[str, str] = {
    "policy": "policy",
    "pctConsumed": "pct_consumed",
    "resetAt": "reset_at",
    "kind": "kind",
    "activeSince": "active_since",
    "retryAfterSec": "retry_after_sec",
    "budget": "budget",
    "agentSlug": "agent_slug",
    "reason": "reason",
    "runId": "run_id",
}


class ServiceError(Exception):
    """A non-2xx answer (or a stream's ``event: error``). Branch on ``code``."""

    status: int
    code: str
    message: str
    request_id: str | None
    headers: Mapping[str, str]
    body: Any
    #: ``quota_exceeded``: the quota policy reached (``hardstop`` refuses).
    policy: str | None = None
    #: ``quota_exceeded``: percentage of the period consumed.
    pct_consumed: float | None = None
    #: ``quota_exceeded``: ISO 8601 time of the next reset.
    reset_at: str | None = None
    #: ``kill_switch``: ``run``, ``hour``, ``day`` or ``manual``.
    kind: str | None = None
    #: ``kill_switch``: since when, when known.
    active_since: str | None = None
    #: ``rate_limit_exceeded``, ``rate_limited``, ``too_many_attempts``, ``budget_reserved``: seconds to wait.
    retry_after_sec: int | None = None
    #: ``budget_reserved``: where runs in progress hold the room (``quota``, ``hour`` or ``day``).
    budget: str | None = None
    #: ``agent_*`` and ``not_a_member``: the agent concerned.
    agent_slug: str | None = None
    #: ``agent_disabled``: why the agent is paused.
    reason: str | None = None
    #: A stream's ``event: error``: the run that failed.
    run_id: str | None = None

    def __init__(
        self,
        *,
        status: int,
        code: str,
        message: str | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        **extras: Any,
    ) -> None:
        self.status = status
        self.code = code
        self.message = message or f"{status} {code}"
        self.request_id = request_id
        self.headers = headers or {}
        self.body = body
        for name, value in extras.items():
            setattr(self, name, value)
        super().__init__(self.message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, code={self.code!r}, request_id={self.request_id!r})"


class InvalidRequestError(ServiceError):
    """400 ``invalid_request``, ``invalid_body``, ``payload_invalid``; also 413 and 431."""


class AuthenticationError(ServiceError):
    """401: ``missing_bearer``, ``not_authenticated``, ``api_key_not_found``, ``api_key_invalid``, ``signature_invalid``."""


class PermissionError(ServiceError):  # noqa: A001 - the SDK's name for 403, as in the TypeScript SDK
    """403: ``scope_required``, ``role_forbidden``, ``agent_*`` … (and 402 ``payment_not_completed``)."""


PermissionDeniedError = PermissionError


class NotFoundError(ServiceError):
    """404: ``not_found`` and every ``*_not_found``, ``webhook_unavailable``."""


class RateLimitError(ServiceError):
    """429 ``rate_limit_exceeded``, ``rate_limited``, ``too_many_attempts``, ``budget_reserved``: wait ``retry_after_sec``."""


class QuotaExceededError(ServiceError):
    """429 ``quota_exceeded``: wait for ``reset_at`` or review consumption. Never retried."""


class KillSwitchError(ServiceError):
    """429 ``kill_switch`` (or a stream's ``event: error`` with it): a spending cut is active. Never retried."""


class InternalServerError(ServiceError):
    """5xx, and a stream's ``event: error`` with ``engine_error``, ``timeout`` or ``internal_error``."""


class ConnectionError(builtins.ConnectionError):  # noqa: A001
    """No answer: the connection failed (refused, reset, DNS)."""


class TimeoutError(ConnectionError, builtins.TimeoutError):  # noqa: A001
    """No answer within the timeout."""


class StreamInterruptedError(ConnectionError):
    """A run's stream kept dropping before its terminal event.

    It was resumed from the run's event log (``GET /v1/runs/{run_id}/events``) up to ``max_retries`` times in a row
    without a new event, or could not be resumed at all (``__cause__`` says why). ``run_id`` and ``last_event_id`` (the
    ``sequence`` of the last event received, 0 for none) let the caller follow the rest later with
    ``client.runs.events(run_id, after=last_event_id)``.
    """

    def __init__(self, message: str, *, run_id: str, last_event_id: int) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.last_event_id = last_event_id


def error_class_of(status: int, code: str) -> type[ServiceError]:
    if code == "quota_exceeded":
        return QuotaExceededError
    if code == "kill_switch":
        return KillSwitchError
    if status == 429:
        return RateLimitError
    if status == 401:
        return AuthenticationError
    if status in (402, 403):
        return PermissionError
    if status in (404, 410) or code.endswith("_not_found"):
        return NotFoundError
    if status >= 500 or code in ("engine_error", "timeout", "internal_error"):
        return InternalServerError
    if status >= 400:
        return InvalidRequestError
    return ServiceError


def create_service_error(status: int, body: Any, headers: Mapping[str, str]) -> ServiceError:
    """The error of a non-2xx answer (or of a stream's error event), from its parsed body."""
    fields: Mapping[str, Any] = body if isinstance(body, Mapping) else {}
    code = fields.get("error") if isinstance(fields.get("error"), str) else f"http_{status}"
    assert isinstance(code, str)
    extras = {attribute: fields[field] for field, attribute in EXTRA_FIELDS.items() if fields.get(field) is not None}
    request_id = fields.get("requestId") if isinstance(fields.get("requestId"), str) else headers.get("x-request-id")
    message = fields.get("message") if isinstance(fields.get("message"), str) else None
    return error_class_of(status, code)(
        status=status, code=code, message=message, request_id=request_id, headers=headers, body=body, **extras
    )
