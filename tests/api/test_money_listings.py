"""docs/http.md "Lists, cursors and CSV": ``GET /payments`` and ``GET /securities`` are paged by
cursor like every long list (``limit``, ``cursor``, ``next_cursor``), in their own orders (payments
oldest first, securities soonest expiry first), each caller seeing only what it may across pages,
with their filters; their CSV exports every row the filters keep.  On SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import csv
import io
import json
from typing import Any

import pytest

from tests.api.kit import Kit, ok, on, problem, walk

DAY = "2026-06-01"
CSV = {"Accept": "text/csv"}


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def csv_ids(kit: Kit, path: str, token: str | None = None, **query: Any) -> list[str]:
    response = kit.api.get(path, token=token, headers=CSV, query_string=query)
    assert response.status_code == 200 and response.mimetype == "text/csv"
    return [row["id"] for row in csv.DictReader(io.StringIO(response.get_data(as_text=True)))]


def flat(pages: list[list[str]]) -> list[str]:
    return [item for page in pages for item in page]


def cursor_of(name: str, key: Any) -> str:
    raw = json.dumps([name, key], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# --- payments ----------------------------------------------------------------------------------


def fee(kit: Kit, lgu: dict[str, str], plan: dict[str, Any], cents: int) -> dict[str, Any]:
    body = {"kind": "processing_fee", "amount_cents": cents, "payer": "A. Payer"}
    body |= {"received_on": DAY, "plan_id": plan["id"]}
    with on(DAY):
        return dict(ok(kit.api.post("/payments", body, token=lgu["token"])))


@pytest.fixture
def paid(kit: Kit) -> dict[str, Any]:
    """An LGU's two plans with five processing fees (the second refunded), and another LGU's
    plan with two."""
    mine, other = kit.lgu(), kit.lgu()
    with on(DAY):
        first = kit.plan(mine, received_on=DAY, area_sqft=9_000)
        second = kit.plan(mine, received_on=DAY, area_sqft=9_000)
        theirs = kit.plan(other, received_on=DAY, area_sqft=9_000)
    payments = [fee(kit, mine, plan, 100 + n) for n, plan in enumerate([first, second] * 2)]
    payments.append(fee(kit, mine, first, 105))
    with on(DAY):
        path = f"/payments/{payments[1]['id']}/refund"
        ok(kit.api.post(path, token=mine["token"]))
    foreign = [fee(kit, other, theirs, 200 + n) for n in range(2)]
    return {
        "mine": mine,
        "other": other,
        "first": first,
        "payments": payments,
        "foreign": foreign,
    }


def in_order(items: list[dict[str, Any]]) -> list[str]:
    """``items``' ids oldest first, as the payments list orders them (then by id)."""
    return [item["id"] for item in sorted(items, key=lambda p: (p["created_at"], p["id"]))]


def test_an_lgus_payments_come_in_pages_each_once_in_order_and_only_its_own(kit, paid):
    mine = paid["mine"]["token"]
    pages = walk(kit, "/payments", token=mine, limit=2)
    assert [len(page) for page in pages] == [2, 2, 1]
    assert flat(pages) == in_order(paid["payments"])
    # the default page holds them all, in the same order; the CSV too
    assert walk(kit, "/payments", token=mine) == [in_order(paid["payments"])]
    assert csv_ids(kit, "/payments", token=mine, limit=1) == in_order(paid["payments"])
    # the other LGU pages through its own, never the first's
    theirs = walk(kit, "/payments", token=paid["other"]["token"], limit=1)
    assert flat(theirs) == in_order(paid["foreign"])


def test_the_board_pages_through_every_payment_each_once(kit, paid):
    everything = flat(walk(kit, "/payments", limit=500))
    assert len(everything) == len(set(everything))
    pages = walk(kit, "/payments", limit=3)
    assert flat(pages) == everything
    assert all(len(page) == 3 for page in pages[:-1])
    mine = [p["id"] for p in paid["payments"] + paid["foreign"]]
    assert [p for p in everything if p in mine] == in_order(paid["payments"] + paid["foreign"])
    assert csv_ids(kit, "/payments") == everything


