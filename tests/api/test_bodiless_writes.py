"""A write that takes no body (freeze, close, void, refund, a site's freeze) refuses one that
asks for anything, rather than acting with it ignored (docs/http.md "Conventions"): 422
``validation_error`` naming each field, nothing written; an empty body or ``{}`` is the action."""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask

from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, ok, on, problem
from tests.api.test_money import approved, pay

#: the writes that take no body, as the OpenAPI document declares them
BODILESS = {
    "POST /accounts/{account_id}/freeze",
    "POST /accounts/{account_id}/unfreeze",
    "POST /accounts/{account_id}/close",
    "POST /bank-sites/{site_id}/freeze",
    "POST /bank-sites/{site_id}/unfreeze",
    "POST /reservations/{reservation_id}/void",
    "POST /payments/{payment_id}/refund",
    "DELETE /tokens/{token_id}",
}

#: bodies that ask for something a bodiless write does not read, and the errors each gets
ASKING: list[tuple[str, dict[str, list[str]]]] = [
    (
        '{"amount_cents": 100, "reason": "partial"}',
        {"amount_cents": ["Unknown field."], "reason": ["Unknown field."]},
    ),
    ('{"until": "2026-12-08"}', {"until": ["Unknown field."]}),
    ("[1, 2, 3]", {"_schema": ["Invalid input type."]}),
    ('"all"', {"_schema": ["Invalid input type."]}),
    ("0", {"_schema": ["Invalid input type."]}),
    ("null", {"_schema": ["Invalid input type."]}),
]


@pytest.fixture
def kit(api: Api, app: Flask) -> Kit:
    return Kit(api, app)


def post_raw(kit: Kit, path: str, raw: str, token: str | None = None) -> Any:
    return kit.api.post(path, data=raw, headers={"Content-Type": "application/json"}, token=token)


def test_a_refund_asked_with_a_body_is_refused_and_the_payment_kept(kit: Kit) -> None:
    lgu = kit.lgu()
    plan = approved(kit, lgu, "2026-06-01")
    fee = ok(
        pay(kit.api, "processing_fee", 50_000, "2026-06-01", plan_id=plan["id"], token=lgu["token"])
    )
    path = f"/payments/{fee['id']}/refund"
    with on("2026-06-05"):
        for raw, errors in ASKING:
            refused = problem(post_raw(kit, path, raw, lgu["token"]), 422, "validation_error")
            assert refused["errors"] == errors, raw
            assert ok(kit.api.get(f"/payments/{fee['id']}"), 200) == fee
        refunded = ok(post_raw(kit, path, "{}", lgu["token"]), 201)
    assert refunded["status"] == "refunded"


@pytest.mark.parametrize("action", ["freeze", "close"])
def test_an_account_action_asked_with_a_body_is_refused_and_nothing_changes(
    kit: Kit, action: str
) -> None:
    account_id = kit.account(kit.holder()["id"])
    path = f"/accounts/{account_id}/{action}"
    for raw, errors in ASKING:
        refused = problem(post_raw(kit, path, raw), 422, "validation_error")
        assert refused["errors"] == errors, raw
        assert kit.account_body(account_id)["status"] == "open"
    done = ok(kit.api.post(path), 200)  # no body at all
    assert done["status"] == ("frozen" if action == "freeze" else "closed")


def test_unfreezing_and_a_sites_freeze_refuse_a_body_and_take_none_or_an_empty_object(
    kit: Kit,
) -> None:
    holder = kit.holder()
    account_id = kit.account(holder["id"])
    site_id = kit.site(holder["id"])
    ok(kit.api.post(f"/accounts/{account_id}/freeze"), 200)
    path = f"/accounts/{account_id}/unfreeze"
    problem(post_raw(kit, path, '{"on": "today"}'), 422, "validation_error")
    assert kit.account_body(account_id)["status"] == "frozen"
    assert ok(post_raw(kit, f"/accounts/{account_id}/unfreeze", "{}"), 200)["status"] == "open"

    before = ok(kit.api.get(f"/bank-sites/{site_id}"), 200)
    for action in ("freeze", "unfreeze"):
        path = f"/bank-sites/{site_id}/{action}"
        problem(post_raw(kit, path, '{"frozen": false}'), 422, "validation_error")
        assert ok(kit.api.get(f"/bank-sites/{site_id}"), 200) == before
    assert ok(post_raw(kit, f"/bank-sites/{site_id}/freeze", "{}"), 200)["frozen"] is True


