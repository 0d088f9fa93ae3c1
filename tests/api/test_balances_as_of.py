"""docs/http.md ``GET /accounts/{account_id}/balances``: the rows the account showed at the end
of ``as_of``; today read as the account stands now, a later day refused.

Minnesota is UTC-5 in June: 23:59:59 on 10 June there is 04:59:59 UTC on 11 June, and a
reservation expiring on 10 June stops reserving at 05:00:00 UTC on 11 June.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.kit import Kit, at, ok, on, problem

Rows = dict[str, tuple[int, int, int]]


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def rows_of(body: dict[str, Any]) -> Rows:
    return {
        row["credit_class"]["code"]: (
            row["posted_sqft"],
            row["reserved_sqft"],
            row["available_sqft"],
        )
        for row in body["balances"]
    }


def now_rows(kit: Kit, account_id: str) -> Rows:
    return rows_of(ok(kit.api.get(f"/accounts/{account_id}"), 200))


def as_of_rows(kit: Kit, account_id: str, day: str) -> Rows:
    body = ok(kit.api.get(f"/accounts/{account_id}/balances", query_string={"as_of": day}), 200)
    assert body["as_of"] == day
    return rows_of(body)


@pytest.fixture
def reserved_to_june_10(kit: Kit) -> dict[str, Any]:
    """30,000 sq ft deposited on 1 June; 10,000 of it reserved on 8 June until 10 June."""
    with on("2026-06-01"):
        funded = kit.funded_account(day="2026-06-01", service_area=5, unrestricted=30_000)
    with on("2026-06-08"):
        plan = kit.approved_plan(kit.lgu(), "2026-06-08", ratio="2")
        body = kit.reservation_body(plan["id"], funded["unrestricted_class"], 10_000, "2026-06-10")
        reservation = ok(kit.api.post(f"/accounts/{funded['id']}/reservations", body))
    return {"id": funded["id"], "reservation": reservation["id"]}


def test_today_reads_a_reservation_expiring_tonight_as_reserved_as_the_account_does(
    kit: Kit, reserved_to_june_10: dict[str, Any]
) -> None:
    account_id = reserved_to_june_10["id"]
    status = f"/reservations/{reserved_to_june_10['reservation']}"
    pending = {"BSA5-T2-U": (30_000, 10_000, 20_000)}
    released = {"BSA5-T2-U": (30_000, 0, 30_000)}
    # noon, 23:59:59 and the last microsecond of 10 June in Minnesota: still reserved
    for moment in ("2026-06-10 17:00:00", "2026-06-11 04:59:59", "2026-06-11 04:59:59.999999"):
        with at(moment):
            assert ok(kit.api.get(status), 200)["status"] == "pending"
            assert now_rows(kit, account_id) == pending
            assert as_of_rows(kit, account_id, "2026-06-10") == pending
    # midnight: 10 June has ended, and the reservation with it
    with at("2026-06-11 05:00:00"):
        assert ok(kit.api.get(status), 200)["status"] == "expired"
        assert now_rows(kit, account_id) == released
        assert as_of_rows(kit, account_id, "2026-06-11") == released
        assert as_of_rows(kit, account_id, "2026-06-10") == released


def test_a_past_day_reads_as_the_account_stood_at_its_end(
    kit: Kit, reserved_to_june_10: dict[str, Any]
) -> None:
    """What ``GET /accounts/{id}`` showed at 23:59:59 on a day is what ``as_of`` that day says
    afterwards, whether or not a writer has since written the reservation's expiry; on the
    reservation's last day the reading is at midnight, which ends the reservation too."""
    account_id = reserved_to_june_10["id"]
    with at("2026-06-10 04:59:59"):  # 23:59:59 on 9 June
        seen_june_9 = now_rows(kit, account_id)
    assert seen_june_9 == {"BSA5-T2-U": (30_000, 10_000, 20_000)}
    with at("2026-06-11 05:00:00"):
        seen_june_10_at_midnight = now_rows(kit, account_id)
    assert seen_june_10_at_midnight == {"BSA5-T2-U": (30_000, 0, 30_000)}
    with on("2026-06-15"):
        assert as_of_rows(kit, account_id, "2026-06-09") == seen_june_9
        assert as_of_rows(kit, account_id, "2026-06-10") == seen_june_10_at_midnight
        # a transfer out makes the ledger write the expiry (dated 10 June): the past is unchanged
        other = kit.account(kit.holder()["id"], 5, "Wright")
        body = {
            "from_account_id": account_id,
            "to_account_id": other,
            "credit_class": "BSA5-T2-U",
            "amount_sqft": 1,
        }
        ok(kit.api.post("/transfers", body))
        assert as_of_rows(kit, account_id, "2026-06-09") == seen_june_9
        assert as_of_rows(kit, account_id, "2026-06-10") == seen_june_10_at_midnight


def test_a_day_after_today_is_refused_on_as_of(kit: Kit, reserved_to_june_10: dict[str, Any]):
    account_id = reserved_to_june_10["id"]
    path = f"/accounts/{account_id}/balances"
    with at("2026-06-11 04:59:59.999999"):  # the last instant of 10 June in Minnesota
        for later in ("2026-06-11", "2099-01-01"):
            body = problem(
                kit.api.get(path, query_string={"as_of": later}), 422, "validation_error"
            )
            assert "as_of" in body["errors"], body
        assert as_of_rows(kit, account_id, "2026-06-10") == {"BSA5-T2-U": (30_000, 10_000, 20_000)}
    with at("2026-06-11 05:00:00"):
        assert as_of_rows(kit, account_id, "2026-06-11") == {"BSA5-T2-U": (30_000, 0, 30_000)}
        problem(kit.api.get(path, query_string={"as_of": "2026-06-12"}), 422, "validation_error")


def test_the_openapi_document_says_as_of_takes_no_day_after_today(kit: Kit) -> None:
    spec = ok(kit.api.get("/openapi.json", token=""), 200)
    (param,) = [
        p
        for p in spec["paths"]["/api/v1/accounts/{account_id}/balances"]["get"]["parameters"]
        if p.get("name") == "as_of"
    ]
    assert "a later day is refused" in param["description"]
    assert param["description"].endswith("From 1900-01-01 to today.")