def test_payment_filters_hold_on_every_page(kit, paid):
    first, payments = paid["first"]["id"], paid["payments"]
    of_first = [p for p in payments if p["plan_id"] == first]
    by_plan = walk(kit, "/payments", plan_id=first, limit=1)
    assert [len(page) for page in by_plan] == [1, 1, 1]
    assert flat(by_plan) == in_order(of_first)
    received = [p for p in payments if p["id"] != payments[1]["id"]]
    token = paid["mine"]["token"]
    assert flat(walk(kit, "/payments", token=token, status="received", limit=2)) == in_order(
        received
    )
    assert flat(walk(kit, "/payments", token=token, status="refunded", limit=2)) == [
        payments[1]["id"]
    ]
    csv_of_first = csv_ids(kit, "/payments", plan_id=first, status="received", limit=1)
    assert csv_of_first == in_order(of_first)


def test_a_payment_cursor_marks_a_place_only_in_the_callers_own_list(kit, paid):
    mine, other = paid["mine"]["token"], paid["other"]["token"]
    body = ok(kit.api.get("/payments", token=mine, query_string={"limit": 1}), 200)
    cursor = body["next_cursor"]
    assert cursor
    # another LGU given it is refused: it is not a place in its list
    page = kit.api.get("/payments", token=other, query_string={"cursor": cursor})
    problem(page, 400, "bad_request")
    # the filters do not move a cursor: a refunded payment still marks its place among the
    # received ones
    ordered = in_order(paid["payments"])
    refunded = paid["payments"][1]["id"]
    after = cursor_of("/payments", refunded)
    query = {"cursor": after, "status": "received"}
    rest = ok(kit.api.get("/payments", token=mine, query_string=query), 200)
    expected = [p for p in ordered[ordered.index(refunded) + 1 :] if p != refunded]
    assert [item["id"] for item in rest["items"]] == expected


def test_a_bad_payment_cursor_or_limit_is_refused(kit, paid):
    plans_cursor = ok(kit.api.get("/plans", query_string={"limit": 1}), 200)["next_cursor"]
    for cursor in ("nonsense", plans_cursor, cursor_of("/payments", "sec_0123abcd")):
        response = kit.api.get("/payments", query_string={"cursor": cursor})
        assert "cursor" in problem(response, 400, "bad_request")["detail"]
    for limit in ("0", "501", "-1", "many"):
        response = kit.api.get("/payments", query_string={"limit": limit})
        assert "limit" in problem(response, 422, "validation_error")["errors"]


# --- securities --------------------------------------------------------------------------------


def hold(kit: Kit, lgu: dict[str, str], plan: dict[str, Any], expires_on: str) -> dict[str, Any]:
    body = {
        "kind": "letter_of_credit",
        "issuer": "First State Bank",
        "amount_cents": 2_500_000,
        "irrevocable": True,
        "issued_on": DAY,
        "expires_on": expires_on,
    }
    with on(DAY):
        return dict(ok(kit.api.post(f"/plans/{plan['id']}/securities", body, token=lgu["token"])))


@pytest.fixture
def held(kit: Kit) -> dict[str, Any]:
    """An LGU's two project-specific plans with five securities (two expiring the same day, the
    last released), and another LGU's plan with two."""
    mine, other = kit.lgu(), kit.lgu()
    with on(DAY):
        first, second, theirs = (
            kit.plan(lgu, received_on=DAY, area_sqft=9_000, method="project_specific")
            for lgu in (mine, mine, other)
        )
    expiries = ["2027-09-01", "2027-03-01", "2027-06-01", "2027-03-01", "2028-01-01"]
    plans = [first, second, first, second, first]
    securities = [hold(kit, mine, p, e) for p, e in zip(plans, expiries, strict=True)]
    with on(DAY):
        path = f"/securities/{securities[-1]['id']}/release"
        body = {"released_on": DAY, "reason": "replaced"}
        ok(kit.api.post(path, body, token=mine["token"]))
    foreign = [hold(kit, other, theirs, e) for e in ("2027-02-01", "2027-04-01")]
    return {
        "mine": mine,
        "other": other,
        "first": first,
        "securities": securities,
        "foreign": foreign,
    }


