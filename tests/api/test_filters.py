"""docs/http.md "Lists, cursors and CSV": listings' filters, and unknown query parameters refused
with 400 ``bad_request`` naming them, on every API endpoint (the pages keep their own
parameters)."""

from __future__ import annotations

import pytest

from tests.api.kit import Kit, ok, problem


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


# --- unknown query parameters ---------------------------------------------------------------


def test_a_misspelt_filter_is_400_naming_it_not_every_row(api):
    body = problem(api.get("/accounts?holderid=x"), 400, "bad_request")
    assert "holderid" in body["detail"]
    assert list(body["errors"]) == ["holderid"]


def test_every_unknown_parameter_is_named(api):
    body = problem(api.get("/plans?status=received&zzz=1&aaa=2"), 400, "bad_request")
    assert sorted(body["errors"]) == ["aaa", "zzz"]


def test_an_endpoint_without_a_query_schema_refuses_any_parameter(api, kit):
    holder = kit.holder()
    body = problem(api.get(f"/holders/{holder['id']}?verbose=1"), 400, "bad_request")
    assert "verbose" in body["detail"]
    problem(api.post("/holders?dry_run=1", {"name": "X"}), 400, "bad_request")


def test_format_is_taken_everywhere_the_app_reads_it(api, kit):
    holder = kit.holder()
    account = kit.account(holder["id"])
    response = api.get(f"/accounts/{account}/entries?format=csv")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    ok(api.get(f"/holders/{holder['id']}?format=json"), 200)


def test_a_token_and_a_role_are_checked_before_the_query(api, kit, lgu):
    problem(api.get("/accounts?holderid=x", token="nope"), 401, "unauthorized")
    problem(api.get("/accounts?holderid=x", token=lgu["token"]), 403, "forbidden")


def test_public_endpoints_refuse_unknown_parameters_too(api):
    problem(api.get("/health?x=1", token=""), 400, "bad_request")


def test_the_pages_keep_their_own_parameters(app):
    response = app.test_client().get("/sign-in?next=/")
    assert response.status_code == 200


# --- accounts by holder ---------------------------------------------------------------------


def test_accounts_by_holder_returns_only_that_holders_accounts(api, kit):
    one, two = kit.holder(), kit.holder()
    mine = {kit.account(one["id"]), kit.account(one["id"], county="Lincoln")}
    kit.account(two["id"])
    body = ok(api.get(f"/accounts?holder_id={one['id']}&limit=500"), 200)
    assert {item["id"] for item in body["items"]} == mine
    assert {item["holder_id"] for item in body["items"]} == {one["id"]}


def test_a_holder_filtering_on_another_holder_sees_nothing(api, kit):
    one, two = kit.holder(), kit.holder()
    kit.account(one["id"])
    kit.account(two["id"])
    theirs = ok(api.get(f"/accounts?holder_id={two['id']}", token=one["token"]), 200)
    assert theirs["items"] == []
    own = ok(api.get(f"/accounts?holder_id={one['id']}", token=one["token"]), 200)
    assert {item["holder_id"] for item in own["items"]} == {one["id"]}


def test_the_filters_are_documented_in_openapi(api):
    spec = ok(api.get("/openapi.json", token=""), 200)
    names = {p.get("name") for p in spec["paths"]["/api/v1/accounts"]["get"].get("parameters", [])}
    assert {"holder_id", "limit", "cursor"} <= names
