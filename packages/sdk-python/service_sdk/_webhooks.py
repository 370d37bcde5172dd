"""Receiver-side verification of the service's signed deliveries, in the spec's order.

(a) the timestamp inside 300 s in the past and 60 s in the future, before any hashing; (b) HMAC-SHA256
over the exact raw bytes; (c) a constant-time comparison; then (d) an optional dedupe hook. Either header
set verifies: the Standard Webhooks one (``webhook-id``, ``webhook-timestamp``, ``webhook-signature``,
whose signature covers id and timestamp) when present, else the service's own (``X-SERVICE-*``).
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
) -> WebhookVerification:
    """Verifies one delivery. ``raw_body`` is the body exactly as received, never re-serialized JSON.

    Pass several secrets (new first) while rotating. ``dedupe(event_id)`` answers True when the id was already
    handled; it is asked only after the signature verified. Raises TypeError only for a body that is not
    bytes or text.
    """
    if isinstance(raw_body, str):
        body = raw_body.encode()
    elif isinstance(raw_body, (bytes, bytearray, memoryview)):
        body = bytes(raw_body)
    else:
        raise TypeError("verify_webhook: raw_body must be the raw request bytes or text, not a parsed object")
    secrets = [s for s in ([secret] if isinstance(secret, str) else list(secret)) if s]
    if not secrets:
        return _reject("missing_secret")
    standard = _header(headers, "webhook-signature") is not None
    timestamp = _header(headers, "webhook-timestamp" if standard else "x-service-timestamp")
    if not timestamp:
        return _reject("missing_timestamp")
    if not re.fullmatch(r"\d{1,12}", timestamp):
        return _reject("malformed_timestamp")
    skew = int(timestamp) - (time.time() if now is None else now)
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
        and isinstance(value.get("tenant_id"), str)
        and isinstance(value.get("data"), dict)
    )
    return value if ok else None