def by_expiry(items: list[dict[str, Any]]) -> list[str]:
    """``items``' ids soonest expiry first, as the securities list orders them (then by id)."""
    return [item["id"] for item in sorted(items, key=lambda s: (s["expires_on"], s["id"]))]


def test_an_lgus_securities_come_in_pages_each_once_soonest_expiry_first(kit, held):
    mine = held["mine"]["token"]
    with on(DAY):
        pages = walk(kit, "/securities", token=mine, limit=2)
        assert [len(page) for page in pages] == [2, 2, 1]
        assert flat(pages) == by_expiry(held["securities"])
        assert walk(kit, "/securities", token=mine) == [by_expiry(held["securities"])]
        assert csv_ids(kit, "/securities", token=mine, limit=1) == by_expiry(held["securities"])
        theirs = walk(kit, "/securities", token=held["other"]["token"], limit=1)
        assert flat(theirs) == by_expiry(held["foreign"])
        # the board pages through every security, each once
        everything = flat(walk(kit, "/securities", limit=500))
        assert len(everything) == len(set(everything))
        assert flat(walk(kit, "/securities", limit=3)) == everything
        assert csv_ids(kit, "/securities") == everything


def test_security_filters_hold_on_every_page(kit, held):
    mine, securities = held["mine"]["token"], held["securities"]
    first = held["first"]["id"]
    with on(DAY):
        of_first = walk(kit, "/securities", plan_id=first, limit=1)
        expected = by_expiry([s for s in securities if s["plan_id"] == first])
        assert flat(of_first) == expected and len(of_first) == 3
        still_held = by_expiry(securities[:-1])
        query = {"status": "held", "limit": 1}
        assert flat(walk(kit, "/securities", token=mine, **query)) == still_held
        query = {"status": "held", "expiring_before": "2027-07-01", "limit": 2}
        soon = by_expiry([s for s in securities[:-1] if s["expires_on"] < "2027-07-01"])
        assert flat(walk(kit, "/securities", token=mine, **query)) == soon
        assert csv_ids(kit, "/securities", token=mine, **query) == soon
        query = {"status": "released", "limit": 1}
        assert walk(kit, "/securities", token=mine, **query) == [[securities[-1]["id"]]]


def test_a_security_cursor_marks_a_place_only_in_the_callers_own_list(kit, held):
    mine, other = held["mine"]["token"], held["other"]["token"]
    with on(DAY):
        cursor = ok(kit.api.get("/securities", token=mine, query_string={"limit": 1}), 200)
        page = kit.api.get(
            "/securities", token=other, query_string={"cursor": cursor["next_cursor"]}
        )
        problem(page, 400, "bad_request")
        # a held security's cursor resumes the released list after its place
        ordered = by_expiry(held["securities"])
        query = {"cursor": cursor_of("/securities", ordered[0]), "status": "released"}
        rest = ok(kit.api.get("/securities", token=mine, query_string=query), 200)
        assert [item["id"] for item in rest["items"]] == [held["securities"][-1]["id"]]


def test_a_bad_security_cursor_or_limit_is_refused(kit, held):
    plans_cursor = ok(kit.api.get("/plans", query_string={"limit": 1}), 200)["next_cursor"]
    payment_cursor = cursor_of("/payments", "pay_0123abcd")
    for cursor in ("%%%", plans_cursor, payment_cursor, cursor_of("/securities", 1)):
        response = kit.api.get("/securities", query_string={"cursor": cursor})
        assert "cursor" in problem(response, 400, "bad_request")["detail"]
    for limit in ("0", "501"):
        response = kit.api.get("/securities", query_string={"limit": limit})
        assert "limit" in problem(response, 422, "validation_error")["errors"]
