"""A petition whose filing fee is not mailed within the appeal window (Subd. 9; docs/domain.md §4
"Finality and status", "Fee and security"), on both databases.

Subd. 9: appeal "may be obtained by mailing a petition and payment of a filing fee of $200 ...
within 15 days"; "If appeal is not sought within 15 days, the decision becomes final."  The plan
(``noticed``): 9,000 sq ft at 2:1 approved 2026-10-01, its notice of decision mailed Tuesday
2026-10-20, so its window ends Wednesday 2026-11-04.  A petition postmarked and received on the
window's last day holds the plan ``appealed`` while its fee may still be mailed; from 11-05, with
no fee recorded, it obtained no appeal and the approval is final, as with no petition.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.api.kit import Kit, mailing, ok, on, problem
from tests.api.web_kit import parse, signed_in

FEE = 20_000
LAST_DAY = "2026-11-04"
DAY_AFTER = "2026-11-05"
#: the impact's blockers while the plan is not final, and once it is (its credits still reserved)
HELD = ["decision_not_final", "credits_not_withdrawn"]
NOT_WITHDRAWN = ["credits_not_withdrawn"]


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def noticed(kit: Kit, lgu: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The approved plan, its notice of decision mailed 2026-10-20, and 18,000 sq ft reserved
    for it (what its withdrawal needs)."""
    with on("2026-10-01"):
        bank = kit.funded_account(day="2026-10-01", service_area=5, unrestricted=20_000)
        plan = kit.approved_plan(lgu, "2026-10-01")
        reservation = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
    with on("2026-10-20"):
        path = f"/plans/{plan['id']}/decision-notice"
        ok(kit.api.post(path, mailing("2026-10-20", plan=plan), token=lgu["token"]))
    return plan, reservation


def petition(kit: Kit, plan: dict[str, Any], day: str = LAST_DAY) -> dict[str, Any]:
    body = {
        "petitioner_kind": "owner",
        "petitioner_name": "Ann Owner",
        "petitioner_address": "1 Lake Rd, Buffalo, MN",
        "postmarked_on": day,
        "received_on": day,
        "filing_fee_cents": FEE,
    }
    with on(day):
        return dict(ok(kit.api.post(f"/plans/{plan['id']}/appeals", body)))


def pay_fee(kit: Kit, appeal: dict[str, Any], received: str, postmarked: str) -> Any:
    body = {
        "kind": "appeal_filing_fee",
        "amount_cents": FEE,
        "payer": "Ann Owner",
        "received_on": received,
        "postmarked_on": postmarked,
        "appeal_id": appeal["id"],
    }
    with on(received):
        return kit.api.post("/payments", body)


def seen(kit: Kit, plan: dict[str, Any], appeal: dict[str, Any], day: str) -> tuple[Any, ...]:
    """(the plan's status, why its impact may not proceed yet, the appeal's status) on ``day``."""
    with on(day):
        shown = kit.get_plan(plan["id"])
        appeal_now = ok(kit.api.get(f"/appeals/{appeal['id']}"), 200)
    (listed,) = shown["appeals"]
    assert listed["status"] == appeal_now["status"]  # the plan shows it as the appeal does
    blockers = [blocker["code"] for blocker in shown["impact_blockers"]]
    return shown["status"], blockers, appeal_now["status"]


def withdraw(kit: Kit, lgu: dict[str, str], plan: dict[str, Any], reservation: dict, day: str):
    with on(day):
        path = f"/plans/{plan['id']}/withdrawals"
        return kit.api.post(path, {"reservation_ids": [reservation["id"]]}, token=lgu["token"])


def test_a_petition_whose_fee_is_not_mailed_in_the_window_leaves_the_approval_final(kit):
    lgu = kit.lgu()
    plan, reservation = noticed(kit, lgu)
    appeal = petition(kit, plan)
    late = problem(pay_fee(kit, appeal, DAY_AFTER, DAY_AFTER), 422, "appeal_window_closed")
    assert late["ends"] == LAST_DAY

    # on the window's last day the fee may still be mailed: the petition holds the plan
    assert seen(kit, plan, appeal, LAST_DAY) == ("appealed", HELD, "petition_received")
    problem(withdraw(kit, lgu, plan, reservation, LAST_DAY), 409, "conflict")

    # from the day after, no fee mailed by 11-04 is recorded: no appeal was obtained
    assert seen(kit, plan, appeal, DAY_AFTER) == ("final", NOT_WITHDRAWN, "no_fee_in_window")
    with on(DAY_AFTER):
        shown = kit.get_plan(plan["id"])
        granted = kit.api.post(
            f"/appeals/{appeal['id']}/petition", {"granted": True, "decided_on": DAY_AFTER}
        )
    assert shown["deadlines"]["appeal_window_ends"] == LAST_DAY
    assert shown["outcome"] == "approved"
    refused = problem(granted, 422, "invalid_fee")
    assert refused["detail"].startswith("the $200.00 filing fee has not been paid")
    assert f"none mailed by {LAST_DAY}, when the appeal window closed" in refused["detail"]
    withdrawn = ok(withdraw(kit, lgu, plan, reservation, DAY_AFTER))
    assert withdrawn["withdrawn_sqft"] == 18_000
    # weeks later the impact may proceed: the credits are withdrawn, the approval final
    assert seen(kit, plan, appeal, "2026-12-07") == ("final", [], "no_fee_in_window")
    with on("2026-12-07"):
        assert kit.get_plan(plan["id"])["impact_may_proceed"] is True


