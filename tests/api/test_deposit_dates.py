"""docs/http.md "Accounts, deposits and transfers": a deposit is effective no earlier than the
day its account was opened, so an account has no balance on a day before it existed and the
statements already issued keep their balances.

Minnesota is UTC-5 in June: midnight starting 1 June there is 05:00:00 UTC on 1 June.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.kit import Kit, at, ok, on, problem


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def open_account_at(kit: Kit, moment: str) -> dict[str, Any]:
    """A holder's site and an account opened at ``moment`` (UTC), and an LGU."""
    with at(moment):
        holder, lgu = kit.holder(), kit.lgu()
        site_id = kit.site(holder["id"], 5, "Lyon")
        body = {"holder_id": holder["id"], "service_area": 5, "county": "Lyon"}
        account = ok(kit.api.post("/accounts", body))
    return {"id": account["id"], "number": account["number"], "site_id": site_id, "lgu": lgu}


def deposit(kit: Kit, account: dict[str, Any], effective_on: str, sqft: int = 100) -> Any:
    body = kit.deposit_body(
        account["site_id"],
        account["lgu"]["id"],
        [{"category": "replacement_wetland", "area_sqft": sqft, "credit_sqft": sqft}],
        effective_on=effective_on,
        completed_on="2019-01-01",
        approved_on="2019-06-01",
    )
    return kit.api.post(f"/accounts/{account['id']}/deposits", body)


def statement(kit: Kit, account_id: str, from_: str, to: str) -> list[tuple[int, int, int]]:
    path = f"/accounts/{account_id}/statement"
    body = ok(kit.api.get(path, query_string={"from": from_, "to": to}), 200)
    return [(c["opening_sqft"], len(c["entries"]), c["closing_sqft"]) for c in body["classes"]]


def test_a_deposit_dated_before_its_account_was_opened_is_refused_on_effective_on(kit: Kit):
    account = open_account_at(kit, "2026-06-01 05:00:00")  # midnight starting 1 June
    with on("2026-06-20"):
        ok(deposit(kit, account, "2026-06-01", 5_000))
        june = statement(kit, account["id"], "2026-06-01", "2026-06-30")
        later = statement(kit, account["id"], "2026-06-02", "2026-06-20")
        before = kit.snapshot(account["id"])
        for early in ("2020-01-01", "2026-05-31"):
            refused = problem(deposit(kit, account, early), 422, "validation_error")
            assert refused["errors"]["effective_on"] == [
                "before the account was opened (2026-06-01)"
            ]
            assert f"account {account['number']} was opened on 2026-06-01" in refused["detail"]
        # nothing written: the statements issued keep their balances, 2020 shows nothing
        assert kit.snapshot(account["id"]) == before
        assert statement(kit, account["id"], "2026-06-01", "2026-06-30") == june
        assert statement(kit, account["id"], "2026-06-02", "2026-06-20") == later
        assert statement(kit, account["id"], "2020-01-01", "2020-12-31") == []
        assert (june, later) == ([(0, 1, 5_000)], [(5_000, 0, 5_000)])
        ok(deposit(kit, account, "2026-06-01", 100))  # the day it was opened


def test_the_opening_day_is_the_minnesota_date_the_account_was_opened(kit: Kit):
    """Opened at 23:59:59 on 31 May in Minnesota (04:59:59 UTC on 1 June), the account takes a
    deposit dated 31 May; opened a second later, at midnight, it does not."""
    late_may = open_account_at(kit, "2026-06-01 04:59:59")
    june = open_account_at(kit, "2026-06-01 05:00:00")
    with on("2026-06-02"):
        ok(deposit(kit, late_may, "2026-05-31"))
        problem(deposit(kit, late_may, "2026-05-30"), 422, "validation_error")
        refused = problem(deposit(kit, june, "2026-05-31"), 422, "validation_error")
        assert "effective_on" in refused["errors"]
        ok(deposit(kit, june, "2026-06-01"))
