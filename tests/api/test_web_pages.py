"""The read-only pages show what the API shows, to whom the API shows it (issue #9).

Each test builds its world through the API, reads the page with a signed-in browser (Flask's
test client keeping cookies), and compares the page's figures with the API's answer.
"""

from __future__ import annotations

import csv
import io
from datetime import date, timedelta
from typing import Any

import pytest
from flask import Flask

from api import create_app
from api.web import chart
from bank.deposits import Deposit
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, ok, on
from tests.api.test_appeals import grant, noticed_decision, petition, rule
from tests.api.web_kit import Element, audit_events, number, page_balances, parse, signed_in

DAY = "2026-06-08"
LATER = "2026-06-20"


@pytest.fixture
def kit(api: Api, app: Flask) -> Kit:
    return Kit(api, app)


@pytest.fixture
def world(kit: Kit) -> dict[str, Any]:
    """A bank account that sold credits to a plan: a withdrawal, and a reservation still held."""
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000, restricted=9_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2")
        u = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 9_000)
        r = kit.reserve(bank["id"], plan["id"], bank["restricted_class"], 9_000)
        withdrawal = ok(
            kit.api.post(
                f"/plans/{plan['id']}/withdrawals",
                {"reservation_ids": [u["id"], r["id"]]},
                token=lgu["token"],
            )
        )
        second = kit.approved_plan(lgu, DAY, area_sqft=1_000, ratio="1")
        held = kit.reserve(bank["id"], second["id"], bank["unrestricted_class"], 1_500)
    return {
        "lgu": lgu,
        "bank": bank,
        "plan": plan,
        "withdrawal": withdrawal,
        "held": held,
    }


def html(response: Any, status: int = 200) -> Element:
    assert response.status_code == status, response.get_data(as_text=True)[:2000]
    assert response.mimetype == "text/html"
    return parse(response.get_data(as_text=True))


# --- /accounts/{id} ------------------------------------------------------------------------------


def test_a_holder_sees_the_balances_the_api_reports(app: Flask, kit: Kit, world) -> None:
    holder = world["bank"]["holder"]
    account_id = world["bank"]["id"]
    api_balances = kit.balances(account_id)
    client = signed_in(app.test_client(), holder["token"])

    document = html(client.get(f"/accounts/{account_id}"))

    shown = page_balances(document)
    assert shown == {
        code: {k: row[k] for k in ("posted_sqft", "reserved_sqft", "frozen_sqft", "available_sqft")}
        for code, row in api_balances.items()
    }
    # the figures the world was built to have, so the comparison is not of two empty tables
    unrestricted = shown[world["bank"]["unrestricted_class"]]
    assert unrestricted == {
        "posted_sqft": 11_000,
        "reserved_sqft": 1_500,
        "frozen_sqft": 0,
        "available_sqft": 9_500,
    }
    assert document.one("h1").text.startswith("Account ")
    assert all(
        th.attrs.get("scope") == "col"
        for th in document.one("table", id="balances").one("thead").all("th")
    )


def test_the_account_page_lists_every_lot_with_its_provenance(app: Flask, kit: Kit, world) -> None:
    account_id = world["bank"]["id"]
    lots = ok(kit.api.get(f"/accounts/{account_id}/lots"), 200)["items"]
    with app.extensions["wetbank.db"].transaction() as session:
        deposit = session.get(Deposit, world["bank"]["deposit"]["id"])
        assert deposit is not None
        reference = deposit.banking_plan_reference
    client = signed_in(app.test_client(), world["bank"]["holder"]["token"])

    table = html(client.get(f"/accounts/{account_id}")).one("table", id="lots")

    rows = {row.attrs["data-lot-id"]: row for row in table.all("tr") if "data-lot-id" in row.attrs}
    assert set(rows) == {lot["id"] for lot in lots}
    for lot in lots:
        cells = [cell.text for cell in rows[lot["id"]].all("td")]
        assert reference in cells
        assert DAY in cells  # deposited on
        assert number(cells[-1]) == lot["available_sqft"]


def test_the_statement_csv_is_the_apis_statement_csv(app: Flask, kit: Kit, world) -> None:
    account_id = world["bank"]["id"]
    period = "from=2026-06-01&to=2026-06-30"
    api_csv = kit.api.get(
        f"/accounts/{account_id}/statement?{period}", headers={"Accept": "text/csv"}
    )
    client = signed_in(app.test_client(), world["bank"]["holder"]["token"])
    document = html(client.get(f"/accounts/{account_id}?{period}"))
    link = document.one("a", id="statement-csv").attrs["href"]

    download = client.get(link)

    assert download.status_code == 200 and download.mimetype == "text/csv"
    assert "attachment" in download.headers["Content-Disposition"]
    assert "2026-06-01-2026-06-30" in download.headers["Content-Disposition"]
    assert download.get_data(as_text=True) == api_csv.get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(download.get_data(as_text=True))))
    kinds = [r["kind"] for r in rows if r["row"] == "entry"]
    assert "deposit" in kinds and "withdrawal" in kinds
    # the page's statement tables hold the same entries as the CSV
    page_entries = sum(
        len(table.one("tbody").all("tr")) - 2
        for table in document.all("table", class_="statement-class")
    )
    assert page_entries == len(kinds)


