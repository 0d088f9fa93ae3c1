"""docs/http.md "Parties and reference data" and "Accounts, deposits and transfers": holders, LGUs,
bank sites, service areas, accounts, balances (now and as of a date), lots, entries (JSON and CSV),
freezing, and who may see or do what."""

from __future__ import annotations

import base64
import csv
import io
import itertools
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import event, select

from api import create_app
from bank import transfers
from bank.access import SYSTEM
from bank.transfers import TransferRequest, make_transfer
from ledger import clock, sealer
from ledger.db import Database
from ledger.schema import LedgerChainQueue
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, ok, on, problem, unique


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


# --- holders --------------------------------------------------------------------------------


def test_the_board_registers_a_holder_and_reads_it_back(api):
    name = unique("Prairie Creek LLC")
    body = ok(
        api.post("/holders", {"name": name, "email": "ops@prairie.example", "address": "Marshall"})
    )
    assert body["id"] and body["name"] == name
    assert body["email"] == "ops@prairie.example" and body["address"] == "Marshall"
    again = ok(api.get(f"/holders/{body['id']}"), 200)
    assert again["id"] == body["id"] and again["name"] == name


def test_a_holder_without_a_name_or_with_a_bad_email_is_a_validation_error(api):
    missing = problem(api.post("/holders", {"email": "x@example.com"}), 422, "validation_error")
    assert "name" in missing["errors"]
    bad = problem(api.post("/holders", {"name": "X", "email": "nope"}), 422, "validation_error")
    assert "email" in bad["errors"]


def test_only_the_board_registers_holders(api, holder, lgu):
    problem(api.post("/holders", {"name": "Me"}, token=holder["token"]), 403, "forbidden")
    problem(api.post("/holders", {"name": "Me"}, token=lgu["token"]), 403, "forbidden")


def test_a_holder_sees_itself_but_not_another_holder(api, kit):
    one, two = kit.holder(), kit.holder()
    assert ok(api.get(f"/holders/{one['id']}", token=one["token"]), 200)["id"] == one["id"]
    problem(api.get(f"/holders/{two['id']}", token=one["token"]), 404, "not_found")


def test_an_unknown_holder_is_404(api):
    problem(api.get("/holders/hld_nope"), 404, "not_found")


def test_a_request_without_a_token_is_401(api, kit):
    one = kit.holder()
    problem(api.get(f"/holders/{one['id']}", token=""), 401, "unauthorized")
    problem(api.post("/holders", {"name": "x"}, token=""), 401, "unauthorized")


# --- LGUs -----------------------------------------------------------------------------------


def test_the_board_registers_an_lgu_with_its_holiday_choices(api, holder):
    name = unique("Lyon County")
    body = ok(
        api.post(
            "/lgus",
            {"name": name, "kind": "county", "observes_friday_after_thanksgiving": True},
        )
    )
    assert body["kind"] == "county" and body["name"] == name
    assert body["observes_friday_after_thanksgiving"] is True
    assert body["observes_indigenous_peoples_day"] is False
    seen = ok(api.get(f"/lgus/{body['id']}", token=holder["token"]), 200)
    assert seen["id"] == body["id"]


def test_an_lgu_of_an_unknown_kind_is_a_validation_error(api):
    body = problem(api.post("/lgus", {"name": "X", "kind": "parish"}), 422, "validation_error")
    assert "kind" in body["errors"]


def test_only_the_board_registers_lgus(api, lgu):
    problem(api.post("/lgus", {"name": "X", "kind": "city"}, token=lgu["token"]), 403, "forbidden")


def test_an_unknown_lgu_is_404(api):
    problem(api.get("/lgus/lgu_nope"), 404, "not_found")


# --- bank sites and service areas -------------------------------------------------------------


def test_the_board_registers_a_bank_site_in_a_service_area(api, kit):
    owner = kit.holder()
    body = ok(
        api.post(
            "/bank-sites",
            {
                "name": "Prairie Creek",
                "holder_id": owner["id"],
                "service_area": 5,
                "county": "Lyon",
                "major_watershed": "Redwood River",
            },
        )
    )
    assert body["holder_id"] == owner["id"] and body["service_area"] == 5
    assert body["county"] == "Lyon" and body["major_watershed"] == "Redwood River"
    assert body["frozen"] is False


@pytest.mark.parametrize("service_area", [0, 11])
def test_a_bank_site_outside_service_areas_1_to_10_is_a_validation_error(api, kit, service_area):
    owner = kit.holder()
    body = {"name": "S", "holder_id": owner["id"], "service_area": service_area, "county": "Lyon"}
    assert (
        "service_area" in problem(api.post("/bank-sites", body), 422, "validation_error")["errors"]
    )


def test_a_bank_site_of_an_unknown_holder_is_a_validation_error(api):
    body = {"name": "S", "holder_id": "hld_nope", "service_area": 5, "county": "Lyon"}
    assert "holder_id" in problem(api.post("/bank-sites", body), 422, "validation_error")["errors"]


