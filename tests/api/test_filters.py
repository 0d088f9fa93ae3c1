"""docs/http.md "Lists, cursors and CSV": listings' filters, and unknown query parameters refused
with 400 ``bad_request`` naming them, on every API endpoint (the pages keep their own
parameters)."""

from __future__ import annotations

import uuid

import pytest

from bank import journal
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


# --- enumerated filters: a value outside the list is 422, not an empty list --------------------

#: every listing's enumerated filter, with one value it takes
ENUMERATED = [
    ("/audit/journal", "kind", "deposit"),
    ("/plans", "status", "received"),
    ("/payments", "status", "received"),
    ("/securities", "status", "held"),
]


@pytest.mark.parametrize(("path", "name", "valid"), ENUMERATED, ids=lambda v: str(v))
@pytest.mark.parametrize("value", ["nonsense", "RECEIVED", ""])
def test_an_enumerated_filter_refuses_a_value_outside_its_list(api, path, name, valid, value):
    for headers in ({}, {"Accept": "text/csv"}):
        response = api.get(path, query_string={name: value}, headers=headers)
        body = problem(response, 422, "validation_error")
        assert list(body["errors"]) == [name]
        assert valid in body["errors"][name][0]  # the message lists the values it takes
    ok(api.get(path, query_string={name: valid}), 200)


def test_the_journal_kind_filter_takes_every_kind_the_ledger_writes(api):
    for kind in journal.KINDS:
        ok(api.get("/audit/journal", query_string={"kind": kind, "limit": 1}), 200)


@pytest.mark.parametrize(("path", "name", "valid"), ENUMERATED, ids=lambda v: str(v))
def test_an_enumerated_filter_lists_its_values_in_openapi(api, path, name, valid):
    spec = ok(api.get("/openapi.json", token=""), 200)
    parameters = spec["paths"][f"/api/v1{path}"]["get"]["parameters"]
    (schema,) = (p["schema"] for p in parameters if p.get("name") == name)
    assert valid in schema["enum"]
    if name == "kind":
        assert schema["enum"] == list(journal.KINDS)


# --- ?format=: a representation the endpoint answers in, or 422 ---------------------------------


def test_a_format_no_endpoint_answers_in_is_422_naming_format_and_the_allowed_values(api):
    body = problem(api.get("/audit/journal?format=xml"), 422, "validation_error")
    assert body["errors"] == {"format": ["Must be one of: json, csv."]}
    assert "json, csv" in body["detail"]
    problem(
        api.get("/audit/journal?format=", headers={"Accept": "text/csv"}), 422, "validation_error"
    )


def test_a_format_another_endpoint_answers_in_is_422_here(api, kit):
    holder = kit.holder()
    body = problem(api.get("/plans?format=pdf"), 422, "validation_error")
    assert body["errors"] == {"format": ["Must be one of: json, csv."]}
    body = problem(api.get(f"/holders/{holder['id']}?format=pdf"), 422, "validation_error")
    assert body["errors"] == {"format": ["Must be one of: json."]}
    body = problem(api.get("/health?format=csv", token=""), 422, "validation_error")
    assert body["errors"] == {"format": ["Must be one of: json."]}


def test_a_write_with_a_format_it_has_not_is_refused_and_writes_nothing(api):
    name = f"Format Holder {uuid.uuid4().hex[:8]}"
    response = api.post("/holders?format=csv", {"name": name})
    assert list(problem(response, 422, "validation_error")["errors"]) == ["format"]
    assert ok(api.get("/holders", query_string={"q": name}), 200)["items"] == []


def test_the_token_and_the_role_are_checked_before_the_format(api, holder):
    problem(api.get("/audit/journal?format=xml", token="wbt_nope"), 401, "unauthorized")
    problem(api.get("/audit/journal?format=xml", token=holder["token"]), 403, "forbidden")


def test_format_decides_whatever_accept_says_and_accept_chooses_without_it(api, kit):
    account = kit.account(kit.holder()["id"])
    path = f"/accounts/{account}/entries"
    as_json = api.get(f"{path}?format=json", headers={"Accept": "text/csv"})
    assert (as_json.status_code, as_json.mimetype) == (200, "application/json")
    as_csv = api.get(f"{path}?format=csv", headers={"Accept": "application/json"})
    assert (as_csv.status_code, as_csv.mimetype) == (200, "text/csv")
    assert as_csv.get_data(as_text=True).startswith("transaction_id,")
    by_accept = api.get(path, headers={"Accept": "text/csv"})
    assert (by_accept.status_code, by_accept.mimetype) == (200, "text/csv")
    assert by_accept.get_data(as_text=True).startswith("transaction_id,")
    # Accept is a preference: a type the endpoint has not gets its default, JSON
    other = api.get(path, headers={"Accept": "application/xml"})
    assert (other.status_code, other.mimetype) == (200, "application/json")


def test_the_format_parameter_lists_its_values_in_openapi(api):
    spec = ok(api.get("/openapi.json", token=""), 200)

    def values(path: str) -> list[str]:
        parameters = spec["paths"][f"/api/v1{path}"]["get"]["parameters"]
        (schema,) = (p["schema"] for p in parameters if p.get("name") == "format")
        return list(schema["enum"])

    assert values("/audit/journal") == ["json", "csv"]
    assert values("/reports/credit-availability") == ["json", "csv"]
    assert values("/plans/{plan_id}/notices/application") == ["html", "pdf"]


def test_a_head_request_answers_in_the_format_its_get_would(api, kit):
    """HEAD is answered by the same view as GET: ``?format=`` and ``Accept`` choose alike, and a
    format the endpoint has not is refused alike."""
    account = kit.account(kit.holder()["id"])
    path = f"/api/v1/accounts/{account}/entries"
    headers = {"Authorization": f"Bearer {api.token}"}
    by_format = api.client.head(f"{path}?format=csv", headers=headers)
    assert (by_format.status_code, by_format.mimetype) == (200, "text/csv")
    by_accept = api.client.head(path, headers={**headers, "Accept": "text/csv"})
    assert (by_accept.status_code, by_accept.mimetype) == (200, "text/csv")
    refused = api.client.head(f"{path}?format=xml", headers=headers)
    assert refused.status_code == 422