def test_a_statement_period_that_makes_no_sense_is_explained(app: Flask, world) -> None:
    account_id = world["bank"]["id"]
    client = signed_in(app.test_client(), world["bank"]["holder"]["token"])

    backwards = client.get(f"/accounts/{account_id}?from=2026-06-30&to=2026-06-01")
    garbled = client.get(f"/accounts/{account_id}?from=June")
    csv_backwards = client.get(
        f"/accounts/{account_id}/statement.csv?from=2026-06-30&to=2026-06-01"
    )

    assert "ends before it starts" in html(backwards, 422).one("p", role="alert").text
    assert "YYYY-MM-DD" in html(garbled, 422).one("p", role="alert").text
    assert csv_backwards.status_code == 422 and csv_backwards.mimetype == "text/html"


def test_the_statement_defaults_to_this_year_to_date(app: Flask, world) -> None:
    client = signed_in(app.test_client(), world["bank"]["holder"]["token"])
    with on(LATER):
        heading = html(client.get(f"/accounts/{world['bank']['id']}")).one(
            "h2", id="statement-heading"
        )
    assert heading.text == "Statement, 2026-01-01 to 2026-06-20"


def test_another_holder_or_an_lgu_is_refused_the_account_but_the_board_may_see_it(
    app: Flask, kit: Kit, world, board_token: str
) -> None:
    account_id = world["bank"]["id"]
    stranger = kit.holder("Stranger")
    for token in (stranger["token"], world["lgu"]["token"]):
        client = signed_in(app.test_client(), token)
        for path in (f"/accounts/{account_id}", f"/accounts/{account_id}/statement.csv"):
            refused = client.get(path)
            assert refused.status_code == 404, path
            assert "your token may not see it" in refused.get_data(as_text=True)
            assert "20,000" not in refused.get_data(as_text=True)
    board = signed_in(app.test_client(), board_token)
    assert board.get(f"/accounts/{account_id}").status_code == 200


def test_names_are_shown_as_text_never_as_markup(app: Flask, kit: Kit) -> None:
    hostile = "<script>alert(1)</script>"
    holder = ok(kit.api.post("/holders", {"name": hostile}))
    account_id = kit.account(holder["id"], 5)
    client = signed_in(app.test_client(), make_token(app, "holder", holder_id=holder["id"]))
    response = client.get(f"/accounts/{account_id}")

    body = response.get_data(as_text=True)
    assert "<script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert response.headers["Content-Security-Policy"].startswith("default-src 'none'")


# --- /plans/{id} --------------------------------------------------------------------------------


def test_an_lgu_sees_its_plans_allocations_and_each_blocker(app: Flask, kit: Kit, world) -> None:
    plan_id = world["plan"]["id"]
    shown = kit.get_plan(plan_id, token=world["lgu"]["token"])
    client = signed_in(app.test_client(), world["lgu"]["token"])

    document = html(client.get(f"/plans/{plan_id}"))

    verdict = document.one("p", id="impact-may-proceed")
    assert verdict.attrs["data-may-proceed"] == "false"
    blockers = [li.attrs["data-code"] for li in document.one("ul", id="impact-blockers").all("li")]
    assert blockers == [b["code"] for b in shown["impact_blockers"]] == ["decision_not_final"]
    table = document.one("table", data_withdrawal_id=str(world["withdrawal"]["id"]))
    allocations = sorted(
        (cells[0].text, number(cells[3].text))
        for row in table.one("tbody").all("tr")
        for cells in [row.all("td")]
    )
    assert allocations == sorted(
        (a["credit_class"], a["amount_sqft"]) for a in world["withdrawal"]["allocations"]
    )
    decision = [
        row for row in document.one("table", id="timeline").all("tr") if "Decision" in row.text
    ]
    assert decision[0].attrs["data-state"] == "met"


def test_the_timeline_shows_the_decision_deadline_as_due_then_passed(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=20_000)
    due = kit.get_plan(plan["id"], token=lgu["token"])["deadlines"]["decision_due"]
    client = signed_in(app.test_client(), lgu["token"])

    def decision_row(day: str) -> Element:
        with on(day):
            rows = html(client.get(f"/plans/{plan['id']}")).one("table", id="timeline").all("tr")
        (row,) = [r for r in rows if r.text.startswith("Decision (60-day rule)")]
        return row

    on_the_day = decision_row(due)
    after = decision_row((date.fromisoformat(due) + timedelta(days=1)).isoformat())
    assert due in on_the_day.text
    assert on_the_day.attrs["data-state"] == "open"
    assert after.attrs["data-state"] == "deemed"