def test_only_the_board_registers_bank_sites(api, holder):
    body = {"name": "S", "holder_id": holder["id"], "service_area": 5, "county": "Lyon"}
    problem(api.post("/bank-sites", body, token=holder["token"]), 403, "forbidden")


def test_the_board_freezes_and_unfreezes_a_bank_site(api, kit):
    site_id = kit.site(kit.holder()["id"])
    assert ok(api.post(f"/bank-sites/{site_id}/freeze"), 200)["frozen"] is True
    assert ok(api.post(f"/bank-sites/{site_id}/unfreeze"), 200)["frozen"] is False


def test_only_the_board_freezes_a_bank_site_and_an_unknown_site_is_404(api, kit):
    owner = kit.holder()
    site_id = kit.site(owner["id"])
    problem(api.post(f"/bank-sites/{site_id}/freeze", token=owner["token"]), 403, "forbidden")
    problem(api.post(f"/bank-sites/{site_id}/unfreeze", token=owner["token"]), 403, "forbidden")
    problem(api.post("/bank-sites/site_nope/freeze"), 404, "not_found")
    problem(api.post("/bank-sites/site_nope/unfreeze"), 404, "not_found")


def test_freezing_a_site_freezes_its_credits_and_unfreezing_releases_them(api, kit):
    funded = kit.funded(50_000)
    ok(api.post(f"/bank-sites/{funded['site_id']}/freeze"), 200)
    row = kit.balances(funded["id"])[funded["unrestricted"]]
    assert (row["posted_sqft"], row["frozen_sqft"], row["available_sqft"]) == (50_000, 50_000, 0)
    ok(api.post(f"/bank-sites/{funded['site_id']}/unfreeze"), 200)
    row = kit.balances(funded["id"])[funded["unrestricted"]]
    assert (row["posted_sqft"], row["frozen_sqft"], row["available_sqft"]) == (50_000, 0, 50_000)


def test_there_are_ten_service_areas(api, holder):
    body = ok(api.get("/service-areas", token=holder["token"]), 200)
    assert [item["number"] for item in body["items"]] == list(range(1, 11))
    assert body["items"][4] == {"number": 5, "name": "Bank Service Area 5"}


# --- accounts -------------------------------------------------------------------------------


def test_the_board_opens_an_account_with_a_number_and_no_balances(api, kit):
    owner = kit.holder()
    body = ok(
        api.post(
            "/accounts",
            {"holder_id": owner["id"], "service_area": 5, "county": "Lyon", "name": "Main"},
        )
    )
    assert body["id"] and body["number"].startswith("WB-")
    assert body["holder_id"] == owner["id"] and body["service_area"] == 5
    assert body["county"] == "Lyon" and body["name"] == "Main"
    assert body["status"] == "open" and body["balances"] == []
    other = ok(api.post("/accounts", {"holder_id": owner["id"], "service_area": 5, "county": "L"}))
    assert other["number"] != body["number"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"service_area": 0}, "service_area"),
        ({"service_area": 11}, "service_area"),
        ({"service_area": "5"}, "service_area"),
        ({"holder_id": "hld_nope"}, "holder_id"),
        ({"county": ""}, "county"),
    ],
)
def test_an_account_with_a_bad_field_is_a_validation_error(api, kit, change, field):
    body = {"holder_id": kit.holder()["id"], "service_area": 5, "county": "Lyon", **change}
    assert field in problem(api.post("/accounts", body), 422, "validation_error")["errors"]


def test_only_the_board_opens_accounts(api, holder, lgu):
    body = {"holder_id": holder["id"], "service_area": 5, "county": "Lyon"}
    problem(api.post("/accounts", body, token=holder["token"]), 403, "forbidden")
    problem(api.post("/accounts", body, token=lgu["token"]), 403, "forbidden")


def test_a_holder_lists_only_its_own_accounts(api, kit):
    mine, theirs = kit.holder(), kit.holder()
    own = {kit.account(mine["id"], 5), kit.account(mine["id"], 7)}
    kit.account(theirs["id"], 5)
    body = ok(api.get("/accounts", token=mine["token"]), 200)
    assert {item["id"] for item in body["items"]} == own
    assert {item["holder_id"] for item in body["items"]} == {mine["id"]}
    assert body["next_cursor"] is None


def test_the_board_lists_every_account_page_by_page(api, kit):
    one, two = kit.holder(), kit.holder()
    wanted = {kit.account(one["id"]), kit.account(two["id"])}
    first = ok(api.get("/accounts?limit=1"), 200)
    assert len(first["items"]) == 1 and first["next_cursor"]
    seen: list[str] = []
    cursor = None
    while True:
        suffix = f"&cursor={cursor}" if cursor else ""
        body = ok(api.get(f"/accounts?limit=500{suffix}"), 200)
        seen.extend(item["id"] for item in body["items"])
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert wanted <= set(seen)
    assert len(seen) == len(set(seen))


