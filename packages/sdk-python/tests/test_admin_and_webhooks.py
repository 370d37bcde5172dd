"""Admin login, key management and verify_webhook against a real delivery."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from pathlib import Path

import pytest

import service_sdk
from tests.conftest import ask, http_client, wait_until


def test_login_creates_a_scoped_key_then_revokes_it(admin: service_sdk.Client, base_url: str) -> None:
    assert admin.session is not None and admin.session["user"]["role"] in ("owner", "admin")
    created = admin.api_keys.create({"name": "python sdk test", "scopes": ["usage:read"]})
    assert created["secret"].startswith("service_sk_live_") and len(created["secret"]) == 40
    with service_sdk.Client(api_key=created["secret"], base_url=base_url, http_client=http_client()) as limited:
        assert limited.usage.current()["quotaStu"] == 2_000_000
        with pytest.raises(service_sdk.PermissionError) as refused:
            limited.inference.create(ask("Hello"))
        assert (refused.value.status, refused.value.code) == (403, "scope_required")
        assert created["id"] in [key["id"] for key in admin.api_keys.list()["data"]]
        admin.api_keys.revoke(created["id"])
        with pytest.raises(service_sdk.AuthenticationError) as revoked:
            limited.usage.current()
        assert revoked.value.code == "api_key_not_found"


def test_a_wrong_totp_code_is_an_authentication_error(base_url: str) -> None:
    import os

    with pytest.raises(service_sdk.AuthenticationError) as raised:
        service_sdk.Client.login(
            base_url=base_url,
            email=os.environ["SERVICE_TEST_ADMIN_EMAIL"],
            password=os.environ["SERVICE_TEST_ADMIN_PASSWORD"],
            totp_code="000000",
            http_client=http_client(),
        )
    assert (raised.value.status, raised.value.code) == (401, "not_authenticated")


def test_verify_webhook_accepts_a_real_delivery(admin: service_sdk.Client, client: service_sdk.Client, receiver: tuple[str, Path]) -> None:
    url, deliveries = receiver
    destination = admin.webhooks.destinations.create({"url": f"{url}/hooks", "events": ["run.completed"]})
    answer = client.inference.create(ask("Qualify the new lead."))

    def delivered() -> list[dict[str, object]]:
        found = []
        for path in sorted(deliveries.glob("*.json")):
            record = json.loads(path.read_text())
            if answer["runId"].encode() in bytes.fromhex(record["body"]):
                found.append(record)
        return found

    wait_until(lambda: bool(delivered()), "the run.completed delivery")
    record = delivered()[0]
    body = bytes.fromhex(str(record["body"]))
    headers = record["headers"]
    assert isinstance(headers, dict)
    result = service_sdk.verify_webhook(body, headers, destination["secret"])
    assert result.ok and result.event is not None
    assert result.event["type"] == "run.completed" and result.event["data"]["run_id"] == answer["runId"]
    assert result.event_id == headers["x-service-event-id"] and result.duplicate is False
    # Only the exact bytes with the right secret verify.
    assert service_sdk.verify_webhook(body, headers, "whsec_wrong").reason == "signature_mismatch"
    pretty = json.dumps(json.loads(body), indent=2)
    assert service_sdk.verify_webhook(pretty, headers, destination["secret"]).reason == "signature_mismatch"
    stale = service_sdk.verify_webhook(body, headers, destination["secret"], now=time.time() + 3600)
    assert (stale.reason, stale.status) == ("timestamp_too_old", 401)
    seen = {result.event_id}
    assert service_sdk.verify_webhook(body, headers, destination["secret"], dedupe=lambda i: i in seen).duplicate is True
    # The Standard Webhooks set alone verifies; the service's alone only when allowed (its signature covers the body only).
    assert headers["webhook-id"] == headers["x-service-event-id"]
    assert headers["webhook-signature"].startswith("v1,")
    service_only = {k: v for k, v in headers.items() if not k.startswith("webhook-")}
    standard_only = {k: v for k, v in headers.items() if not k.startswith("x-service-")}
    assert service_sdk.verify_webhook(body, service_only, destination["secret"], allow_service_signature_only=True).ok
    assert service_sdk.verify_webhook(body, standard_only, destination["secret"]).ok
    # The Standard Webhooks signature covers the timestamp: moving it breaks the signature.
    moved = {**standard_only, "webhook-timestamp": str(int(standard_only["webhook-timestamp"]) + 1)}
    assert service_sdk.verify_webhook(body, moved, destination["secret"]).reason == "signature_mismatch"
    # What the standardwebhooks libraries compute with the secret string as shown (base64 after whsec_).
    key = base64.b64decode(destination["secret"][len("whsec_") :])
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    assert headers["webhook-signature"] == f"v1,{expected}"


def test_verify_webhook_refuses_a_delivery_replayed_later_without_its_webhook_headers(
    admin: service_sdk.Client, receiver: tuple[str, Path]
) -> None:
    """X-SERVICE-Signature covers the body only: a captured delivery sent again an hour later under a fresh
    X-SERVICE-Timestamp, its webhook-* headers stripped, must not verify, even when X-SERVICE-* alone is allowed."""
    url, deliveries = receiver
    destination = admin.webhooks.destinations.create({"url": f"{url}/replayed", "events": ["run.completed"]})
    secret = destination["secret"]
    [event_id] = admin.webhooks.destinations.ping(destination["id"])["eventIds"]

    def arrived() -> list[dict[str, object]]:
        records = [json.loads(path.read_text()) for path in sorted(deliveries.glob("*.json"))]
        return [r for r in records if isinstance(r["headers"], dict) and r["headers"].get("x-service-event-id") == event_id]

    wait_until(lambda: bool(arrived()), "the ping")
    record = arrived()[0]
    body = bytes.fromhex(str(record["body"]))
    headers = record["headers"]
    assert isinstance(headers, dict)
    genuine = service_sdk.verify_webhook(body, headers, secret)
    assert genuine.ok and genuine.event_id == event_id

    later = time.time() + 3600
    service_only = {k: v for k, v in headers.items() if not k.startswith("webhook-")}
    replay = {**service_only, "x-service-timestamp": str(int(later))}
    refused = service_sdk.verify_webhook(body, replay, secret, now=later)
    assert (refused.ok, refused.reason, refused.status) == (False, "missing_standard_signature", 401)
    allowed = service_sdk.verify_webhook(body, replay, secret, now=later, allow_service_signature_only=True)
    assert (allowed.ok, allowed.reason, allowed.status) == (False, "created_at_too_old", 401)
    # The same delivery now, carrying only X-SERVICE-*: verifies when the receiver allows it, not otherwise.
    fresh = service_sdk.verify_webhook(body, service_only, secret, allow_service_signature_only=True)
    assert fresh.ok and fresh.event_id == event_id
    assert service_sdk.verify_webhook(body, service_only, secret).reason == "missing_standard_signature"


_SECRET = "whsec_" + "ReceiverSecretForCreatedAtTests".ljust(32, "0")
_NOW = 1_795_158_846.0


def _signed(created_at: float, at: float, *, standard: bool = True) -> tuple[bytes, dict[str, str]]:
    """A delivery signed as the service signs it (both header sets, or X-SERVICE-* only) at ``at``."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created_at)) + ".000Z"
    event = {"id": "evt_CreatedAtWindow000001", "type": "ping", "created_at": stamp, "tenant_id": "wksp_0123456789abcdef", "data": {}}
    body = json.dumps(event, separators=(",", ":")).encode()
    timestamp = str(int(at))
    headers = {
        "x-service-signature": hmac.new(_SECRET.encode(), body, hashlib.sha256).hexdigest(),
        "x-service-timestamp": timestamp,
        "x-service-event-id": str(event["id"]),
        "x-service-event-type": "ping",
    }
    if standard:
        key = base64.b64decode(_SECRET[len("whsec_") :])
        digest = hmac.new(key, f"{event['id']}.{timestamp}.".encode() + body, hashlib.sha256).digest()
        headers |= {"webhook-id": str(event["id"]), "webhook-timestamp": timestamp, "webhook-signature": "v1," + base64.b64encode(digest).decode()}
    return body, headers


