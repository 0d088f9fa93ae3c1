"""docs/http.md "External references": integrators' references on plans, withdrawals, payments and
securities, bounded, shown on reads and CSV exports, and filterable with
``?external_ref=name:value``; and the listings' other filters (plans by text and date received,
payments and securities by plan and status)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from tests.api.kit import Kit, ok, on, problem, unique

DAY = "2026-06-08"


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def refs(**values: str) -> dict[str, str]:
    return dict(values)


def payment(kit: Kit, plan: dict[str, Any], lgu: dict[str, str], **extra: Any) -> dict[str, Any]:
    body = {
        "kind": "processing_fee",
        "amount_cents": 5_000,
        "payer": "A. Payer",
        "received_on": DAY,
        "plan_id": plan["id"],
        **extra,
    }
    with on(DAY):
        return dict(ok(kit.api.post("/payments", body, token=lgu["token"])))


def security(kit: Kit, plan: dict[str, Any], **extra: Any) -> dict[str, Any]:
    body = {
        "kind": "letter_of_credit",
        "issuer": "First State Bank",
        "amount_cents": 2_500_000,
        "irrevocable": True,
        "issued_on": DAY,
        "expires_on": "2027-06-01",
        **extra,
    }
    with on(DAY):
        return dict(ok(kit.api.post(f"/plans/{plan['id']}/securities", body)))


def csv_rows(response: Any) -> list[dict[str, str]]:
    assert response.status_code == 200 and response.mimetype == "text/csv"
    return list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))


def ids(response: Any) -> set[str]:
    return {item["id"] for item in ok(response, 200)["items"]}


# --- on create, read and export ---------------------------------------------------------------


def test_a_plans_references_are_shown_on_read_list_and_csv(kit):
    lgu = kit.lgu()
    permit = unique("WCA-2026")
    mine = refs(permit=permit, parcel="86-012-3400")
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000, external_refs=mine)
        read = kit.get_plan(plan["id"])
        listed = ok(kit.api.get(f"/plans?external_ref=permit:{permit}"), 200)["items"]
        exported = csv_rows(kit.api.get(f"/plans?external_ref=permit:{permit}&format=csv"))
    assert plan["external_refs"] == mine and read["external_refs"] == mine
    assert [p["id"] for p in listed] == [plan["id"]] and listed[0]["external_refs"] == mine
    assert [row["id"] for row in exported] == [plan["id"]]
    assert json.loads(exported[0]["external_refs"]) == mine


def test_a_record_without_references_shows_an_empty_map(kit):
    lgu = kit.lgu()
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
    assert plan["external_refs"] == {}
    assert payment(kit, plan, lgu)["external_refs"] == {}


def test_payments_references_on_read_list_and_csv(kit):
    lgu = kit.lgu()
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
    receipt = unique("R")
    paid = payment(kit, plan, lgu, external_refs={"receipt": receipt})
    other = payment(kit, plan, lgu, external_refs={"receipt": unique("R")})
    assert paid["external_refs"] == {"receipt": receipt}
    assert ok(kit.api.get(f"/payments/{paid['id']}"), 200)["external_refs"] == {"receipt": receipt}
    assert ids(kit.api.get(f"/payments?external_ref=receipt:{receipt}")) == {paid["id"]}
    by_plan = kit.api.get(f"/payments?plan_id={plan['id']}&external_ref=receipt:{receipt}")
    assert ids(by_plan) == {paid["id"]}
    rows = csv_rows(kit.api.get(f"/payments?plan_id={plan['id']}&format=csv"))
    assert {row["id"]: json.loads(row["external_refs"]) for row in rows} == {
        paid["id"]: {"receipt": receipt},
        other["id"]: other["external_refs"],
    }


def test_securities_references_on_read_list_and_csv(kit):
    lgu = kit.lgu()
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000, method="project_specific")
    letter = unique("LOC")
    held = security(kit, plan, external_refs={"letter": letter})
    security(kit, plan)
    assert held["external_refs"] == {"letter": letter}
    assert ok(kit.api.get(f"/securities/{held['id']}"), 200)["external_refs"] == {"letter": letter}
    with on(DAY):
        assert ids(kit.api.get(f"/securities?external_ref=letter:{letter}")) == {held["id"]}
        rows = csv_rows(kit.api.get(f"/securities?external_ref=letter:{letter}&format=csv"))
    assert [json.loads(row["external_refs"]) for row in rows] == [{"letter": letter}]


def test_a_withdrawals_references_are_shown_with_its_plan(kit):
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=12_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=6_000, ratio="2")
        reserved = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 12_000)
        body = {"reservation_ids": [reserved["id"]], "external_refs": {"order": "WO-7"}}
        withdrawal = ok(kit.api.post(f"/plans/{plan['id']}/withdrawals", body))
        shown = kit.get_plan(plan["id"])
    assert withdrawal["external_refs"] == {"order": "WO-7"}
    assert [w["external_refs"] for w in shown["withdrawals"]] == [{"order": "WO-7"}]


# --- bounds -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        {f"k{i}": "v" for i in range(11)},  # more than 10
        {"Permit": "x"},  # upper case
        {"": "x"},
        {"a" * 41: "x"},
        {"permit no": "x"},
        {"permit": ""},
        {"permit": "x" * 201},
        {"permit": 118},
        ["permit", "x"],
        "permit:x",
    ],
)
def test_references_out_of_bounds_are_a_validation_error_and_change_nothing(kit, bad):
    lgu = kit.lgu()
    body = kit.plan_body(received_on=DAY, area_sqft=9_000, external_refs=bad)
    with on(DAY):
        refused = problem(kit.api.post("/plans", body, token=lgu["token"]), 422, "validation_error")
        listed = ok(kit.api.get("/plans?limit=500", token=lgu["token"]), 200)["items"]
    assert "external_refs" in refused["errors"]
    assert listed == []


def test_references_at_the_bounds_are_accepted(kit):
    lgu = kit.lgu()
    most = {f"k-{i}_" + "a" * 36: "v" * 200 for i in range(10)}
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000, external_refs=most)
    assert plan["external_refs"] == most


@pytest.mark.parametrize("bad", ["permit", "Permit:x", ":x", "permit:", "a b:c"])
def test_a_malformed_reference_filter_is_a_validation_error(api, bad):
    body = problem(api.get("/plans", query_string={"external_ref": bad}), 422, "validation_error")
    assert "external_ref" in body["errors"]


# --- filter by reference ------------------------------------------------------------------------


def test_the_reference_filter_returns_exactly_the_matching_plans(kit):
    lgu = kit.lgu()
    permit = unique("WCA")
    with on(DAY):
        one = kit.plan(lgu, received_on=DAY, area_sqft=9_000, external_refs={"permit": permit})
        two = kit.plan(
            lgu, received_on=DAY, area_sqft=9_000, external_refs={"permit": permit, "p": "1"}
        )
        kit.plan(lgu, received_on=DAY, area_sqft=9_000, external_refs={"permit": permit + "0"})
        kit.plan(lgu, received_on=DAY, area_sqft=9_000, external_refs={"parcel": permit})
        kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        found = ids(kit.api.get("/plans", query_string={"external_ref": f"permit:{permit}"}))
        colon = kit.plan(lgu, received_on=DAY, area_sqft=9_000, external_refs={"u": "a:b'c"})
        tricky = ids(kit.api.get("/plans", query_string={"external_ref": "u:a:b'c"}))
    assert found == {one["id"], two["id"]}
    assert tricky == {colon["id"]}


def test_an_lgu_filtering_by_reference_sees_only_its_own(kit):
    mine, theirs = kit.lgu(), kit.lgu()
    permit = unique("WCA")
    with on(DAY):
        own = kit.plan(mine, received_on=DAY, area_sqft=9_000, external_refs={"permit": permit})
        kit.plan(theirs, received_on=DAY, area_sqft=9_000, external_refs={"permit": permit})
        found = ids(kit.api.get(f"/plans?external_ref=permit:{permit}", token=mine["token"]))
    assert found == {own["id"]}


# --- the listings' other filters ----------------------------------------------------------------


def test_plans_by_applicant_or_project_text_in_any_case(kit):
    lgu = kit.lgu()
    word = unique("Heron")
    with on(DAY):
        by_applicant = kit.api.post(
            "/plans",
            {**kit.plan_body(received_on=DAY, area_sqft=9_000), "applicant": f"{word} Farms"},
            token=lgu["token"],
        )
        by_project = kit.api.post(
            "/plans",
            {**kit.plan_body(received_on=DAY, area_sqft=9_000), "project": f"Road by {word}"},
            token=lgu["token"],
        )
        kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        found = ids(kit.api.get("/plans", query_string={"q": word.upper()}))
        wildcard = ids(kit.api.get("/plans", query_string={"q": "%"}))
    assert found == {ok(by_applicant)["id"], ok(by_project)["id"]}
    assert wildcard == set()


def test_plans_by_date_received_both_ends_included(kit):
    lgu = kit.lgu()
    days = ["2026-06-01", "2026-06-02", "2026-06-03", "2026-06-04"]
    made = {}
    with on(days[-1]):
        for day in days:
            made[day] = kit.plan(lgu, received_on=day, area_sqft=9_000)["id"]
        path = "/plans?received_from=2026-06-02&received_to=2026-06-03&limit=500"
        found = ids(kit.api.get(path, token=lgu["token"]))
        later = ids(kit.api.get("/plans?received_from=2026-06-04", token=lgu["token"]))
    assert found == {made["2026-06-02"], made["2026-06-03"]}
    assert later == {made["2026-06-04"]}


def test_payments_by_plan_and_status(kit):
    lgu = kit.lgu()
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        other = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
    kept = payment(kit, plan, lgu)
    refunded = payment(kit, plan, lgu)
    elsewhere = payment(kit, other, lgu)
    with on(DAY):
        ok(kit.api.post(f"/payments/{refunded['id']}/refund", token=lgu["token"]))
        mine = lgu["token"]
        assert ids(kit.api.get(f"/payments?plan_id={plan['id']}", token=mine)) == {
            kept["id"],
            refunded["id"],
        }
        path = f"/payments?plan_id={plan['id']}&status=refunded"
        assert ids(kit.api.get(path, token=mine)) == {refunded["id"]}
        everything = ids(kit.api.get("/payments?status=received", token=mine))
    assert everything == {kept["id"], elsewhere["id"]}
    problem(kit.api.get("/payments?status=lost"), 422, "validation_error")


def test_an_lgu_listing_payments_sees_only_its_plans(kit):
    mine, theirs = kit.lgu(), kit.lgu()
    with on(DAY):
        own_plan = kit.plan(mine, received_on=DAY, area_sqft=9_000)
        their_plan = kit.plan(theirs, received_on=DAY, area_sqft=9_000)
    own = payment(kit, own_plan, mine)
    payment(kit, their_plan, theirs)
    assert ids(kit.api.get("/payments", token=mine["token"])) == {own["id"]}


def test_securities_by_plan_and_status(kit):
    lgu = kit.lgu()
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000, method="project_specific")
        other = kit.plan(lgu, received_on=DAY, area_sqft=9_000, method="project_specific")
    first = security(kit, plan)
    released = security(kit, plan)
    security(kit, other)
    with on(DAY):
        body = {"released_on": DAY, "reason": "replaced"}
        ok(kit.api.post(f"/securities/{released['id']}/release", body))
        assert ids(kit.api.get(f"/securities?plan_id={plan['id']}")) == {
            first["id"],
            released["id"],
        }
        path = f"/securities?plan_id={plan['id']}&status=held"
        assert ids(kit.api.get(path, token=lgu["token"])) == {first["id"]}


def test_the_listings_filters_are_documented_in_openapi(api):
    spec = ok(api.get("/openapi.json", token=""), 200)

    def names(path: str) -> set[str]:
        found = spec["paths"][f"/api/v1{path}"]["get"].get("parameters", [])
        return {p.get("name") for p in found}

    assert {"q", "received_from", "received_to", "external_ref", "status"} <= names("/plans")
    assert {"plan_id", "status", "external_ref"} <= names("/payments")
    assert {"plan_id", "status", "expiring_before", "external_ref"} <= names("/securities")
