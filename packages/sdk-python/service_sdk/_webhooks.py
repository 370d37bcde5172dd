"""Receiver-side verification of the service's signed deliveries, in the spec's order.

(a) the timestamp inside 300 s in the past and 60 s in the future, before any hashing; (b) HMAC-SHA256
over the exact raw bytes; (c) a constant-time comparison; then the signed envelope's ``created_at`` inside
its window and (d) an optional dedupe hook.

The Standard Webhooks headers (``webhook-id``, ``webhook-timestamp``, ``webhook-signature``) are required:
their signature covers id and timestamp, so a captured delivery cannot be sent again later under a fresh
timestamp. ``X-SERVICE-Signature`` covers the body only; a delivery carrying only the service's own headers
verifies only when the caller opts in (``allow_service_signature_only=True``), and then its signed
``created_at`` must lie within 300 s, the one signed time such a delivery has.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

WEBHOOK_TOLERANCE_PAST_SECONDS = 300
WEBHOOK_TOLERANCE_FUTURE_SECONDS = 60
EVENT_TYPES = frozenset(
    ["run.completed", "run.failed", "approval.created", "approval.decided", "draft.created", "integration.connected", "ping"]
)


@dataclass(frozen=True)
class WebhookVerification:
    """The verdict. On failure answer ``status`` (401, or 400 for a signed body that is not an event)."""

    ok: bool
    event: dict[str, Any] | None = None
    event_id: str | None = None
    duplicate: bool = False
    reason: str | None = None
    status: int | None = None


def _reject(reason: str) -> WebhookVerification:
    return WebhookVerification(ok=False, reason=reason, status=400 if reason == "invalid_payload" else 401)


def _header(headers: Mapping[str, Any], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            text = value if isinstance(value, str) else ", ".join(value)
            return text.strip()
    return None


def verify_webhook(
    raw_body: bytes | str,
    headers: Mapping[str, Any],
    secret: str | Sequence[str],
    *,
    now: float | None = None,
    dedupe: Callable[[str], bool] | None = None,
    allow_service_signature_only: bool = False,
    max_event_age_seconds: float | None = None,
) -> WebhookVerification:
    """Verifies one delivery. ``raw_body`` is the body exactly as received, never re-serialized JSON.

    Pass several secrets (new first) while rotating. ``dedupe(event_id)`` answers True when the id was already
    handled; it is asked only after the signature verified.

    A delivery without ``webhook-signature`` is refused (``missing_standard_signature``) unless
    ``allow_service_signature_only`` is True. That mode is weaker: ``X-SERVICE-Signature`` covers the body only,
    not the timestamp, so anyone who captured a delivery can send it again under a fresh ``X-SERVICE-Timestamp``.
    Such a delivery is held to its signed ``created_at``, which also refuses the service's own retries and
    replays of older events; a replay inside the window is caught only by ``dedupe``. Turn it on only when
    something between the service and you strips the ``webhook-*`` headers.

    ``max_event_age_seconds`` bounds how old the signed ``created_at`` may be: by default no limit for a delivery
    verified through ``webhook-signature`` (its timestamp is signed, so a retry hours later is fresh), 300 s for
    one verified through ``X-SERVICE-Signature`` alone. A ``created_at`` more than 60 s ahead is always refused.

    Raises TypeError only for a body that is not bytes or text, ValueError for a ``max_event_age_seconds``
    that is not a finite number of seconds, 0 or more.
    """
    if max_event_age_seconds is not None and not 0 <= max_event_age_seconds < float("inf"):
        raise ValueError("verify_webhook: max_event_age_seconds must be a finite number of seconds, 0 or more")
    if isinstance(raw_body, str):
        body = raw_body.encode()
    elif isinstance(raw_body, (bytes, bytearray, memoryview)):
        body = bytes(raw_body)
    else:
        raise TypeError("verify_webhook: raw_body must be the raw request bytes or text, not a parsed object")
    secrets = [s for s in ([secret] if isinstance(secret, str) else list(secret)) if s]
    if not secrets:
        return _reject("missing_secret")
    # The Standard Webhooks set when the delivery carries it (its signature covers id and timestamp too);
    # without it, only by the caller's choice: X-SERVICE-Signature alone says nothing about when it was sent.
    standard = _header(headers, "webhook-signature") is not None
    if not standard and not allow_service_signature_only:
        return _reject("missing_standard_signature")
    timestamp = _header(headers, "webhook-timestamp" if standard else "x-service-timestamp")
    if not timestamp:
        return _reject("missing_timestamp")
    if not re.fullmatch(r"\d{1,12}", timestamp):
        return _reject("malformed_timestamp")
    now_seconds = time.time() if now is None else now
    skew = int(timestamp) - now_seconds
    if skew < -WEBHOOK_TOLERANCE_PAST_SECONDS:
        return _reject("timestamp_too_old")
    if skew > WEBHOOK_TOLERANCE_FUTURE_SECONDS:
        return _reject("timestamp_in_future")
    verdict = _verify_standard(headers, body, timestamp, secrets) if standard else _verify_service(headers, body, secrets)
    if verdict is not None:
        return _reject(verdict)
    event = _parse_event(body)
    if event is None:
        return _reject("invalid_payload")
    header_id = _header(headers, "x-service-event-id")
    if header_id is not None and header_id != event["id"]:
        return _reject("event_id_mismatch")
    if standard and _header(headers, "webhook-id") != event["id"]:
        return _reject("event_id_mismatch")
    header_type = _header(headers, "x-service-event-type")
    if header_type is not None and header_type != event["type"]:
        return _reject("event_type_mismatch")
    # The signed created_at: the only signed time of a delivery verified by X-SERVICE-Signature alone, so a
    # captured body sent again under a fresh X-SERVICE-Timestamp is refused once it is old.
    limit = max_event_age_seconds
    if limit is None:
        limit = float("inf") if standard else WEBHOOK_TOLERANCE_PAST_SECONDS
    created = _parse_created_at(event["created_at"])
    if created is None:  # _parse_event checked it already
        return _reject("invalid_payload")
    age = now_seconds - created
    if age > limit:
        return _reject("created_at_too_old")
    if -age > WEBHOOK_TOLERANCE_FUTURE_SECONDS:
        return _reject("created_at_in_future")
    duplicate = bool(dedupe(event["id"])) if dedupe else False
    return WebhookVerification(ok=True, event=event, event_id=event["id"], duplicate=duplicate)


def _verify_service(headers: Mapping[str, Any], body: bytes, secrets: list[str]) -> str | None:
    """``X-SERVICE-Signature``: lowercase hex HMAC-SHA256 of the body, keyed with the whole secret string."""
    signature = _header(headers, "x-service-signature")
    if not signature:
        return "missing_signature"
    if not re.fullmatch(r"[0-9a-f]{64}", signature):
        return "malformed_signature"
    matched = False
    for key in secrets:
        expected = hmac.new(key.encode(), body, hashlib.sha256).hexdigest()
        matched = hmac.compare_digest(expected, signature) or matched
    return None if matched else "signature_mismatch"


def _verify_standard(headers: Mapping[str, Any], body: bytes, timestamp: str, secrets: list[str]) -> str | None:
    """``webhook-signature`` (Standard Webhooks): space-separated ``v1,<base64>`` HMAC-SHA256 of
    ``<webhook-id>.<webhook-timestamp>.<body>``, keyed with the base64 decoding of the secret after ``whsec_``
    (what the ``standardwebhooks`` libraries do). Any ``v1`` signature under any secret verifies."""
    msg_id = _header(headers, "webhook-id")
    listed = _header(headers, "webhook-signature") or ""
    if not msg_id or not listed:
        return "missing_signature"
    received: list[bytes] = []
    for entry in listed.split(" "):
        version, _, value = entry.partition(",")
        if version != "v1":
            continue
        if not re.fullmatch(r"[A-Za-z0-9+/]{43}=", value):
            return "malformed_signature"
        received.append(base64.b64decode(value))
    if not received:
        return "malformed_signature"
    signed = f"{msg_id}.{timestamp}.".encode() + body
    matched = False
    for secret in secrets:
        key = _standard_key(secret)
        if key is None:
            continue
        expected = hmac.new(key, signed, hashlib.sha256).digest()
        for candidate in received:
            matched = hmac.compare_digest(expected, candidate) or matched
    return None if matched else "signature_mismatch"


def _standard_key(secret: str) -> bytes | None:
    encoded = secret[len("whsec_") :] if secret.startswith("whsec_") else secret
    try:
        return base64.b64decode(encoded, validate=True) or None
    except (binascii.Error, ValueError):
        return None


# RFC 3339 date-time with an explicit offset, as the envelope's ``created_at`` is sent.
_DATE_TIME = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})", re.IGNORECASE)


def _parse_created_at(value: str) -> float | None:
    """The instant of a ``created_at`` in unix seconds, or None when it is not an RFC 3339 date-time."""
    match = _DATE_TIME.fullmatch(value)
    if match is None:
        return None
    whole, fraction, offset = match.groups()
    try:
        instant = datetime.fromisoformat(whole.upper() + (fraction or "")[:7] + ("+00:00" if offset.upper() == "Z" else offset))
    except ValueError:
        return None
    return instant.timestamp()


def _parse_event(body: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(value, dict):
        return None
    ok = (
        isinstance(value.get("id"), str)
        and re.fullmatch(r"evt_[0-9A-Za-z]{16,32}", value["id"]) is not None
        and value.get("type") in EVENT_TYPES
        and isinstance(value.get("created_at"), str)
        and _parse_created_at(value["created_at"]) is not None
        and isinstance(value.get("tenant_id"), str)
        and isinstance(value.get("data"), dict)
    )
    return value if ok else None
