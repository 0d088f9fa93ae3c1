"""Each role lands on its own records, and every list pages, filters and names things as people
know them (issue #26): account numbers, lot labels, names and dollars, never ids or cents.

The world is dated 2031, in service area 3, so that the deadlines and expiries these tests look
for are not crowded out by other tests' plans in the shared database, nor the other way round.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any
from urllib.parse import quote

import pytest
from flask import Flask

from bank import homes
from tests.api.conftest import Api
from tests.api.kit import Kit, ok, on
from tests.api.test_appeals import grant, noticed_decision, petition, rule
from tests.api.web_kit import Element, number, parse, signed_in

DAY = "2031-03-03"
LATER = "2031-12-31"
#: a service area other tests' lists of plans "in service area 5, newest first" do not show
AREA = 3
IDS = ("acct_", "lot_", "lgu_", "hld_", "res_", "usd:")


@pytest.fixture
def kit(api: Api, app: Flask) -> Kit:
    return Kit(api, app)


@pytest.fixture
def world(kit: Kit) -> dict[str, Any]:
    """An LGU's approved plan drawing on a holder's account (a withdrawal and a reservation still
    held), with a processing fee paid; and a second plan of the same LGU received the same day,
    to be replaced project-specifically with a letter of credit held for it (Subd. 3), its notice
    of application due soon."""
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=AREA, unrestricted=20_000, restricted=9_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2", service_area=AREA)
        u = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 9_000, LATER)
        r = kit.reserve(bank["id"], plan["id"], bank["restricted_class"], 9_000, LATER)
        # reserved before the withdrawal met the requirement (none is taken after it)
        held = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 1_500, LATER)
        ok(
            kit.api.post(
                f"/plans/{plan['id']}/withdrawals",
                {"reservation_ids": [u["id"], r["id"]]},
                token=lgu["token"],
            )
        )
        fee = {"kind": "processing_fee", "amount_cents": 37_513, "payer": "A. Payer"}
        payment = ok(
            kit.api.post(
                "/payments",
                {**fee, "received_on": DAY, "plan_id": plan["id"]},
                token=lgu["token"],
            )
        )
        fresh = kit.plan(
            lgu, received_on=DAY, area_sqft=20_000, service_area=AREA, method="project_specific"
        )
        security = ok(
            kit.api.post(
                f"/plans/{fresh['id']}/securities",
                {
                    "kind": "letter_of_credit",
                    "issuer": "First State Bank",
                    "amount_cents": 1_200_000,
                    "irrevocable": True,
                    "issued_on": DAY,
                    "expires_on": "2031-04-15",
                },
                token=lgu["token"],
            )
        )
    return {
        "lgu": lgu,
        "bank": bank,
        "plan": plan,
        "held": held,
        "payment": payment,
        "security": security,
        "fresh": fresh,
    }


def html(response: Any, status: int = 200) -> Element:
    assert response.status_code == status, response.get_data(as_text=True)[:3000]
    assert response.mimetype == "text/html"
    return parse(response.get_data(as_text=True))


def main_text(document: Element) -> str:
    return document.one("main").text


def no_ids(document: Element) -> None:
    shown = main_text(document)
    assert not [i for i in IDS if i in shown], shown


def menu(document: Element) -> set[str]:
    return {a.attrs["href"].split("?")[0] for a in document.one("nav").all("a")}


def name_of(api: Api, kind: str, ident: str) -> str:
    return str(ok(api.get(f"/{kind}/{ident}"), 200)["name"])


class Browser:
    """A person reading pages: a browser signed in on the day each page is read (a session
    lasts eight hours)."""

    def __init__(self, app: Flask, token: str) -> None:
        self.app = app
        self.token = token

    def get(self, path: str, status: int = 200, day: str = DAY) -> Element:
        with on(day):
            client = signed_in(self.app.test_client(), self.token)
            return html(client.get(path), status)


def get(browser: Browser, path: str, status: int = 200, day: str = DAY) -> Element:
    return browser.get(path, status, day)


# --- homes -------------------------------------------------------------------------------------


def test_a_holder_lands_on_its_accounts_with_balances_and_what_is_reserved_against_them(
    app: Flask, kit: Kit, world: dict[str, Any]
) -> None:
    bank, plan = world["bank"], world["plan"]
    account = ok(kit.api.get(f"/accounts/{bank['id']}"), 200)
    available = sum(b["available_sqft"] for b in account["balances"])
    client = Browser(app, bank["holder"]["token"])

    document = get(client, "/")

    assert document.one("h1").text == name_of(kit.api, "holders", bank["holder"]["id"])
    (line,) = document.one("ul", id="my-accounts").all("li")
    assert line.one("a").attrs["href"] == f"/accounts/{bank['id']}"
    assert line.one("a").text.startswith(account["number"])
    assert number(line.one("span", data_field="available_sqft").text) == available
    row = document.one("table", id="my-reservations").one(
        "tr", data_reservation_id=world["held"]["id"]
    )
    cells = [c.text for c in row.all("td")]
    assert row.one("th").text == plan["project"]
    assert name_of(kit.api, "lgus", world["lgu"]["id"]) in cells
    assert account["number"] in cells and "1,500" in cells
    no_ids(document)
    assert menu(document) >= {"/", "/accounts", "/credit-availability"}
    assert "/plans" not in menu(document) and "/audit" not in menu(document)


def test_with_a_bank_site_frozen_the_home_and_the_account_list_add_up_to_what_is_posted(
    app: Flask, kit: Kit, world: dict[str, Any], board_token: str
) -> None:
    """The board freezes the holder's bank site: the credits neither reserved nor withdrawn are
    frozen.  The holder's home and the account list show them beside what is available and
    reserved, as the account page and the API do, the three making what is posted."""
    bank = world["bank"]
    with on(DAY):
        ok(kit.api.post(f"/bank-sites/{bank['site_id']}/freeze"), 200)
    balances = ok(kit.api.get(f"/accounts/{bank['id']}"), 200)["balances"]
    api = {k: sum(b[f"{k}_sqft"] for b in balances) for k in ("posted", "reserved", "frozen")}
    api["available"] = sum(b["available_sqft"] for b in balances)
    assert api["frozen"] > 0 and api["reserved"] > 0
    holder = Browser(app, bank["holder"]["token"])
    account_page = get(holder, f"/accounts/{bank['id']}").one("table", id="balances")

    (line,) = get(holder, "/").one("ul", id="my-accounts").all("li")
    row = get(holder, "/accounts").one("table", id="accounts").one("tr", data_account_id=bank["id"])

    # the home says it in a sentence: "… sq ft available of … posted; … reserved; … frozen"
    said = re.search(r"([\d,]+) sq ft available of ([\d,]+) posted; ([\d,]+) reserved", line.text)
    assert said is not None, line.text
    frozen = re.search(r"; ([\d,]+) frozen", line.text)
    on_home = {
        "available": number(said[1]),
        "posted": number(said[2]),
        "reserved": number(said[3]),
        "frozen": number(frozen[1]) if frozen else 0,
    }
    assert on_home == api
    in_list = {k: number(row.one("td", data_field=f"{k}_sqft").text) for k in api}
    assert in_list == api
    assert api["available"] + api["reserved"] + api["frozen"] == api["posted"]
    frozen_by_class = [number(c.text) for c in account_page.all("td", data_field="frozen_sqft")]
    assert sum(frozen_by_class) == api["frozen"]


def test_a_reservation_returned_on_appeal_reads_so_on_the_holders_home(
    app: Flask, kit: Kit
) -> None:
    """Credits reserved and withdrawn for a plan the board then reversed on appeal went back to
    their lots: the holder's home says so beside the reservation, as the account's
    reservations page does, not plain "Posted"."""
    lgu = kit.lgu()
    with on("2026-09-01"):
        bank = kit.funded_account(day="2026-09-01", service_area=5, unrestricted=20_000)
    plan = noticed_decision(kit, lgu)
    with on("2026-09-04"):
        held = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
        taken = {"reservation_ids": [held["id"]]}
        ok(kit.api.post(f"/plans/{plan['id']}/withdrawals", taken, token=lgu["token"]))
    appeal = ok(petition(kit, plan))
    ok(grant(kit, appeal, "2026-10-06"))
    ok(rule(kit, appeal, "2026-11-02", "plan_reversed"))
    holder = Browser(app, bank["holder"]["token"])

    home = get(holder, "/", day="2026-11-03").one("tr", data_reservation_id=held["id"])
    listed = get(holder, f"/accounts/{bank['id']}/reservations", day="2026-11-03").one(
        "tr", data_reservation_id=held["id"]
    )

    assert "Posted (returned on appeal)" in [c.text for c in home.all("td")]
    assert "posted (returned on appeal)" in [c.text for c in listed.all("td")]


def test_an_lgu_lands_on_its_plans_with_the_deadlines_due_soon_first(
    app: Flask, kit: Kit, world: dict[str, Any]
) -> None:
    lgu, fresh = world["lgu"], world["fresh"]
    other = kit.lgu()
    with on(DAY):
        stranger = kit.plan(other, received_on=DAY, area_sqft=20_000, service_area=AREA)
    notice_due = kit.get_plan(fresh["id"], token=lgu["token"])["deadlines"]["notice_due"]
    client = Browser(app, lgu["token"])

    document = get(client, "/")

    assert document.one("h1").text == name_of(kit.api, "lgus", lgu["id"])
    due = document.one("table", id="due-soon").one("tr", data_plan_id=fresh["id"])
    assert f"Notice of application: {notice_due}" in due.one("td", data_field="deadline").text
    listed = {li.attrs["data-plan-id"] for li in document.one("ul", id="my-plans").all("li")}
    assert {fresh["id"], world["plan"]["id"]} <= listed
    assert stranger["id"] not in listed and stranger["project"] not in main_text(document)
    assert menu(document) >= {"/plans", "/payments", "/securities", "/credit-availability"}
    assert "/accounts" not in menu(document) and "/holders" not in menu(document)
    # after its deadline the notice is overdue, still first; nothing is due 60 days on
    late = (date.fromisoformat(notice_due) + timedelta(days=1)).isoformat()
    row = get(client, "/", day=late).one("table", id="due-soon").one("tr", data_plan_id=fresh["id"])
    assert "(overdue)" in row.text


def test_the_board_lands_on_a_dashboard_of_this_weeks_deadlines_and_expiring_securities(
    app: Flask, kit: Kit, world: dict[str, Any], board_token: str
) -> None:
    notice_due = kit.get_plan(world["fresh"]["id"])["deadlines"]["notice_due"]
    looked = (date.fromisoformat(notice_due) - timedelta(days=3)).isoformat()
    client = Browser(app, board_token)

    document = get(client, "/", day=looked)

    assert document.one("h1").text == "Dashboard"
    week = document.one("table", id="due-this-week")
    assert week.has("tr", data_plan_id=world["fresh"]["id"])
    security = document.one("table", id="expiring").one(
        "tr", data_security_id=world["security"]["id"]
    )
    assert security.one("td", data_field="amount").text == "$12,000.00"
    assert "First State Bank" in security.text
    assert document.has("p", id="last-full-pass")
    lists = {a.attrs["href"] for a in document.one("ul", id="board-lists").all("a")}
    assert lists >= {
        "/plans",
        "/accounts",
        "/holders",
        "/lgus",
        "/bank-sites",
        "/securities",
        "/payments",
        "/audit",
        "/credit-availability",
    }
    # the public report is a menu link away, signed in or not
    report = get(client, "/credit-availability")
    assert report.one("h1").text == "Wetland replacement credits available"


def due_rows(document: Element, table: str) -> list[str]:
    return [row.attrs["data-plan-id"] for row in document.one("table", id=table).all("tr")[1:]]


def test_a_long_list_of_deadlines_is_cut_short_on_the_homes_and_paged_in_full(
    app: Flask, kit: Kit, board_token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With more plans due than a home lists (``homes.SHORTCUTS``, two here), the dashboard and
    the LGU's home show the soonest and link to every one of them, on pages of their own: the
    board's of this week, the LGU's of the next 14 days, only its own."""
    monkeypatch.setattr(homes, "SHORTCUTS", 2)
    day = "2033-05-02"  # a year of its own: no other test's plans are due near it
    lgu, other = kit.lgu(), kit.lgu()
    with on(day):
        mine = [
            kit.plan(lgu, received_on=day, area_sqft=20_000, service_area=AREA)["id"]
            for _ in range(3)
        ]
        theirs = kit.plan(other, received_on=day, area_sqft=20_000, service_area=AREA)["id"]
    notice_due = date.fromisoformat(kit.get_plan(mine[0])["deadlines"]["notice_due"])
    looked = (notice_due - timedelta(days=3)).isoformat()

    board = Browser(app, board_token)
    dashboard = get(board, "/", day=looked)
    assert len(due_rows(dashboard, "due-this-week")) == 2
    every = dashboard.one("a", id="all-due").attrs["href"]
    assert every == "/plans/due?within=7"
    first = get(board, f"{every}&limit=2", day=looked)
    assert first.one("h1").text == "Plans with a deadline in the next 7 days"
    second = get(board, first.one("a", id="next-page").attrs["href"], day=looked)
    shown = due_rows(first, "due") + due_rows(second, "due")
    assert len(shown) == len(set(shown)) == 4 and set(shown) == {*mine, theirs}
    assert not second.has("a", id="next-page")

    home = get(Browser(app, lgu["token"]), "/", day=looked)
    assert len(due_rows(home, "due-soon")) == 2
    every = home.one("a", id="all-due").attrs["href"]
    assert every == "/plans/due?within=14"
    listed = get(Browser(app, lgu["token"]), every, day=looked)
    assert sorted(due_rows(listed, "due")) == sorted(mine)
    # a home listing all its plans due links to no longer list
    assert not get(Browser(app, other["token"]), "/", day=looked).has("a", id="all-due")


