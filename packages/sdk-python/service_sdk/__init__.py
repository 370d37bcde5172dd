"""service_sdk: the official Python SDK of the Agent Invocation Service.

``Client`` (sync) and ``AsyncClient`` (asyncio) over httpx, typed errors, retries with backoff, streaming,
pagination, polling, and ``verify_webhook`` for receivers of signed deliveries.
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
    TimeoutError,
    error_class_of,
)
from ._generated import models
from ._generated.errors import ERROR_FIELDS, ERROR_STATUS
from ._generated.operations import OPERATIONS
from ._inference import StreamDelta, StreamEnd, StreamEvent
from ._runs import TERMINAL_STATUSES, AsyncRunPage, AsyncRunPaginator, RunPage
from ._transport import DEFAULT_BASE_URL
from ._webhooks import WebhookVerification, verify_webhook

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_BASE_URL",
    "ERROR_FIELDS",
    "ERROR_STATUS",
    "OPERATIONS",
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
    "TimeoutError",
    "WebhookVerification",
    "error_class_of",
    "models",
    "verify_webhook",
]