@pytest.mark.parametrize(("age", "reason"), [(300, None), (301, "created_at_too_old"), (-60, None), (-61, "created_at_in_future")])
def test_with_service_signature_only_the_signed_created_at_is_held_to_the_window(age: int, reason: str | None) -> None:
    body, headers = _signed(_NOW - age, _NOW, standard=False)
    result = service_sdk.verify_webhook(body, headers, _SECRET, now=_NOW, allow_service_signature_only=True)
    assert (result.ok, result.reason) == (reason is None, reason)


def test_a_retry_hours_after_the_event_verifies_through_webhook_signature_only() -> None:
    # The service retries up to hours after the event with the same body; webhook-timestamp is signed.
    later = _NOW + 2 * 3600
    body, headers = _signed(_NOW, later)
    for allow in (False, True):
        assert service_sdk.verify_webhook(body, headers, _SECRET, now=later, allow_service_signature_only=allow).ok
    service_only = {k: v for k, v in headers.items() if not k.startswith("webhook-")}
    late = service_sdk.verify_webhook(body, service_only, _SECRET, now=later, allow_service_signature_only=True)
    assert (late.reason, late.status) == ("created_at_too_old", 401)
    widened = service_sdk.verify_webhook(body, service_only, _SECRET, now=later, allow_service_signature_only=True, max_event_age_seconds=3 * 3600)
    assert widened.ok
    capped = service_sdk.verify_webhook(body, headers, _SECRET, now=later, max_event_age_seconds=300)
    assert capped.reason == "created_at_too_old"
    ahead_body, ahead_headers = _signed(_NOW + 120, _NOW)
    assert service_sdk.verify_webhook(ahead_body, ahead_headers, _SECRET, now=_NOW).reason == "created_at_in_future"
    with pytest.raises(ValueError):
        service_sdk.verify_webhook(body, headers, _SECRET, now=later, max_event_age_seconds=-1)


