"""Issue 8 §5: the authorization matrix, generated against the app's OpenAPI document.

Every operation the document lists must have a row below (a new endpoint without one fails the
test), and every route the app serves under ``/api/v1`` must be in the document.  Each row names
the roles allowed; every cell is checked:

* allowed → the request gets past authorization (not 401, 403 or 404; never 5xx);
* any other token → 403 ``forbidden`` or 404 ``not_found`` (a resource the caller may not see
  must not leak its existence);
* a revoked token → 401 everywhere; no token → 401 except on public endpoints.

"The LGU" and "the holder" own the resources the paths name; "another LGU" and "another holder"
own nothing of them.  Bodies are valid (``world.valid_bodies``), so that schema validation does
not answer before authorization does; the refused roles go first on each endpoint, so that no
allowed write has changed the state they see.  Token values never appear in the logs.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from api import create_app
from bank import access
from tests.system.harness import BASE, days_ago
from tests.system.world import AppClient, World, build_world, fill, operations, valid_bodies

pytestmark = pytest.mark.system

ROLES = ("none", "revoked", "other_holder", "holder", "other_lgu", "lgu", "board")
TOKEN_ROLES = {"board", "lgu", "other_lgu", "holder", "other_holder"}

#: "METHOD /path" → the roles allowed ("public": anyone, even without a token; "*": any token)
MATRIX: dict[str, str] = {
    "GET /health": "public",
    "GET /ready": "public",
    "GET /me": "*",
    "POST /tokens": "board",
    "GET /tokens": "board",
    "GET /tokens/{token_id}": "board",
    "DELETE /tokens/{token_id}": "board",
    "POST /holders": "board",
    "GET /holders": "board",
    "GET /holders/{holder_id}": "board holder",
    "PATCH /holders/{holder_id}": "board",
    "POST /lgus": "board",
    "GET /lgus": "board",
    "GET /lgus/{lgu_id}": "*",
    "PATCH /lgus/{lgu_id}": "board",
    "POST /bank-sites": "board",
    "GET /bank-sites": "board",
    "GET /bank-sites/{site_id}": "board holder",
    "PATCH /bank-sites/{site_id}": "board",
    "POST /bank-sites/{site_id}/freeze": "board",
    "POST /bank-sites/{site_id}/unfreeze": "board",
    "POST /bank-sites/{site_id}/credit-areas": "board",
    "GET /bank-sites/{site_id}/status-history": "board holder",
    "GET /service-areas": "*",
    "GET /accounts": "board holder other_holder",
    "POST /accounts": "board",
    "GET /accounts/{account_id}": "board holder",
    "GET /accounts/{account_id}/balances": "board holder",
    "GET /accounts/{account_id}/lots": "board holder",
    "GET /accounts/{account_id}/entries": "board holder",
    "GET /accounts/{account_id}/status-history": "board holder",
    "POST /accounts/{account_id}/freeze": "board",
    "POST /accounts/{account_id}/unfreeze": "board",
    "POST /accounts/{account_id}/close": "board",
    "POST /accounts/{account_id}/deposits": "board",
    "GET /deposits/{deposit_id}": "board holder",
    "POST /deposits/{deposit_id}/reverse": "board",
    "POST /transfers": "board holder",
    "POST /accounts/{account_id}/reservations": "board holder",
    "GET /accounts/{account_id}/reservations": "board holder",
    "GET /reservations/{reservation_id}": "board holder lgu",
    "POST /reservations/{reservation_id}/void": "board holder",
    "GET /plans": "board lgu other_lgu",
    "POST /plans": "board lgu other_lgu",
    "GET /plans/{plan_id}": "board lgu",
    "POST /plans/{plan_id}/notices": "board lgu",
    "POST /plans/{plan_id}/extensions": "board lgu",
    "POST /plans/{plan_id}/decision": "board lgu",
    "POST /plans/{plan_id}/tep-referral": "board lgu",
    "POST /plans/{plan_id}/tep-determination": "board lgu",
    "POST /plans/{plan_id}/decision-notice": "board lgu",
    "POST /plans/{plan_id}/copy-requests": "board lgu",
    "GET /plans/{plan_id}/notices/application": "board lgu",
    "GET /plans/{plan_id}/notices/decision": "board lgu",
    "POST /plans/{plan_id}/copy-requests/{copy_request_id}/copies-mailed": "board lgu",
    "GET /plans/{plan_id}/notices": "board lgu",
    "GET /plans/{plan_id}/notices/{notice_id}": "board lgu",
    "POST /plans/{plan_id}/revisions": "board lgu",
    "POST /plans/{plan_id}/withdrawals": "board lgu",
    "POST /plans/{plan_id}/replacement-completed": "board lgu",
    "POST /plans/{plan_id}/appeal-security": "board lgu",
    "POST /plans/{plan_id}/appeals": "board",
    "GET /appeals/{appeal_id}": "board lgu",
    "POST /appeals/{appeal_id}/petition": "board",
    "POST /appeals/{appeal_id}/decision": "board",
    "POST /appeals/{appeal_id}/service": "board",
    "GET /payments": "board lgu",
    "POST /payments": "board lgu",
    "GET /payments/{payment_id}": "board lgu",
    "POST /payments/{payment_id}/refund": "board lgu",
    "POST /payments/{payment_id}/reverse": "board",
    "POST /plans/{plan_id}/securities": "board lgu",
    "GET /securities": "board lgu other_lgu",
    "GET /securities/{security_id}": "board lgu",
    "POST /securities/{security_id}/release": "board lgu",
    "POST /securities/{security_id}/draw": "board lgu",
    "GET /audit/journal": "board",
    "GET /audit/trial-balance": "board",
    "GET /audit/verify": "board",
    "GET /audit/events": "board",
    "GET /accounts/{account_id}/statement": "board holder",
    "GET /reports/credit-availability": "public",
    "GET /reports/lgu-compliance": "board",
}


#: writes that name the resource in the body, not the path: another party's plan is refused
#: exactly as a plan that does not exist is (422 naming the field), which leaks nothing either
REFUSED_AS_UNKNOWN = {"POST /payments": "plan_id"}


def allowed_roles(spec: str) -> set[str]:
    if spec == "public":
        return TOKEN_ROLES | {"none"}
    if spec == "*":
        return set(TOKEN_ROLES)
    return set(spec.split())


def query_for(key: str, world: World) -> dict[str, str] | None:
    return {
        "GET /accounts/{account_id}/balances": {"as_of": days_ago(1)},
        "GET /accounts/{account_id}/statement": {"from": days_ago(30), "to": days_ago(0)},
        "GET /payments": {"plan_id": world.ids["plan_id"]},
        "GET /reports/lgu-compliance": {"from": days_ago(30), "to": days_ago(0)},
    }.get(key)


@pytest.fixture
def app(pg_url: str) -> Iterator[Flask]:
    application = create_app({"DATABASE_URL": pg_url, "PROPAGATE_EXCEPTIONS": False})
    yield application
    application.extensions["wetbank.db"].dispose()


def expectation(role: str, allowed: set[str]) -> str:
    if role == "revoked" or (role == "none" and "none" not in allowed):
        return "401"
    return "allowed" if role in allowed else "refused"


def matches(key: str, expected: str, status: int, body: Any) -> bool:
    if status >= 500:
        return False
    if expected == "allowed":
        return status not in (401, 403, 404)
    code = body.get("code") if isinstance(body, dict) else None
    if expected == "401":
        return (status, code) == (401, "unauthorized")
    if key in REFUSED_AS_UNKNOWN and (status, code) == (422, "validation_error"):
        return set(body.get("errors") or {}) == {REFUSED_AS_UNKNOWN[key]}
    return (status, code) in ((403, "forbidden"), (404, "not_found"))


def test_every_endpoint_by_every_role(
    app: Flask, pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    world = build_world(app, pg_url)
    client = AppClient(app.test_client())
    doc = client.ok("GET", "/openapi.json", status=200)
    listed = {f"{method} {path}" for method, path, _op in operations(doc)}
    assert not listed - set(MATRIX), f"endpoints without a row: {sorted(listed - set(MATRIX))}"
    assert not set(MATRIX) - listed, f"rows without an endpoint: {sorted(set(MATRIX) - listed)}"
    served = {
        f"{method} {rule.rule.removeprefix(BASE).replace('<', '{').replace('>', '}')}"
        for rule in app.url_map.iter_rules()
        if rule.rule.startswith(BASE + "/")
        and not rule.rule.startswith((BASE + "/openapi", BASE + "/docs"))  # the documentation
        for method in rule.methods or ()
        if method not in ("HEAD", "OPTIONS")
    }
    assert served <= listed, f"routes missing from the OpenAPI document: {served - listed}"

    bodies = valid_bodies(world)
    table: list[tuple[str, str, str, int, Any]] = []
    for method, template, _op in operations(doc):
        key = f"{method} {template}"
        allowed = allowed_roles(MATRIX[key])
        path = fill(template, world.ids)
        # the refused first, so that no allowed write has changed what they see
        for role in sorted(ROLES, key=lambda r: (expectation(r, allowed) == "allowed", r)):
            status, _h, body = client.call(
                method,
                path,
                bodies.get(key),
                token=world.tokens[role] or "",
                query=query_for(key, world),
                headers={"Idempotency-Key": f"{role}-{key}"} if method == "POST" else None,
            )
            table.append((key, role, expectation(role, allowed), status, body))

    wrong = [
        f"{key} as {role}: expected {expected}, got {status} {body if status >= 400 else ''}"
        for key, role, expected, status, body in table
        if not matches(key, expected, status, body)
    ]
    assert not wrong, "\n".join(wrong)
    # ... and such a refusal reads exactly like a reference to nothing
    for key, field in REFUSED_AS_UNKNOWN.items():
        method, path = key.split(" ", 1)
        answers = []
        for value in (world.ids[field], "plan_0000000000000000"):
            status, _h, body = client.call(
                method, path, {**bodies[key], field: value}, token=world.tokens["other_lgu"] or ""
            )
            answers.append((status, body["code"], body["detail"], body["errors"]))
        assert answers[0] == answers[1], answers
    assert len(table) == len(listed) * len(ROLES)

    # token values never reach the logs, the audit trail or the journal
    secrets = [t for t in world.tokens.values() if t]
    logged = caplog.text
    assert logged, "nothing was logged: the check would prove nothing"
    board = world.tokens["board"]
    events = client.ok("GET", "/audit/events?limit=500", status=200, token=board)
    journal = client.ok("GET", "/audit/journal?limit=500", status=200, token=board)
    for secret in secrets:
        assert secret not in logged
        assert secret not in str(events) and secret not in str(journal)


def test_refusals_are_audited_without_the_token(app: Flask, pg_url: str) -> None:
    world = build_world(app, pg_url)
    client = AppClient(app.test_client())
    bad = "wbt_" + "x" * 43
    status, _h, body = client.call("GET", "/audit/verify", token=world.tokens["holder"] or "")
    assert (status, body["code"]) == (403, "forbidden")
    status, _h, body = client.call("GET", "/me", token=bad)
    assert (status, body["code"]) == (401, "unauthorized")
    events = client.ok("GET", "/audit/events?limit=500", status=200, token=world.tokens["board"])
    kinds = [(e["kind"], e["status"]) for e in events["items"]]
    assert ("forbidden", 403) in kinds and ("unauthorized", 401) in kinds
    assert bad not in str(events) and str(world.tokens["holder"]) not in str(events)


def test_tokens_are_stored_hashed_and_compared_in_constant_time() -> None:
    # both ways in (a read's check, a keyed write's check-and-claim) hash the secret and hand the
    # row found by that hash to the one function that compares in constant time
    for way_in in (access.authenticate, access.authenticate_claiming):
        source = inspect.getsource(way_in)
        assert "hash_token(secret)" in source and "_actor_of(" in source, way_in.__name__
    assert "hmac.compare_digest" in inspect.getsource(access._actor_of)
    assert len(access.hash_token("wbt_x")) == 64