def test_an_lgu_may_not_list_accounts(api, lgu):
    problem(api.get("/accounts", token=lgu["token"]), 403, "forbidden")


def test_an_account_is_seen_by_the_board_and_its_holder_only(api, kit, lgu):
    funded = kit.funded(10_000)
    other = kit.holder()
    account_id = funded["id"]
    assert ok(api.get(f"/accounts/{account_id}"), 200)["id"] == account_id
    mine = ok(api.get(f"/accounts/{account_id}", token=funded["holder"]["token"]), 200)
    assert mine["balances"][0]["posted_sqft"] == 10_000
    for path in ("", "/balances?as_of=2026-06-01", "/lots", "/entries"):
        ok(api.get(f"/accounts/{account_id}{path}", token=funded["holder"]["token"]), 200)
        problem(api.get(f"/accounts/{account_id}{path}", token=other["token"]), 404, "not_found")
        refused = api.get(f"/accounts/{account_id}{path}", token=lgu["token"])
        assert refused.status_code in (403, 404), refused.json


def test_an_unknown_account_is_404_on_every_endpoint(api):
    for path in ("", "/balances?as_of=2026-06-01", "/lots", "/entries"):
        problem(api.get(f"/accounts/acct_nope{path}"), 404, "not_found")
    problem(api.post("/accounts/acct_nope/freeze"), 404, "not_found")
    problem(api.post("/accounts/acct_nope/unfreeze"), 404, "not_found")


# --- balances -------------------------------------------------------------------------------


def test_balances_are_shown_per_credit_class(api, kit):
    funded = kit.funded(40_000, buffer_sqft=30_000)
    rows = kit.balances(funded["id"])
    assert set(rows) == {"BSA5-T2-R", "BSA5-T2-U"}
    assert rows["BSA5-T2-U"]["credit_class"] == {
        "code": "BSA5-T2-U",
        "service_area": 5,
        "wetland_type": "2",
        "restricted": False,
    }
    assert rows["BSA5-T2-R"]["credit_class"]["restricted"] is True
    assert rows["BSA5-T2-U"]["posted_sqft"] == 40_000
    assert rows["BSA5-T2-R"]["posted_sqft"] == 30_000
    for row in rows.values():
        assert row["reserved_sqft"] == row["frozen_sqft"] == 0
        assert row["available_sqft"] == row["posted_sqft"]


def test_balances_as_of_a_date_count_only_what_was_effective_by_the_end_of_it(api, kit):
    owner, banker = kit.holder(), kit.lgu()
    site_id = kit.site(owner["id"])
    account_id = kit.account(owner["id"])
    kit.wetland_deposit(account_id, site_id, banker["id"], 10_000, effective_on="2026-05-20")
    kit.wetland_deposit(account_id, site_id, banker["id"], 2_500, effective_on="2026-06-03")

    def posted(day: str) -> dict[str, int]:
        body = ok(api.get(f"/accounts/{account_id}/balances?as_of={day}"), 200)
        assert body["as_of"] == day
        return {row["credit_class"]["code"]: row["posted_sqft"] for row in body["balances"]}

    assert posted("2026-05-19") == {}
    assert posted("2026-05-20") == {"BSA5-T2-U": 10_000}
    assert posted("2026-06-02") == {"BSA5-T2-U": 10_000}
    assert posted("2026-06-03") == {"BSA5-T2-U": 12_500}
    assert kit.balances(account_id)["BSA5-T2-U"]["posted_sqft"] == 12_500


def test_balances_as_of_a_date_made_on_different_days_with_a_frozen_clock(api, kit):
    owner, banker = kit.holder(), kit.lgu()
    with on("2026-05-20"):
        site_id = kit.site(owner["id"])
        account_id = kit.account(owner["id"])
        kit.wetland_deposit(account_id, site_id, banker["id"], 7_000, effective_on="2026-05-20")
    with on("2026-05-27"):
        kit.wetland_deposit(account_id, site_id, banker["id"], 3_000, effective_on="2026-05-27")
        day_before = ok(api.get(f"/accounts/{account_id}/balances?as_of=2026-05-26"), 200)
    assert [row["posted_sqft"] for row in day_before["balances"]] == [7_000]
    body = ok(api.get(f"/accounts/{account_id}/balances?as_of=2026-05-27"), 200)
    assert [row["posted_sqft"] for row in body["balances"]] == [10_000]
    assert body["balances"][0]["reserved_sqft"] == 0