def test_a_plan_is_refused_to_another_lgu_and_to_holders(app: Flask, kit: Kit, world) -> None:
    plan_id = world["plan"]["id"]
    for token in (kit.lgu()["token"], world["bank"]["holder"]["token"]):
        client = signed_in(app.test_client(), token)
        assert client.get(f"/plans/{plan_id}").status_code == 404


# --- /audit --------------------------------------------------------------------------------------


def test_the_audit_page_is_for_the_board_only(app: Flask, api: Api, world) -> None:
    for token in (world["bank"]["holder"]["token"], world["lgu"]["token"]):
        assert signed_in(app.test_client(), token).get("/audit").status_code == 403
    assert app.test_client().get("/audit").status_code == 303  # signed out: sign in first
    # refused like the API's refusals: in the access trail, with who was refused
    events = audit_events(api)
    refused = [e for e in events if e["kind"] == "forbidden" and e["path"] == "GET /audit"]
    assert {e["actor"].split(" (")[0] for e in refused} >= {"test holder", "test lgu"}


def test_the_board_sees_verify_the_trial_balance_and_the_newest_journal(
    app: Flask, api: Api, world, board_token: str
) -> None:
    client = signed_in(app.test_client(), board_token)

    document = html(client.get("/audit"))

    verify = api.get("/audit/verify").json
    result = document.one("p", id="verify-result")
    assert result.attrs["data-ok"] == "true" and verify["ok"] is True, (verify, document)
    # the chain head to keep elsewhere: the newest link, the one the journal lists first
    head = document.one("p", id="chain-head")
    newest = next(r for r in document.one("table", id="journal").all("tr") if "data-seq" in r.attrs)
    assert int(head.attrs["data-seq"]) == int(newest.attrs["data-seq"])
    # the page and the API checked the same chain: all of it, or what followed the last full pass
    since = verify["last_full_pass"]["seq"] if verify["mode"] == "since_checkpoint" else 0
    assert int(head.attrs["data-seq"]) == since + verify["transactions_checked"]
    assert head.attrs["data-hash"] == newest.one("code").attrs["title"]
    assert f"--anchor {head.attrs['data-seq']}:{head.attrs['data-hash']}" in head.text
    trial = api.get("/audit/trial-balance").json
    rows = {
        row.attrs["data-asset"]: row
        for row in document.one("table", id="trial-balance").all("tr")
        if "data-asset" in row.attrs
    }
    assert set(rows) == {a["asset"] for a in trial["assets"]}
    journal = [
        int(row.attrs["data-seq"])
        for row in document.one("table", id="journal").all("tr")
        if "data-seq" in row.attrs
    ]
    assert journal == sorted(journal, reverse=True) and 0 < len(journal) <= 25
    withdrawals = api.get("/audit/journal?kind=withdrawal&limit=500").json["items"]
    assert world["withdrawal"]["transaction_id"] in {t["transaction_id"] for t in withdrawals}


def test_the_journal_shows_dollars_for_usd_entries_and_square_feet_for_credits(
    app: Flask, api: Api, kit: Kit, world, board_token: str
) -> None:
    """A $200.00 fee (20000 cents) reads as dollars, as the trial balance's USD row does; the
    credits' entries keep their square feet and class."""
    plan = kit.plan(world["lgu"], received_on=DAY, area_sqft=1_000)
    body = {
        "kind": "processing_fee",
        "amount_cents": 20_000,
        "payer": "A. Payer",
        "received_on": DAY,
        "plan_id": plan["id"],
    }
    with on(DAY):
        ok(api.post("/payments", body, token=world["lgu"]["token"]))
    document = html(signed_in(app.test_client(), board_token).get("/audit"))

    journal = document.one("table", id="journal")
    newest = next(row for row in journal.all("tr") if "data-seq" in row.attrs)
    assert "payment_processing_fee" in newest.text
    entries = sorted(li.text.split(": ")[-1] for li in newest.all("li"))
    assert entries == ["+$200.00", "-$200.00"], entries
    usd = document.one("tr", data_asset="USD").all("td")[1:3]  # as the trial balance words it
    assert all(cell.text.startswith("$") for cell in usd), [cell.text for cell in usd]
    # the credits' entries keep their square feet and class: the reservation still held
    held = f"1,500 {world['bank']['unrestricted_class']}"
    assert held in journal.text and "$1,500" not in journal.text


# --- / ------------------------------------------------------------------------------------------


