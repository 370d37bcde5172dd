"""When and how long to wait before retrying.

``429 rate_limit_exceeded`` and ``429 budget_reserved`` always (the request was refused before any work); 5xx and connection failures
when the request is safe to repeat (a read, a delete, or an invocation carrying its ``Idempotency-Key``).
``quota_exceeded`` and ``kill_switch`` are never retried.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime
from time import time

from ._errors import ConnectionError, ServiceError

INITIAL_DELAY = 0.5
MAX_DELAY = 8.0
#: A ``Retry-After`` longer than this is not waited for: the error is raised with ``retry_after_sec``.
MAX_RETRY_AFTER = 60.0


def is_retriable(error: ServiceError | ConnectionError, repeatable: bool) -> bool:
    if isinstance(error, ConnectionError):
        return repeatable
    if error.code in ("rate_limit_exceeded", "budget_reserved"):
        return True
    if error.code in ("quota_exceeded", "kill_switch"):
        return False
    return repeatable and error.status >= 500 and error.status != 501


def retry_delay(attempt: int, headers: Mapping[str, str] | None, rand: Callable[[], float] = random.random) -> float | None:
    """Seconds to wait before retry ``attempt + 1``; None when ``Retry-After`` asks for too long."""
    retry_after = headers.get("retry-after") if headers is not None else None
    if retry_after:
        seconds: float | None
        try:
            seconds = float(retry_after)
        except ValueError:
            try:
                seconds = parsedate_to_datetime(retry_after).timestamp() - time()
            except (TypeError, ValueError):
                seconds = None
        if seconds is not None:
            return None if seconds > MAX_RETRY_AFTER else float(max(0.0, seconds))
    ceiling = min(MAX_DELAY, INITIAL_DELAY * 2.0**attempt)
    return ceiling / 2 + ceiling / 2 * rand()