def test_a_past_days_rows_are_documented_as_sent_without_a_frozen_figure(api, kit):
    """A past day's row carries posted, reserved and available (freezes carry no date); the
    OpenAPI document describes exactly the keys it sends, and today's rows add frozen_sqft."""
    owner, banker = kit.holder(), kit.lgu()
    site_id = kit.site(owner["id"])
    account_id = kit.account(owner["id"])
    kit.wetland_deposit(account_id, site_id, banker["id"], 4_000, effective_on="2026-05-20")
    (row,) = ok(api.get(f"/accounts/{account_id}/balances?as_of=2026-05-21"), 200)["balances"]
    spec = ok(api.get("/openapi.json", token=""), 200)
    schemas = spec["components"]["schemas"]
    past = schemas["BalancesAsOfOut"]["properties"]["balances"]["items"]["$ref"].split("/")[-1]
    assert (
        set(row)
        == set(schemas[past]["properties"])
        == {
            "credit_class",
            "posted_sqft",
            "reserved_sqft",
            "available_sqft",
        }
    )
    today = ok(api.get(f"/accounts/{account_id}"), 200)["balances"][0]
    assert set(today) == set(schemas["BalanceOut"]["properties"]) == set(row) | {"frozen_sqft"}


def test_a_class_the_account_no_longer_holds_is_a_zero_row_now_and_as_of_any_later_day(api, kit):
    """GET /accounts/{id} keeps a row of zeros for a class whose credits all left the account
    (API.md: one row per class held; EXAMPLES.md story 2's emptied classes); the balances as of
    a day show the same rows as that day's account did: a class held at any time up to the day
    (a zero row once emptied), none the account had not yet held."""
    with on("2026-06-01"):
        funded = kit.funded(5_000, buffer_sqft=3_000)  # deposited 2026-05-20
        spare = kit.account(funded["holder"]["id"])
        body = {
            "from_account_id": funded["id"],
            "to_account_id": spare,
            "amount_sqft": 3_000,
            "credit_class": funded["restricted"],
        }
        ok(api.post("/transfers", body))

    def rows(path: str) -> dict[str, tuple[int, int, int]]:
        return {
            row["credit_class"]["code"]: (
                row["posted_sqft"],
                row["reserved_sqft"],
                row["available_sqft"],
            )
            for row in ok(api.get(path), 200)["balances"]
        }

    emptied = {"BSA5-T2-U": (5_000, 0, 5_000), "BSA5-T2-R": (0, 0, 0)}
    assert rows(f"/accounts/{funded['id']}") == emptied
    assert rows(f"/accounts/{funded['id']}/balances?as_of=2026-06-01") == emptied
    assert rows(f"/accounts/{funded['id']}/balances?as_of=2026-05-31") == {
        "BSA5-T2-U": (5_000, 0, 5_000),
        "BSA5-T2-R": (3_000, 0, 3_000),
    }
    assert rows(f"/accounts/{funded['id']}/balances?as_of=2026-05-19") == {}
    # the receiving account held nothing before the transfer's day
    assert rows(f"/accounts/{spare}/balances?as_of=2026-05-31") == {}
    assert rows(f"/accounts/{spare}/balances?as_of=2026-06-01") == {"BSA5-T2-R": (3_000, 0, 3_000)}


def test_balances_as_of_needs_a_valid_date(api, kit):
    account_id = kit.account(kit.holder()["id"])
    problem(api.get(f"/accounts/{account_id}/balances"), 422, "validation_error")
    problem(api.get(f"/accounts/{account_id}/balances?as_of=2026-13-01"), 422, "validation_error")


# --- lots -----------------------------------------------------------------------------------


def test_a_deposit_makes_one_lot_per_action_labelled_in_order(api, kit):
    funded = kit.funded(40_000, buffer_sqft=30_000)
    lots = kit.lots(funded["id"])
    assert [lot["label"] for lot in lots] == ["A", "B"]
    by_label = {lot["label"]: lot for lot in lots}
    assert by_label["A"]["credit_class"] == "BSA5-T2-U"
    assert by_label["B"]["credit_class"] == "BSA5-T2-R"
    for lot in lots:
        assert lot["bank_site_id"] == funded["site_id"]
        assert lot["deposit_id"] == funded["deposit"]["id"]
        assert lot["parent_lot_id"] is None
        assert lot["federally_approved"] is False
    assert (by_label["A"]["posted_sqft"], by_label["A"]["available_sqft"]) == (40_000, 40_000)
    assert (by_label["B"]["posted_sqft"], by_label["B"]["available_sqft"]) == (30_000, 30_000)


# --- entries --------------------------------------------------------------------------------


def test_entries_are_listed_newest_first_with_the_balance_after_each(api, kit):
    funded = kit.funded(10_000)
    kit.wetland_deposit(funded["id"], funded["site_id"], funded["lgu"]["id"], 4_000)
    entries = kit.entries(funded["id"])
    assert [e["amount_sqft"] for e in entries] == [4_000, 10_000]
    assert [e["balance_after_sqft"] for e in entries] == [14_000, 10_000]
    assert {e["kind"] for e in entries} == {"deposit"}
    assert {e["credit_class"] for e in entries} == {"BSA5-T2-U"}
    assert entries[1]["transaction_id"] == funded["deposit"]["transaction_id"]
    assert entries[0]["effective_on"] == "2026-05-20"
    assert entries[0]["recorded_at"]