def test_a_test_event_of_a_chosen_type_arrives_marked_as_a_test(admin: service_sdk.Client, receiver: tuple[str, Path]) -> None:
    url, deliveries = receiver
    destination = admin.webhooks.destinations.create({"url": f"{url}/test-events", "events": ["run.completed"]})
    queued = admin.webhooks.destinations.send_test_event(destination["id"], "approval.created")
    [event_id] = queued["eventIds"]

    def arrived() -> list[dict[str, object]]:
        records = [json.loads(path.read_text()) for path in sorted(deliveries.glob("*.json"))]
        return [r for r in records if isinstance(r["headers"], dict) and r["headers"].get("x-service-event-id") == event_id]

    wait_until(lambda: bool(arrived()), "the test event")
    [record] = arrived()
    event = json.loads(bytes.fromhex(str(record["body"])))
    assert (event["type"], event["test"]) == ("approval.created", True)


def test_the_audit_log_lists_a_change_with_its_actor_and_never_a_secret(admin: service_sdk.Client) -> None:
    created = admin.api_keys.create({"name": "python audited", "scopes": ["usage:read"]})
    page = admin.list_audit_events(query={"target": created["id"]})
    assert [e["action"] for e in page["data"]] == ["key.created"]
    assert admin.session is not None
    assert page["data"][0]["actor"] == {"type": "user", "id": admin.session["user"]["id"], "label": admin.session["user"]["email"]}
    assert created["secret"] not in json.dumps(page)


def test_drafts_of_a_run_and_an_agents_configuration(admin: service_sdk.Client, client: service_sdk.Client) -> None:
    answer = client.agents.message("sales", {"alias": "Sonata", "messages": [{"role": "user", "content": "Write an email to the new lead."}]})
    page = admin.drafts.list(run_id=answer["runId"])
    assert (page["total"], page["limit"], page["offset"]) == (1, 50, 0)
    draft = page["data"][0]
    assert (draft["runId"], draft["agentSlug"], draft["kind"]) == (answer["runId"], "sales", "email")
    assert admin.drafts.retrieve(draft["id"]) == draft
    with pytest.raises(service_sdk.NotFoundError):
        admin.drafts.retrieve("drf_0000000000000000AAAA")

    configuration = admin.agent_configurations.retrieve("marketing")
    assert (configuration["customInstructions"], configuration["stepLimit"], configuration["tools"]) == (False, 8, None)
    changed = admin.agent_configurations.update("marketing", {"instructions": "Plan campaigns.", "stepLimit": 3, "tools": ["cms"], "approvals": {}})
    assert (changed["instructions"], changed["customInstructions"], changed["stepLimit"]) == ("Plan campaigns.", True, 3)
    with pytest.raises(service_sdk.InvalidRequestError) as refused:
        admin.agent_configurations.update("marketing", {"instructions": None, "stepLimit": 0, "tools": None, "approvals": {}})
    assert refused.value.code == "invalid_body"
