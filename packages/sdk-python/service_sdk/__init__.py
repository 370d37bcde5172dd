"""service_sdk: the official Python SDK of the Agent Invocation Service.

``Client`` (sync) and ``AsyncClient`` (asyncio) over httpx, typed errors, retries with backoff, streaming that
resumes a dropped stream, a run's event log (``runs.events``), pagination, polling, and ``verify_webhook`` for receivers of signed deliveries.
"""

from ._client import AsyncClient, Client
from ._errors import (
    AuthenticationError,
    ConnectionError,
    InternalServerError,
    InvalidRequestError,
    KillSwitchError,
    NotFoundError,
    PermissionDeniedError,
    PermissionError,
    QuotaExceededError,
    RateLimitError,
    ServiceError,
    StreamInterruptedError,
    TimeoutError,
    error_class_of,
)
from ._generated import models
from ._generated.errors import ERROR_FIELDS, ERROR_STATUS
from ._generated.operations import OPERATIONS
from ._run_events import TERMINAL_EVENT_TYPES, is_terminal_run_event
from ._runs import TERMINAL_STATUSES, AsyncRunPage, AsyncRunPaginator, RunPage
from ._stream_events import StreamDelta, StreamEnd, StreamEvent
from ._transport import DEFAULT_BASE_URL
from ._webhooks import WebhookVerification, verify_webhook

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_BASE_URL",
    "ERROR_FIELDS",
    "ERROR_STATUS",
    "OPERATIONS",
    "TERMINAL_EVENT_TYPES",
    "TERMINAL_STATUSES",
    "AsyncClient",
    "AsyncRunPage",
    "AsyncRunPaginator",
    "AuthenticationError",
    "Client",
    "ConnectionError",
    "InternalServerError",
    "InvalidRequestError",
    "KillSwitchError",
    "NotFoundError",
    "PermissionDeniedError",
    "PermissionError",
    "QuotaExceededError",
    "RateLimitError",
    "RunPage",
    "ServiceError",
    "StreamDelta",
    "StreamEnd",
    "StreamEvent",
    "StreamInterruptedError",
    "TimeoutError",
    "WebhookVerification",
    "error_class_of",
    "is_terminal_run_event",
    "models",
    "verify_webhook",
]