def test_entries_come_in_pages_with_a_cursor(api, kit):
    funded = kit.funded(1_000)
    for sqft in (2_000, 3_000):
        kit.wetland_deposit(funded["id"], funded["site_id"], funded["lgu"]["id"], sqft)
    first = ok(api.get(f"/accounts/{funded['id']}/entries?limit=2"), 200)
    assert [e["amount_sqft"] for e in first["items"]] == [3_000, 2_000]
    assert first["next_cursor"]
    second = ok(
        api.get(f"/accounts/{funded['id']}/entries?limit=2&cursor={first['next_cursor']}"), 200
    )
    assert [e["amount_sqft"] for e in second["items"]] == [1_000]
    assert [e["balance_after_sqft"] for e in second["items"]] == [1_000]
    assert second["next_cursor"] is None


def test_a_bad_cursor_or_limit_is_refused(api, kit):
    account_id = kit.account(kit.holder()["id"])
    path = f"/accounts/{account_id}/entries"
    problem(api.get(f"/accounts/{account_id}/entries?cursor=%%%"), 400, "bad_request")

    def cursor(key: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps([path, key]).encode()).decode().rstrip("=")

    # a cursor is a place in the chain, (seq, entry id): an entry id alone, or more, is made up
    for key in (7, [7], [7, 7, 7], [7, -7], [7, "7"]):
        problem(api.get(path, query_string={"cursor": cursor(key)}), 400, "bad_request")
    assert ok(api.get(path, query_string={"cursor": cursor([7, 7])}), 200)["items"] == []
    problem(api.get(f"/accounts/{account_id}/entries?limit=0"), 422, "validation_error")
    problem(api.get(f"/accounts/{account_id}/entries?limit=501"), 422, "validation_error")


def test_entries_as_csv_have_a_header_row_and_one_line_per_entry(api, kit):
    funded = kit.funded(10_000, buffer_sqft=7_500)
    kit.wetland_deposit(funded["id"], funded["site_id"], funded["lgu"]["id"], 4_000)
    response = api.get(f"/accounts/{funded['id']}/entries", headers={"Accept": "text/csv"})
    assert response.status_code == 200
    assert response.mimetype == "text/csv"
    lines = response.get_data(as_text=True).strip().splitlines()
    header = lines[0].split(",")
    for name in (
        "transaction_id",
        "kind",
        "credit_class",
        "amount_sqft",
        "balance_after_sqft",
        "effective_on",
        "recorded_at",
        "memo",
    ):
        assert name in header
    json_entries = kit.entries(funded["id"])
    assert len(json_entries) == 3
    assert len(lines) == 1 + 3
    rows = kit.entries_csv(funded["id"])
    assert [int(r["amount_sqft"]) for r in rows] == [e["amount_sqft"] for e in json_entries]
    assert [int(r["balance_after_sqft"]) for r in rows] == [
        e["balance_after_sqft"] for e in json_entries
    ]
    assert [r["transaction_id"] for r in rows] == [e["transaction_id"] for e in json_entries]


def test_a_holder_downloads_its_own_entries_as_csv(api, kit):
    funded = kit.funded(5_000)
    response = api.get(
        f"/accounts/{funded['id']}/entries",
        token=funded["holder"]["token"],
        headers={"Accept": "text/csv"},
    )
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert len(response.get_data(as_text=True).strip().splitlines()) == 2


def test_an_account_without_entries_is_an_empty_page_and_a_header_only_csv(api, kit):
    account_id = kit.account(kit.holder()["id"])
    assert ok(api.get(f"/accounts/{account_id}/entries"), 200) == {
        "items": [],
        "next_cursor": None,
    }
    assert kit.entries_csv(account_id) == []
    response = api.get(f"/accounts/{account_id}/entries", headers={"Accept": "text/csv"})
    assert len(response.get_data(as_text=True).strip().splitlines()) == 1


