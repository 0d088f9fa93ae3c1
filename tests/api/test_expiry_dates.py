"""A reservation's expiry is dated the reservation's last day (an ``expires_on`` ends at midnight
at its end, docs/http.md "Conventions"): the journal writes it so, and a deposit reversal, which
is dated on or after every later entry of its lots (docs/http.md ``POST /deposits/{id}/reverse``),
reads an expiry not yet written as dated so too.

Minnesota is UTC-5 in June: midnight ending 10 June there is 05:00:00 UTC on 11 June.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.kit import Kit, at, ok, on, problem


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


@pytest.fixture
def reserved_to_june_10(kit: Kit) -> dict[str, Any]:
    """5,000 sq ft deposited on 1 June; 1,000 of it reserved until 10 June, then left to expire."""
    with on("2026-06-01"):
        funded = kit.funded_account(day="2026-06-01", service_area=5, unrestricted=5_000)
        plan = kit.approved_plan(kit.lgu(), "2026-06-01", area_sqft=1_000)
        body = kit.reservation_body(plan["id"], funded["unrestricted_class"], 1_000, "2026-06-10")
        ok(kit.api.post(f"/accounts/{funded['id']}/reservations", body))
    return funded


def expiry_dates(kit: Kit, lot_id: str) -> list[str]:
    """The effective dates of the journal's expiries of reservations of lot ``lot_id``."""
    dates, query = [], {"kind": "expire", "from": "2026-06-01", "limit": 500}
    while True:
        page = ok(kit.api.get("/audit/journal", query_string=query), 200)
        for tx in page["items"]:
            if any(e["account"] == f"lot:{lot_id}" for e in tx["entries"]):
                dates.append(tx["effective_on"])
        if page["next_cursor"] is None:
            return dates
        query["cursor"] = page["next_cursor"]


def test_a_reversal_may_be_dated_the_day_a_reservation_of_its_lot_expired_not_before(
    kit: Kit, reserved_to_june_10: dict[str, Any]
) -> None:
    """The expiry, not yet written, will be dated 10 June (the reservation's last day): the
    refusal names that day, and a reversal dated it is accepted."""
    funded = reserved_to_june_10
    path = f"/deposits/{funded['deposit']['id']}/reverse"
    with at("2026-06-11 04:59:59"):  # 23:59:59 on 10 June: the reservation still holds
        problem(kit.api.post(path, {"effective_on": "2026-06-10", "reason": "x"}), 409, "conflict")
    with at("2026-06-11 05:00:00"):  # midnight: it has expired, and no writer has written so
        before = kit.snapshot(funded["id"])
        refused = problem(
            kit.api.post(path, {"effective_on": "2026-06-09", "reason": "x"}),
            422,
            "validation_error",
        )
        assert refused["errors"] == {"effective_on": ["before 2026-06-10"]}
        assert "entries effective 2026-06-10" in refused["detail"]
        assert kit.snapshot(funded["id"]) == before
        done = ok(kit.api.post(path, {"effective_on": "2026-06-10", "reason": "x"}))
        assert done["reversal"]["effective_on"] == "2026-06-10"
        # the reversal's write expired the reservation first, dated as the refusal said
        (lot,) = kit.lots(funded["id"])
        assert expiry_dates(kit, lot["id"]) == ["2026-06-10"]

        def as_of(day: str) -> tuple[int, int, int]:
            query = {"as_of": day}
            body = ok(kit.api.get(f"/accounts/{funded['id']}/balances", query_string=query), 200)
            (row,) = body["balances"]
            return row["posted_sqft"], row["reserved_sqft"], row["available_sqft"]

        # the history the reversal leaves adds up on either side of it
        assert as_of("2026-06-09") == (5_000, 1_000, 4_000)
        assert as_of("2026-06-10") == (0, 0, 0)