def test_a_fee_mailed_in_the_window_that_arrives_after_it_reopens_the_plan(kit):
    """A fee postmarked on the window's last day is timely however late it arrives: booked on
    11-09, the petition awaits the board again (as a petition mailed in time that arrives late
    does), and the board may grant it."""
    lgu = kit.lgu()
    plan, _reservation = noticed(kit, lgu)
    appeal = petition(kit, plan)
    assert seen(kit, plan, appeal, "2026-11-06") == ("final", NOT_WITHDRAWN, "no_fee_in_window")
    paid = ok(pay_fee(kit, appeal, "2026-11-09", LAST_DAY))
    assert paid["postmarked_on"] == LAST_DAY
    assert seen(kit, plan, appeal, "2026-11-09") == ("appealed", HELD, "petition_received")
    with on("2026-11-10"):
        body = {"granted": True, "decided_on": "2026-11-10"}
        assert ok(kit.api.post(f"/appeals/{appeal['id']}/petition", body))["status"] == "granted"
    assert seen(kit, plan, appeal, "2026-11-10") == ("appealed", HELD, "granted")


def test_a_fee_reversed_as_booked_in_error_after_the_window_leaves_no_appeal(kit):
    """The board reverses a fee that was another petition's: the petition it was booked on then
    has none mailed in the window, and holds the plan no longer once the window closed."""
    lgu = kit.lgu()
    plan, _reservation = noticed(kit, lgu)
    appeal = petition(kit, plan, "2026-10-30")
    fee = ok(pay_fee(kit, appeal, "2026-10-30", "2026-10-30"))
    assert seen(kit, plan, appeal, DAY_AFTER) == ("appealed", HELD, "petition_received")
    with on(DAY_AFTER):
        reason = {"reason": "booked on the wrong petition"}
        ok(kit.api.post(f"/payments/{fee['id']}/reverse", reason))
    assert seen(kit, plan, appeal, DAY_AFTER) == ("final", NOT_WITHDRAWN, "no_fee_in_window")


def test_a_denied_petition_without_its_fee_reads_denied(kit):
    """A denial checks no fee: the board may still deny a petition that obtained no appeal, and
    it then reads as denied."""
    lgu = kit.lgu()
    plan, _reservation = noticed(kit, lgu)
    appeal = petition(kit, plan)
    with on(DAY_AFTER):
        body = {"granted": False, "decided_on": DAY_AFTER, "grounds": ["trivial"]}
        ok(kit.api.post(f"/appeals/{appeal['id']}/petition", body))
    assert seen(kit, plan, appeal, DAY_AFTER) == ("final", NOT_WITHDRAWN, "petition_denied")


def test_the_lgu_compliance_report_and_the_plan_page_show_the_approval_final(
    app: Flask, kit, board_token
):
    lgu = kit.lgu()
    plan, _reservation = noticed(kit, lgu)
    appeal = petition(kit, plan)
    period = {"from": "2026-10-01", "to": "2026-10-31"}
    with on(DAY_AFTER):
        items = ok(kit.api.get("/reports/lgu-compliance", query_string=period), 200)["items"]
        browser = signed_in(app.test_client(), board_token)
        plan_page = browser.get(f"/plans/{plan['id']}")
        appeals_page = browser.get(f"/plans/{plan['id']}/appeals")
    (row,) = [item for item in items if item["lgu_id"] == lgu["id"]]
    assert (row["plans_received"], row["decided_in_time"], row["reversed_on_appeal"]) == (1, 1, 0)
    document = parse(plan_page.get_data(as_text=True))
    assert document.one("dd", id="plan-status").text.startswith("final")
    appeal_row = document.one("table", id="appeals").one("tr", data_appeal_id=appeal["id"])
    assert appeal_row.all("td")[-1].text == "no fee in window"
    assert "no filing fee mailed within the appeal window" in appeal_row.text
    board = parse(appeals_page.get_data(as_text=True))
    article = board.one("article", data_appeal_id=appeal["id"])
    assert article.one("dd", data_field="status").text == "no fee in window"
    assert "no appeal was obtained" in article.one("dd", data_field="petition").text