def entries_read_across_a_late_commit(
    kit: Kit, read: Callable[[Api, str], Any]
) -> tuple[dict[str, Any], Any]:
    """An account holding two lots of one class, and two transfers out of it at once, one from
    each lot: the first takes its entries' ids, then stays open while the second commits.
    ``read(api, account_id)`` of the entries starts then, and once it has sealed what was
    queued, waits before it reads the entries until the first transfer has committed.  The
    account, and what ``read`` answered."""
    db: Database = kit.app.extensions["wetbank.db"]
    funded = kit.funded(10_000)
    kit.wetland_deposit(funded["id"], funded["site_id"], funded["lgu"]["id"], 4_000)
    first_lot, second_lot = (lot["id"] for lot in kit.lots(funded["id"]))
    # to two accounts: each transfer opens a lot in its target, and that account's row waits
    targets = [kit.account(funded["holder"]["id"]) for _ in range(2)]
    held, release = threading.Event(), threading.Event()
    reading, read_on = threading.Event(), threading.Event()
    out: dict[str, Any] = {}

    def first_transfer() -> None:
        try:
            with db.transaction() as session:
                request = TransferRequest(funded["id"], targets[0], 1_000, lot_id=first_lot)
                transfers.make_transfer(session, SYSTEM, request, None)
                held.set()
                release.wait(30)
        finally:
            held.set()

    def second_transfer() -> None:
        body = {
            "from_account_id": funded["id"],
            "to_account_id": targets[1],
            "lot_id": second_lot,
            "amount_sqft": 2_000,
        }
        out["second"] = kit.api.post("/transfers", body).status_code

    def before_statement(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if threading.current_thread() is not reader or "ledger_entries" not in statement:
            return
        if "ledger_chain_queue" in statement or reading.is_set():  # its sealing, or read on
            return
        reading.set()
        read_on.wait(30)

    def read_entries() -> None:
        out["read"] = read(Api(kit.app.test_client(), kit.api.token), funded["id"])

    first = started(first_transfer)
    assert held.wait(20)
    second = started(second_transfer)
    second.join(1.5)
    if second.is_alive():  # SQLite: it waits for the first, the one writer
        release.set()
    second.join(40)
    reader = threading.Thread(target=read_entries, daemon=True)
    event.listen(db.engine, "before_cursor_execute", before_statement)
    try:
        reader.start()
        assert reading.wait(10)  # paused before it reads the entries
    finally:
        release.set()
        first.join(40)  # committed
        read_on.set()
        reader.join(40)
        event.remove(db.engine, "before_cursor_execute", before_statement)
    assert out["second"] == 201 and not reader.is_alive()
    return funded, out["read"]


def started(target: Callable[[], Any]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def balances_agree_with_amounts(rows: list[dict[str, Any]]) -> None:
    """Newest first: each row's balance after is the sum of its class's rows at and below it."""
    below: dict[str, int] = {}
    for row in reversed(rows):
        klass = row["credit_class"]
        below[klass] = below.get(klass, 0) + int(row["amount_sqft"])
        assert int(row["balance_after_sqft"]) == below[klass], rows


def test_an_entries_page_balances_the_entries_it_shows_while_others_commit(kit):
    def one_page(api: Api, account_id: str) -> Any:
        return ok(api.get(f"/accounts/{account_id}/entries"), 200)

    funded, page = entries_read_across_a_late_commit(kit, one_page)
    balances_agree_with_amounts(page["items"])
    assert page["next_cursor"] is None
    assert 10_000 in [e["amount_sqft"] for e in page["items"]]
    balances_agree_with_amounts(kit.entries(funded["id"]))  # all four, once both committed


def test_the_entries_csv_balances_the_entries_it_holds_while_others_commit(kit):
    def as_csv(api: Api, account_id: str) -> Any:
        response = api.get(f"/accounts/{account_id}/entries", headers={"Accept": "text/csv"})
        assert response.status_code == 200
        return list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))

    funded, rows = entries_read_across_a_late_commit(kit, as_csv)
    balances_agree_with_amounts(rows)
    balances_agree_with_amounts(kit.entries_csv(funded["id"]))


def test_entries_of_two_lots_are_listed_newest_first_in_the_order_they_were_chained(api, kit):
    funded = kit.funded(10_000)
    kit.wetland_deposit(funded["id"], funded["site_id"], funded["lgu"]["id"], 4_000)
    lots = {lot["posted_sqft"]: lot["id"] for lot in kit.lots(funded["id"])}
    target = kit.account(funded["holder"]["id"])
    for sqft, lot in ((300, lots[4_000]), (100, lots[10_000]), (200, lots[4_000])):
        body = {"from_account_id": funded["id"], "to_account_id": target, "lot_id": lot}
        ok(api.post("/transfers", {**body, "amount_sqft": sqft}))

    entries = kit.entries(funded["id"])
    journal = ok(api.get(f"/audit/journal?account_id={funded['id']}"), 200)["items"]

    assert [e["transaction_id"] for e in entries] == [
        t["transaction_id"] for t in reversed(journal)
    ]
    assert [(e["lot_id"], e["amount_sqft"], e["balance_after_sqft"]) for e in entries] == [
        (lots[4_000], -200, 13_400),
        (lots[10_000], -100, 13_600),
        (lots[4_000], -300, 13_700),
        (lots[4_000], 4_000, 14_000),
        (lots[10_000], 10_000, 10_000),
    ]