def test_the_plan_list_cuts_its_plans_due_short_and_links_to_them_all_with_its_filters(
    app: Flask, kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``/plans`` lists the plans due in the next 14 days as the LGU's home does: the first
    ``homes.SHORTCUTS`` (two here), soonest first, and a link to every one of them on
    ``/plans/due``, which keeps the page's text and status filters (the section lists only
    plans of the status chosen, and so does the list it links to)."""
    monkeypatch.setattr(homes, "SHORTCUTS", 2)
    day = "2034-05-01"  # a year of its own: no other test's plans are due near it
    lgu = kit.lgu()
    with on(day):
        received = [
            kit.plan(lgu, received_on=day, area_sqft=20_000, service_area=AREA)["id"]
            for _ in range(3)
        ]
        approved = kit.approved_plan(lgu, day, area_sqft=9_000, service_area=AREA)["id"]
    client = Browser(app, lgu["token"])

    page = get(client, "/plans", day=day)
    assert len(due_rows(page, "due-soon")) == 2
    every = page.one("a", id="all-due").attrs["href"]
    assert every == "/plans/due?within=14"
    assert set(due_rows(get(client, every, day=day), "due")) == {*received, approved}

    chosen = get(client, "/plans?status=received", day=day)
    assert set(due_rows(chosen, "due-soon")) < set(received)
    every = chosen.one("a", id="all-due").attrs["href"]
    assert every == "/plans/due?within=14&status=received"
    listed = get(client, every, day=day)
    assert sorted(due_rows(listed, "due")) == sorted(received)
    assert listed.one("option", value="received").attrs.get("selected") is not None
    # two plans due or fewer: all are shown, with no link
    found = get(client, "/plans?status=approved", day=day)
    assert due_rows(found, "due-soon") == [approved] and not found.has("a", id="all-due")
    get(client, "/plans/due?status=lost", status=400, day=day)


def test_the_deadlines_list_is_the_boards_and_the_lgus(app: Flask, world: dict[str, Any]) -> None:
    get(Browser(app, world["bank"]["holder"]["token"]), "/plans/due", status=403)
    refused = get(Browser(app, world["lgu"]["token"]), "/plans/due?within=8", status=400)
    assert "Choose how far ahead to look: 7 or 14 days." in main_text(refused)


# --- lists ---------------------------------------------------------------------------------------


def test_the_plan_list_filters_by_text_and_status_and_pages_by_keyset(
    app: Flask, kit: Kit, world: dict[str, Any]
) -> None:
    client = Browser(app, world["lgu"]["token"])

    first = get(client, "/plans?limit=1")
    rows = first.one("table", id="plans").one("tbody").all("tr")
    following = first.one("a", id="next-page").attrs["href"]
    second = get(client, following)
    rows += second.one("table", id="plans").one("tbody").all("tr")
    assert sorted(r.attrs["data-plan-id"] for r in rows) == sorted(
        [world["plan"]["id"], world["fresh"]["id"]]
    )
    assert not second.has("a", id="next-page") and second.has("a", id="first-page")

    found = get(client, f"/plans?q={world['fresh']['project'][-8:]}")
    assert [r.attrs["data-plan-id"] for r in found.one("table", id="plans").all("tr")[1:]] == [
        world["fresh"]["id"]
    ]
    approved = get(client, "/plans?status=approved").one("table", id="plans")
    assert [r.attrs["data-plan-id"] for r in approved.all("tr")[1:]] == [world["plan"]["id"]]
    assert approved.one("td", data_field="status").text == "Approved"
    get(client, "/plans?status=nonsense", status=400)
    get(client, "/plans?after=../../etc", status=400)


def test_accounts_are_a_holders_own_and_the_board_finds_them_by_holder_or_text(
    app: Flask, kit: Kit, world: dict[str, Any], board_token: str
) -> None:
    bank = world["bank"]
    number_ = ok(kit.api.get(f"/accounts/{bank['id']}"), 200)["number"]
    with on(DAY):
        other = kit.funded_account(day=DAY, service_area=AREA, unrestricted=5_000)
    holder = Browser(app, bank["holder"]["token"])
    own = get(holder, f"/accounts?holder={other['holder']['id']}").one("table", id="accounts")
    assert [r.attrs["data-account-id"] for r in own.all("tr")[1:]] == [bank["id"]]

    board = Browser(app, board_token)
    holder_name = name_of(kit.api, "holders", bank["holder"]["id"])
    by_name = get(board, f"/accounts?q={quote(holder_name)}").one("table", id="accounts")
    (row,) = by_name.all("tr")[1:]
    assert row.one("th").text.startswith(number_)
    assert holder_name in row.text
    by_holder = get(board, f"/accounts?holder={other['holder']['id']}")
    assert by_holder.has("tr", data_account_id=other["id"])
    assert not by_holder.has("tr", data_account_id=bank["id"])
    no_ids(by_holder)
    lgu = Browser(app, world["lgu"]["token"])
    get(lgu, "/accounts", status=403)


def test_holders_lgus_and_bank_sites_are_the_boards_lists(
    app: Flask, kit: Kit, world: dict[str, Any], board_token: str
) -> None:
    for token in (world["bank"]["holder"]["token"], world["lgu"]["token"]):
        client = Browser(app, token)
        for path in ("/holders", "/lgus", "/bank-sites"):
            get(client, path, status=403)
    with on(DAY):  # two more bank sites: a page of two has a next page whatever ran before
        for _ in range(2):
            kit.funded_account(day=DAY, service_area=AREA, unrestricted=5_000)
    board = Browser(app, board_token)
    holder_name = name_of(kit.api, "holders", world["bank"]["holder"]["id"])
    holders = get(board, f"/holders?q={quote(holder_name)}").one("ul", id="holders")
    (link,) = holders.all("a")
    assert link.text == holder_name
    assert link.attrs["href"] == f"/accounts?holder={world['bank']['holder']['id']}"
    lgu_name = name_of(kit.api, "lgus", world["lgu"]["id"])
    assert lgu_name in get(board, f"/lgus?q={quote(lgu_name)}").one("ul", id="lgus").text
    sites = get(board, "/bank-sites?limit=2")
    assert len(sites.one("table", id="bank-sites").one("tbody").all("tr")) == 2
    assert sites.has("a", id="next-page")


def test_payments_and_securities_are_listed_in_dollars_to_their_plans_lgu_only(
    app: Flask, kit: Kit, world: dict[str, Any]
) -> None:
    lgu = Browser(app, world["lgu"]["token"])
    payments = get(lgu, "/payments").one("table", id="payments")
    row = payments.one("tr", data_payment_id=world["payment"]["id"])
    assert row.one("td", data_field="amount").text == "$375.13"
    assert world["plan"]["project"] in row.text and "Processing fee" in row.text
    securities = get(lgu, "/securities?expiring=1").one("table", id="securities")
    (row,) = securities.one("tbody").all("tr")
    assert row.attrs["data-security-id"] == world["security"]["id"]
    assert not get(lgu, "/securities?expiring=1", day="2031-01-02").has("table")
    released = get(lgu, "/securities?status=released")
    assert not released.has("table") and released.has("p", id="none")

    stranger = Browser(app, kit.lgu()["token"])
    assert not get(stranger, "/payments").has("tr", data_payment_id=world["payment"]["id"])
    assert not get(stranger, "/securities").has("table")
    holder = Browser(app, world["bank"]["holder"]["token"])
    get(holder, "/payments", status=403)
    get(holder, "/securities", status=403)


# --- the records ---------------------------------------------------------------------------------


def test_the_plan_page_shows_payments_securities_account_numbers_and_lot_labels(
    app: Flask, kit: Kit, world: dict[str, Any]
) -> None:
    bank = world["bank"]
    number_ = ok(kit.api.get(f"/accounts/{bank['id']}"), 200)["number"]
    client = Browser(app, world["lgu"]["token"])

    document = get(client, f"/plans/{world['plan']['id']}")

    payment = document.one("table", id="payments").one("tr", data_payment_id=world["payment"]["id"])
    assert payment.one("td", data_field="amount").text == "$375.13"
    reserved = document.one("table", id="reservations").one(
        "tr", data_reservation_id=world["held"]["id"]
    )
    assert number_ in reserved.text
    lots = {row.one("th").text for row in document.one("table", class_="withdrawal").all("tr")[1:]}
    assert lots and all(lot.startswith(f"{number_} lot ") for lot in lots)
    no_ids(document)
    # the letter of credit is held for the project-specific plan
    guaranteed = get(client, f"/plans/{world['fresh']['id']}")
    security = guaranteed.one("table", id="securities")
    assert security.one("td", data_field="amount").text == "$12,000.00"
    no_ids(guaranteed)


def test_money_in_the_apis_words_reads_as_dollars_on_the_plan_page(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    with on(DAY):
        plan = kit.approved_plan(
            lgu,
            DAY,
            method="monetary_payment",
            impact={
                "area_sqft": 9_000,
                "wetland_type": "2",
                "service_area": AREA,
                "county": "Lyon",
                "on_agricultural_land": True,
            },
            in_lieu_amount_due_cents=1_200_000,
        )
    client = Browser(app, lgu["token"])

    blocker = get(client, f"/plans/{plan['id']}").one("li", data_code="in_lieu_payment_due")

    assert "$0.00 of $12,000.00 received" in blocker.text
    assert "cents" not in blocker.text


def test_the_account_page_and_the_audit_journal_name_lots_and_lgus(
    app: Flask, kit: Kit, world: dict[str, Any], board_token: str
) -> None:
    bank = world["bank"]
    holder = Browser(app, bank["holder"]["token"])
    account = get(holder, f"/accounts/{bank['id']}?from=2031-01-01&to=2031-12-31")
    lots = [
        row.all("td")[1].text
        for table in account.all("table", class_="statement-class")
        for row in table.one("tbody").all("tr")[1:-1]
    ]
    assert lots and all(len(lot) <= 3 and lot.isupper() for lot in lots), lots
    assert name_of(kit.api, "holders", bank["holder"]["id"]) in account.one("dl").text
    no_ids(account)

    board = Browser(app, board_token)
    journal = get(board, "/audit").one("table", id="journal")
    lgu_name = name_of(kit.api, "lgus", world["lgu"]["id"])
    assert lgu_name in journal.text  # the LGU's fee income account, by its name
    assert world["lgu"]["id"] not in journal.text