def test_the_public_page_charts_the_apis_availability_per_service_area(
    app: Flask, api: Api, world
) -> None:
    report = api.get("/reports/credit-availability", token="").json
    response = app.test_client().get("/")  # nobody signed in

    document = html(response)

    totals: dict[str, int] = {}
    for item in report["items"]:
        key = str(item["service_area"])
        totals[key] = totals.get(key, 0) + item["available_sqft"]
    svg = document.one("svg", id="availability-chart")
    bars = {g.attrs["data-service-area"]: g.one("rect") for g in svg.all("g", class_="bar")}
    assert {k: int(r.attrs["data-sqft"]) for k, r in bars.items()} == totals
    widest = max(totals.values())
    for key, rect in bars.items():
        expected = chart.PLOT_WIDTH * totals[key] / widest
        assert float(rect.attrs["width"]) == pytest.approx(expected, abs=0.01)
    assert totals["5"] >= 11_000 - 1_500  # this test's own credits are among them
    for table in document.all("table", class_="availability"):
        area = table.attrs["data-service-area"]
        cells = [number(row.all("td")[1].text) for row in table.one("tbody").all("tr")]
        assert sum(cells) == totals[area]
    assert "Sign in" in document.one("header").text
    assert (
        "Cache-Control" not in response.headers
        or "no-store" not in response.headers["Cache-Control"]
    )


def test_unknown_paths_get_a_page_but_the_api_keeps_its_problem_details(
    app: Flask, api: Api
) -> None:
    page = app.test_client().get("/no-such-page")
    assert page.status_code == 404 and page.mimetype == "text/html"
    assert "Content-Security-Policy" in page.headers
    missing = api.get("/no-such-thing")
    assert missing.status_code == 404 and missing.mimetype == "application/problem+json"
    assert "Content-Security-Policy" not in missing.headers


def test_an_error_page_with_the_sessions_secret_is_never_cached(app: Flask, kit: Kit) -> None:
    client = signed_in(app.test_client(), kit.holder()["token"])
    for path in ("/accounts/acct_nobody", "/no-such-page", "/audit"):
        response = client.get(path)
        assert response.status_code in (403, 404), path
        document = parse(response.get_data(as_text=True))
        assert document.one("input", name="csrf_token").attrs["value"]  # the sign-out form's
        assert response.headers.get("Cache-Control") == "no-store", path


def test_a_signed_in_holder_finds_their_accounts_on_the_home_page(
    app: Flask, kit: Kit, world
) -> None:
    client = signed_in(app.test_client(), world["bank"]["holder"]["token"])
    links = html(client.get("/")).one("ul", id="my-accounts").all("a")
    assert [a.attrs["href"] for a in links] == [f"/accounts/{world['bank']['id']}"]
    lgu = signed_in(app.test_client(), world["lgu"]["token"])
    plans = {a.attrs["href"] for a in html(lgu.get("/")).one("ul", id="my-plans").all("a")}
    assert f"/plans/{world['plan']['id']}" in plans


def test_a_plans_appeal_shows_its_deadlines_and_which_were_late(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    appeal = ok(petition(kit, plan, received="2026-09-24"))
    ok(grant(kit, appeal, "2026-10-27"))  # the grant was due 2026-10-26: late
    # due 60 days after the petition's receipt: Monday 2026-11-23, in time
    ok(rule(kit, appeal, "2026-11-23", "plan_upheld"))
    with on("2026-12-08"):
        client = signed_in(app.test_client(), lgu["token"])
        document = html(client.get(f"/plans/{plan['id']}"))

    states = {
        row.one("th").text: row.attrs["data-state"]
        for row in document.one("table", id="timeline").one("tbody").all("tr")
    }
    assert states["Appeal 1: petition received"] == "recorded"
    assert states["Appeal 1: board decides whether to grant"] == "late"
    assert states["Appeal 1: board decides the appeal"] == "met"
    assert states["Notice of decision"] == "met"
    row = document.one("table", id="appeals").one("tr", data_appeal_id=appeal["id"])
    assert "Granted 2026-10-27 (late)" in row.text
    assert "Plan upheld 2026-11-23" in row.text
    assert "$200.00" in row.text
    assert document.one("dd", id="plan-status").text.startswith(
        kit.get_plan(plan["id"], token=lgu["token"])["status"]
    )


def test_an_empty_bank_has_pages_too(fresh_db_url: str) -> None:
    empty = create_app({"DATABASE_URL": fresh_db_url, "PROPAGATE_EXCEPTIONS": False})
    try:
        index = html(empty.test_client().get("/"))
        assert index.one("p", id="no-credits").text == "No credits are available at the moment."
        assert not index.has("svg")
        board = signed_in(empty.test_client(), make_token(empty, "board"))
        audit = html(board.get("/audit"))
        assert audit.one("p", id="verify-result").attrs["data-ok"] == "true"
        assert "The journal is empty." in audit.one("table", id="journal").text
    finally:
        empty.extensions["wetbank.db"].dispose()