def test_each_page_of_entries_carries_on_the_balances_of_the_page_before(api, kit):
    funded = kit.funded(10_000, buffer_sqft=7_500)
    kit.wetland_deposit(funded["id"], funded["site_id"], funded["lgu"]["id"], 4_000)
    target = kit.account(funded["holder"]["id"])
    for round_ in range(1, 3):
        for lot in kit.lots(funded["id"]):
            body = {"from_account_id": funded["id"], "to_account_id": target, "lot_id": lot["id"]}
            ok(api.post("/transfers", {**body, "amount_sqft": 100 * round_}))

    pages, cursor = [], ""
    while cursor is not None:
        page = ok(api.get(f"/accounts/{funded['id']}/entries?limit=2{cursor}"), 200)
        pages.append(page["items"])
        cursor = page["next_cursor"] and f"&cursor={page['next_cursor']}"
    walked = [entry for page in pages for entry in page]

    assert len(pages) == 5 and walked == kit.entries(funded["id"])  # 9 entries, pages of 2
    assert ok(api.get(f"/accounts/{funded['id']}/entries?limit=2"), 200)["items"] == pages[0]
    balances_agree_with_amounts(walked)  # so each class's balance carries on across pages
    newest: dict[str, int] = {}
    for entry in reversed(walked):
        newest[entry["credit_class"]] = entry["balance_after_sqft"]
    posted = {code: row["posted_sqft"] for code, row in kit.balances(funded["id"]).items()}
    assert newest == posted == {funded["unrestricted"]: 13_400, funded["restricted"]: 7_200}


@dataclass(frozen=True)
class OutOfOrder:
    """``committed_out_of_order``'s account, its database (no background sealer), the first
    transfer's transaction id, and what the read between the two commits answered."""

    kit: Kit
    funded: dict[str, Any]
    db: Database
    late: str
    read: dict[str, Any]


@contextmanager
def committed_out_of_order(
    fresh_db_url: str, path_of: Callable[[dict[str, Any]], str]
) -> Iterator[OutOfOrder]:
    """Two transfers out of one account, one from each of its two lots, on PostgreSQL: the
    first takes its entries' ids and stays open while the second commits through the API and a
    client reads ``path_of(account)``; then the first commits.  Nothing seals in the background
    (the app's sealer is stopped), so each read's own sealing gives the entries their place."""
    app = create_app({"DATABASE_URL": fresh_db_url, "PROPAGATE_EXCEPTIONS": False})
    db: Database = app.extensions["wetbank.db"]
    try:
        kit = Kit(Api(app.test_client(), make_token(app, "board")), app)
        funded = kit.funded(10_000)
        kit.wetland_deposit(funded["id"], funded["site_id"], funded["lgu"]["id"], 4_000)
        lots = {lot["posted_sqft"]: lot["id"] for lot in kit.lots(funded["id"])}
        targets = [kit.account(funded["holder"]["id"]) for _ in range(2)]
        sealer.seal_all(db)
        db.dispose()  # stops the background sealer: the engine still serves
        held, release = threading.Event(), threading.Event()
        late: dict[str, str] = {}

        def first_transfer() -> None:
            try:
                with db.transaction() as session:
                    request = TransferRequest(funded["id"], targets[0], 1_000, lot_id=lots[10_000])
                    late["id"] = make_transfer(session, SYSTEM, request, None).transaction_id
                    held.set()
                    release.wait(30)
            finally:
                held.set()

        first = started(first_transfer)
        try:
            assert held.wait(20)
            body = {"from_account_id": funded["id"], "to_account_id": targets[1]}
            second = ok(
                kit.api.post("/transfers", {**body, "lot_id": lots[4_000], "amount_sqft": 2_000})
            )
            assert int(late["id"]) < int(second["transaction_id"])  # its ids came first
            assert second["transaction_id"] in queued(db)  # committed, not yet chained
            read = ok(kit.api.get(path_of(funded)), 200)
        finally:
            release.set()
            first.join(40)
        assert late["id"] in queued(db)  # committed after the read
        yield OutOfOrder(kit, funded, db, late["id"], read)
    finally:
        db.dispose()


def test_an_entry_committed_after_a_later_one_comes_on_top_and_the_pages_carry_on(
    backend: str, fresh_db_url: str
) -> None:
    """Two transfers out of one account, one from each of its lots: the first takes its
    entries' ids, then stays open while the second commits and a client reads the newest
    entry.  Once the first commits it is the newest entry: on top, never below the client's
    cursor, and the balances already shown do not change.  Nothing seals in the background
    (the app's sealer is stopped), so each read's own sealing gives the entries their place."""
    if backend != "postgresql":
        pytest.skip("SQLite has one writer at a time: writes commit in the order of their ids")

    def entries(funded: dict[str, Any]) -> str:
        return f"/accounts/{funded['id']}/entries"

    with committed_out_of_order(fresh_db_url, lambda f: f"{entries(f)}?limit=1") as seen:
        kit, funded, db, late, top = seen.kit, seen.funded, seen.db, seen.late, seen.read
        path = entries(funded)
        assert [(e["amount_sqft"], e["balance_after_sqft"]) for e in top["items"]] == [
            (-2_000, 12_000)
        ]

        after_cursor = ok(kit.api.get(f"{path}?limit=5&cursor={top['next_cursor']}"), 200)
        reloaded = kit.entries(funded["id"], limit=1)

        # the client's walk carries on from its cursor as it began, the late entry not below it
        assert [(e["amount_sqft"], e["balance_after_sqft"]) for e in after_cursor["items"]] == [
            (4_000, 14_000),
            (10_000, 10_000),
        ]
        # read again, the late entry is the newest, and the balances shown before are unchanged
        assert [(e["amount_sqft"], e["balance_after_sqft"]) for e in reloaded] == [
            (-1_000, 11_000),
            (-2_000, 12_000),
            (4_000, 14_000),
            (10_000, 10_000),
        ]
        assert reloaded[1:] == top["items"] + after_cursor["items"]
        # a client reading from the top until an entry it has seen finds the late one
        seen = top["items"][0]["transaction_id"]
        unseen = list(itertools.takewhile(lambda e: e["transaction_id"] != seen, reloaded))
        assert [e["transaction_id"] for e in unseen] == [late]
        assert kit.entries_csv(funded["id"])[0]["transaction_id"] == late
        assert queued(db) == set()


