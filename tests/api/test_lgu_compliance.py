"""The board's LGU compliance report (Subd. 1 (c); docs/domain.md §4), on both databases.

A worked example: one LGU's four plans received in January 2026 (one on time throughout, one
never noticed nor decided, one noticed and given notice of its decision late, one reversed on
appeal), one plan of it received the day before the period, and another LGU's plan received on
its last day.  Read as of 2026-06-01 as JSON, as CSV and on the board's page.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from tests.api.kit import Kit, decision_body, mailing, ok, on, problem
from tests.api.web_kit import parse, signed_in

PERIOD = {"from": "2026-01-01", "to": "2026-01-31"}
AS_OF = "2026-06-01"
ZERO = {
    "plans_received": 0,
    "decided_in_time": 0,
    "deemed_approved": 0,
    "notices_late": 0,
    "notices_missing": 0,
    "decision_notices_late": 0,
    "decision_notices_missing": 0,
    "reversed_on_appeal": 0,
    "copies_owed": 0,
}


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def post(kit: Kit, path: str, body: dict, day: str, token: str | None = None) -> Any:
    with on(day):
        return ok(kit.api.post(path, body, token=token))


def plan(
    kit: Kit,
    lgu: dict,
    received: str,
    *,
    notice: str | None = None,
    decided: str | None = None,
    decision_notice: str | None = None,
) -> dict[str, Any]:
    """A 9,000 sq ft plan (no comment period) and the acts recorded on it, each on its day."""
    with on(received):
        body = kit.plan(lgu, received_on=received, area_sqft=9_000)
    token = lgu["token"]
    if notice:
        post(kit, f"/plans/{body['id']}/notices", mailing(notice, plan=body), notice, token)
    if decided:
        decision = decision_body("approved", decided)
        post(kit, f"/plans/{body['id']}/decision", decision, decided, token)
    if decision_notice:
        path = f"/plans/{body['id']}/decision-notice"
        post(kit, path, mailing(decision_notice, plan=body), decision_notice, token)
    return body


def reverse_on_appeal(kit: Kit, plan_id: str) -> None:
    petition = {
        "petitioner_kind": "residents",
        "petitioner_name": "Wright County residents",
        "petitioner_address": "10 2nd St NW, Buffalo, MN",
        "resident_count": 100,
        "postmarked_on": "2026-01-30",
        "received_on": "2026-02-02",
        "filing_fee_cents": 20_000,
    }
    appeal = post(kit, f"/plans/{plan_id}/appeals", petition, "2026-02-02")
    fee = {
        "kind": "appeal_filing_fee",
        "amount_cents": 20_000,
        "payer": "Residents",
        "received_on": "2026-02-02",
        "appeal_id": appeal["id"],
    }
    post(kit, "/payments", fee, "2026-02-02")
    grant = {"granted": True, "decided_on": "2026-02-10"}
    post(kit, f"/appeals/{appeal['id']}/petition", grant, "2026-02-10")
    reverse = {"outcome": "plan_reversed", "decided_on": "2026-02-20"}
    post(kit, f"/appeals/{appeal['id']}/decision", reverse, "2026-02-20")


@pytest.fixture
def example(kit: Kit) -> dict[str, dict[str, str]]:
    county, city = kit.lgu(), kit.lgu(kind="city")
    # on time throughout: noticed 01-08 (due 01-15), decided 01-20, notice of it 01-22
    plan(
        kit,
        county,
        "2026-01-05",
        notice="2026-01-08",
        decided="2026-01-20",
        decision_notice="2026-01-22",
    )
    # neither noticed nor decided: deemed approved after Monday 03-09, nobody told
    plan(kit, county, "2026-01-06")
    # notice due Tuesday 01-20 (Saturday 01-17, then Martin Luther King Jr. Day) mailed 02-02;
    # decided 02-10, its notice due 02-20 mailed 03-02
    plan(
        kit,
        county,
        "2026-01-07",
        notice="2026-02-02",
        decided="2026-02-10",
        decision_notice="2026-03-02",
    )
    # on time, then reversed by the board
    reversed_plan = plan(
        kit,
        county,
        "2026-01-12",
        notice="2026-01-13",
        decided="2026-01-20",
        decision_notice="2026-01-21",
    )
    reverse_on_appeal(kit, reversed_plan["id"])
    # the day before the period: not counted
    plan(kit, county, "2025-12-31")
    # the other LGU's plan on the period's last day, on time
    plan(
        kit,
        city,
        "2026-01-31",
        notice="2026-02-02",
        decided="2026-02-05",
        decision_notice="2026-02-06",
    )
    return {"county": county, "city": city}


def report(kit: Kit, day: str = AS_OF, token: str | None = None, **query: str) -> Any:
    with on(day):
        return kit.api.get("/reports/lgu-compliance", query_string=query or PERIOD, token=token)


def rows_by_lgu(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["lgu_id"]: item for item in items}


def test_the_worked_example_counts_each_lgus_deadlines(kit, example):
    county, city = example["county"], example["city"]
    body = ok(report(kit), 200)
    assert (body["from"], body["to"], body["as_of"]) == ("2026-01-01", "2026-01-31", AS_OF)
    rows = rows_by_lgu(body["items"])
    assert {k: v for k, v in rows[county["id"]].items() if k in ZERO} == {
        "plans_received": 4,
        "decided_in_time": 3,
        "deemed_approved": 1,
        "notices_late": 1,
        "notices_missing": 1,
        "decision_notices_late": 1,
        "decision_notices_missing": 1,
        "reversed_on_appeal": 1,
        "copies_owed": 0,
    }
    assert {k: v for k, v in rows[city["id"]].items() if k in ZERO} == {
        **ZERO,
        "plans_received": 1,
        "decided_in_time": 1,
    }
    assert rows[county["id"]]["lgu_name"].startswith("LGU ")
    names = [item["lgu_name"] for item in body["items"]]
    assert names == sorted(names)


def test_the_report_is_a_csv_too(kit, example):
    county = example["county"]
    with on(AS_OF):
        response = kit.api.get(
            "/reports/lgu-compliance", query_string=PERIOD, headers={"Accept": "text/csv"}
        )
    assert response.status_code == 200 and response.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    (row,) = [r for r in rows if r["lgu_id"] == county["id"]]
    assert list(row) == ["lgu_id", "lgu_name", *ZERO]
    assert [row[k] for k in ZERO] == ["4", "3", "1", "1", "1", "1", "1", "1", "0"]


def test_a_notice_is_missing_the_day_after_it_was_due_not_on_the_day(kit):
    lgu = kit.lgu()
    plan(kit, lgu, "2026-03-02")  # notice due Thursday 03-12
    period = {"from": "2026-03-02", "to": "2026-03-02"}
    for day, missing in (("2026-03-12", 0), ("2026-03-13", 1)):
        rows = rows_by_lgu(ok(report(kit, day, **period), 200)["items"])
        assert rows[lgu["id"]]["notices_missing"] == missing, day
        assert rows[lgu["id"]]["deemed_approved"] == 0


def test_the_report_is_the_boards_alone_and_needs_a_period(kit):
    lgu = kit.lgu()
    problem(report(kit, token=lgu["token"]), 403, "forbidden")
    problem(report(kit, **{"from": "2026-02-01", "to": "2026-01-31"}), 422, "validation_error")
    problem(report(kit, **{"from": "2026-02-01"}), 422, "validation_error")


def test_the_boards_page_shows_the_report(kit, app, example, board_token):
    county = example["county"]
    with on(AS_OF):
        board = signed_in(app.test_client(), board_token)
        page = board.get("/reports/lgu-compliance?from=2026-01-01&to=2026-01-31")
        assert page.status_code == 200
        row = parse(page.get_data(as_text=True)).one("tr", data_lgu_id=county["id"])
        shown = {
            cell.attrs["data-field"]: int(cell.text)
            for cell in row.all("td")
            if "data-field" in cell.attrs
        }
        reported = rows_by_lgu(ok(report(kit), 200)["items"])[county["id"]]
        assert shown == {k: reported[k] for k in ZERO}
        assert shown["plans_received"] == 4 and shown["notices_missing"] == 1
        download = board.get("/reports/lgu-compliance.csv?from=2026-01-01&to=2026-01-31")
        assert download.status_code == 200 and county["id"] in download.get_data(as_text=True)
        assert board.get("/reports/lgu-compliance?from=2026-02-01&to=2026-01-31").status_code == 422
        clerk = signed_in(app.test_client(), county["token"])
        assert clerk.get("/reports/lgu-compliance").status_code == 403


def test_a_revision_does_not_erase_what_the_application_it_superseded_missed(kit):
    """Subd. 1 (c): the LGU never mailed the first application's notice, let it be deemed
    approved and mailed that notice of decision late; a revision counting as new, handled on
    time, is a new application, not a clean record."""
    lgu = kit.lgu()
    first = plan(kit, lgu, "2026-01-05")
    due = kit.get_plan(first["id"])["deadlines"]
    with on("2026-03-30"):
        deemed = kit.get_plan(first["id"])
    assert deemed["outcome"] == "deemed_approved"
    late_notice = "2026-03-30"  # after decision_due + 10 days
    assert late_notice > deemed["deadlines"]["decision_notice_due"] > due["decision_due"]
    post(
        kit,
        f"/plans/{first['id']}/decision-notice",
        mailing(late_notice, plan=first),
        late_notice,
        lgu["token"],
    )
    before = rows_by_lgu(ok(report(kit), 200)["items"])[lgu["id"]]
    expected = {
        **ZERO,
        "plans_received": 1,
        "deemed_approved": 1,
        "notices_missing": 1,
        "decision_notices_late": 1,
    }
    assert {k: v for k, v in before.items() if k in ZERO} == expected
    # final from 04-15 (the window closes 04-14): a revision counting as new, handled on time
    token = lgu["token"]
    revision = {"area_sqft": 20_000, "displacement_ft": 0, "received_on": "2026-04-15"}
    post(kit, f"/plans/{first['id']}/revisions", revision, "2026-04-15", token)
    post(
        kit, f"/plans/{first['id']}/notices", mailing("2026-04-16", plan=first), "2026-04-16", token
    )
    decided = decision_body("approved", "2026-05-19")  # after the 30-day comment period
    post(kit, f"/plans/{first['id']}/decision", decided, "2026-05-19", token)
    post(
        kit,
        f"/plans/{first['id']}/decision-notice",
        mailing("2026-05-19", plan=first),
        "2026-05-19",
        token,
    )
    after = rows_by_lgu(ok(report(kit), 200)["items"])[lgu["id"]]
    assert {k: v for k, v in after.items() if k in ZERO} == {**expected, "decided_in_time": 1}
