"""When and how long to wait before retrying.

The server's ``X-Should-Retry`` decides first where it is sent: ``true`` retries whatever the status and the
method (the request was refused before any work), ``false`` never does. Without it: ``429 rate_limit_exceeded``
and ``429 budget_reserved`` always (the request was refused before any work); 5xx and connection failures when
the request is safe to repeat (a read, a delete, or an invocation carrying its ``Idempotency-Key``).
``quota_exceeded`` and ``kill_switch`` are never retried. The wait is ``Retry-After-Ms``, else ``Retry-After``
(seconds or an HTTP date), else exponential backoff with jitter.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime
from time import time

from ._errors import ConnectionError, ServiceError

INITIAL_DELAY = 0.5
MAX_DELAY = 8.0
#: A wait (``Retry-After-Ms`` or ``Retry-After``) longer than this is not waited for: the error is raised with ``retry_after_sec``.
MAX_RETRY_AFTER = 60.0

_NUMBER = re.compile(r"^\d+(\.\d+)?$")


def is_retriable(error: ServiceError | ConnectionError, repeatable: bool) -> bool:
    if isinstance(error, ConnectionError):
        return repeatable
    should_retry = _header(error.headers, "x-should-retry")
    if should_retry == "true":
        return True
    if should_retry == "false":
        return False
    if error.code in ("rate_limit_exceeded", "budget_reserved"):
        return True
    if error.code in ("quota_exceeded", "kill_switch"):
        return False
    return repeatable and error.status >= 500 and error.status != 501


def retry_delay(attempt: int, headers: Mapping[str, str] | None, rand: Callable[[], float] = random.random) -> float | None:
    """Seconds to wait before retry ``attempt + 1``; None when the server asks for longer than ``MAX_RETRY_AFTER``.

    ``Retry-After-Ms`` (milliseconds) first, then ``Retry-After`` (seconds or an HTTP date); a value that does not
    parse is ignored; without either, exponential backoff from 0.5 s capped at 8 s, between half and the whole step.
    """
    seconds = _server_wait(headers)
    if seconds is not None:
        return None if seconds > MAX_RETRY_AFTER else float(max(0.0, seconds))
    ceiling = min(MAX_DELAY, INITIAL_DELAY * 2.0**attempt)
    return ceiling / 2 + ceiling / 2 * rand()


def _server_wait(headers: Mapping[str, str] | None) -> float | None:
    milliseconds = _header(headers, "retry-after-ms")
    if milliseconds and _NUMBER.match(milliseconds):
        return float(milliseconds) / 1000
    retry_after = _header(headers, "retry-after")
    if not retry_after:
        return None
    if _NUMBER.match(retry_after):
        return float(retry_after)
    try:
        return parsedate_to_datetime(retry_after).timestamp() - time()
    except (TypeError, ValueError, IndexError):
        return None


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    """A header's value, stripped; httpx's headers ignore case, a plain mapping is searched without it."""
    if headers is None:
        return None
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    return value.strip() if isinstance(value, str) else None