def test_a_statement_lists_a_days_entries_in_the_order_they_committed(
    backend: str, fresh_db_url: str
) -> None:
    """Two transfers out of one account on one day, one from each of its lots: the first takes
    its entries' ids, then stays open while the second commits and a client reads the day's
    statement.  Once the first commits, the statement lists it after the second, as they
    committed: the rows read before keep their place and running balances, each balance is the
    one before plus the entry, and the closing balance is the opening plus the entries.  Nothing
    seals in the background, so each statement's own sealing gives the entries their place."""
    if backend != "postgresql":
        pytest.skip("SQLite has one writer at a time: writes commit in the order of their ids")

    def statement(funded: dict[str, Any]) -> str:
        today = clock.today().isoformat()
        return f"/accounts/{funded['id']}/statement?from={today}&to={today}"

    with committed_out_of_order(fresh_db_url, statement) as seen:
        kit, funded, db, late = seen.kit, seen.funded, seen.db, seen.late
        path = statement(funded)
        (before,) = seen.read["classes"]
        (after,) = ok(kit.api.get(path), 200)["classes"]
        rows = kit.api.get(path, headers={"Accept": "text/csv"})
        assert rows.status_code == 200, rows.get_data(as_text=True)
        csv_entries = [
            row
            for row in csv.DictReader(io.StringIO(rows.get_data(as_text=True)))
            if row["row"] == "entry"
        ]

        def amounts(block: dict[str, Any]) -> list[tuple[int, int]]:
            return [(e["amount_sqft"], e["balance_after_sqft"]) for e in block["entries"]]

        transfers_out = [(-2_000, 12_000), (-1_000, 11_000)]
        assert amounts(before)[-1:] == transfers_out[:1]
        assert before["closing_sqft"] == 12_000
        # the late entry comes after the day's entries already shown, which keep their balances
        assert amounts(after) == amounts(before) + transfers_out[1:]
        assert after["entries"][-1]["transaction_id"] == late
        assert [e["transaction_id"] for e in csv_entries] == [
            e["transaction_id"] for e in after["entries"]
        ]
        for block in (before, after):
            running = block["opening_sqft"]
            for entry in block["entries"]:
                running += entry["amount_sqft"]
                assert entry["balance_after_sqft"] == running
            assert block["closing_sqft"] == running
        assert after["closing_sqft"] == 11_000
        assert queued(db) == set()


def queued(db: Database) -> set[str]:
    """The ids of the committed transactions waiting for their place in the hash chain."""
    with db.transaction() as session:
        waiting = session.execute(select(LedgerChainQueue.transaction_id)).scalars()
        return {str(transaction_id) for transaction_id in waiting}


# --- freezing accounts ----------------------------------------------------------------------


def test_a_frozen_account_shows_its_credits_frozen_and_unfreezing_releases_them(api, kit):
    funded = kit.funded(20_000)
    frozen = ok(api.post(f"/accounts/{funded['id']}/freeze"), 200)
    assert frozen["status"] == "frozen"
    row = frozen["balances"][0]
    assert (row["posted_sqft"], row["frozen_sqft"], row["available_sqft"]) == (20_000, 20_000, 0)
    assert all(lot["available_sqft"] == 0 for lot in kit.lots(funded["id"]))
    opened = ok(api.post(f"/accounts/{funded['id']}/unfreeze"), 200)
    assert opened["status"] == "open"
    row = opened["balances"][0]
    assert (row["posted_sqft"], row["frozen_sqft"], row["available_sqft"]) == (20_000, 0, 20_000)


def test_only_the_board_freezes_accounts(api, kit, lgu):
    funded = kit.funded(1_000)
    for token in (funded["holder"]["token"], lgu["token"]):
        problem(api.post(f"/accounts/{funded['id']}/freeze", token=token), 403, "forbidden")
        problem(api.post(f"/accounts/{funded['id']}/unfreeze", token=token), 403, "forbidden")
    assert kit.account_body(funded["id"])["status"] == "open"