def test_a_void_asked_with_a_body_is_refused_and_the_reservation_held(kit: Kit) -> None:
    account = kit.funded_account(day="2026-03-02", service_area=5, unrestricted=10_000)
    lgu = kit.lgu()
    with on("2026-03-10"):
        plan = kit.plan(lgu, received_on="2026-03-10", area_sqft=9_000)
        reservation = kit.reserve(account["id"], plan["id"], account["unrestricted_class"], 400)
        path = f"/reservations/{reservation['id']}/void"
        available = kit.available(account["id"], account["unrestricted_class"])
        problem(post_raw(kit, path, '{"amount_sqft": 1}'), 422, "validation_error")
        token = account["holder"]["token"]
        problem(post_raw(kit, path, "[]", token), 422, "validation_error")
        assert ok(kit.api.get(f"/reservations/{reservation['id']}"), 200) == reservation
        assert kit.available(account["id"], account["unrestricted_class"]) == available
        ok(post_raw(kit, path, "{}", token), 200)
        assert kit.available(account["id"], account["unrestricted_class"]) == available + 400


def test_a_role_the_action_refuses_hears_403_whatever_body_it_sends(kit: Kit) -> None:
    holder = kit.holder()
    account_id = kit.account(holder["id"])
    refused = post_raw(kit, f"/accounts/{account_id}/freeze", '{"x": 1}', holder["token"])
    problem(refused, 403, "forbidden")


def test_revoking_a_token_refuses_a_body_that_asks_for_anything(kit: Kit, app: Flask) -> None:
    secret = make_token(app, "lgu", lgu_id=kit.lgu()["id"])
    token_id = ok(kit.api.get("/me", token=secret), 200)["token_id"]
    path = f"/tokens/{token_id}"
    asked = kit.api.delete(
        path, data='{"keep": true}', headers={"Content-Type": "application/json"}
    )
    assert problem(asked, 422, "validation_error")["errors"] == {"keep": ["Unknown field."]}
    typed = kit.api.delete(path, data="not json{", headers={"Content-Type": "text/plain"})
    problem(typed, 415, "unsupported_media_type")
    assert kit.api.get("/me", token=secret).status_code == 200  # still live
    assert kit.api.delete(path).status_code == 204
    assert kit.api.get("/me", token=secret).status_code == 401


@pytest.mark.parametrize("first, again", [(None, "{}"), ("{}", None)])
def test_no_body_and_an_empty_object_are_one_request_under_an_idempotency_key(
    kit: Kit, first: str | None, again: str | None
) -> None:
    account_id = kit.account(kit.holder()["id"])
    path = f"/accounts/{account_id}/freeze"

    def send(raw: str | None) -> Any:
        headers = {"Idempotency-Key": f"freeze-{account_id}"}
        if raw is None:
            return kit.api.post(path, headers=headers)
        return kit.api.post(path, data=raw, headers={**headers, "Content-Type": "application/json"})

    done = send(first)
    assert ok(done, 200)["status"] == "frozen"
    replayed = send(again)
    assert replayed.status_code == 200, replayed.get_data(as_text=True)
    assert replayed.headers.get("Idempotent-Replayed") == "true"
    assert replayed.get_json() == done.get_json()


def test_the_document_declares_each_bodiless_write_as_it_answers(kit: Kit) -> None:
    """The OpenAPI document's optional, empty-object body is what each such write takes: a
    field is 422 naming it, another content type 415, and none goes on to the action (here 404,
    for an id that names nothing: the body is checked before the action looks it up)."""
    document = ok(kit.api.get("/openapi.json"), 200)
    declared = {}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            body = operation.get("requestBody") if isinstance(operation, dict) else None
            if body is not None and not body.get("required"):
                declared[f"{method.upper()} {path.removeprefix('/api/v1')}"] = body
    assert set(declared) == BODILESS
    for key, body in declared.items():
        assert body["content"] == {
            "application/json": {"schema": {"type": "object", "maxProperties": 0}}
        }, key
        method, template = key.split(" ")
        path = re.sub(r"\{[^}]+\}", "x_0000000000000000", template)
        send = kit.api.delete if method == "DELETE" else kit.api.post
        json_type = {"Content-Type": "application/json"}
        asked = send(path, data='{"until": "2027-01-01"}', headers=json_type)
        assert problem(asked, 422, "validation_error")["errors"] == {"until": ["Unknown field."]}
        typed = send(path, data="x", headers={"Content-Type": "text/plain"})
        problem(typed, 415, "unsupported_media_type")
        assert send(path).status_code == 404, key
        assert send(path, data="{}", headers=json_type).status_code == 404, key
