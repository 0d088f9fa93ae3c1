"""A petition mailed within the appeal window of an application that a revision counting as new
(Subd. 6 (c)) superseded, reaching the board after the revision was recorded, on both databases.

Subd. 9 counts the 15 days from the notice's postmark to the petition's *mailing*: a revision
counting as new is received once the approval is final by the date (the day after its window),
but a petition postmarked on the window's last day may arrive later.  It appeals the superseded
application, checked with that application's facts as they stood.

The plan (``final_approved_plan``): 9,000 sq ft at 2:1 approved Monday 2026-06-08, its notice of
decision mailed 06-09, its window ending Wednesday 06-24, 18,000 sq ft withdrawn 06-09.  A
revision to 9,900 sq ft (10% larger: application 2) is received and recorded Friday 06-26.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.api.kit import Kit, decision_body, mailing, ok, on, problem
from tests.api.test_appeals import FEE, grant, pay, petition, rule
from tests.api.test_plans_revisions import (
    act,
    approved_and_noticed,
    blockers,
    final_approved_plan,
    read,
    revise,
)
from tests.api.web_kit import parse, signed_in

LAST_DAY = "2026-06-24"  # the superseded approval's window's last day
DAY_AFTER = "2026-06-25"


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def superseded(kit: Kit, lgu: dict) -> tuple[dict, dict]:
    """The approved plan and its revision counting as new, recorded 2026-06-26."""
    plan, bank = final_approved_plan(kit, lgu)
    revision = ok(revise(kit, plan, lgu, 9_900, "2026-06-26"))
    assert revision["application_number"] == 2
    return plan, bank


def compliance(kit: Kit, lgu: dict, day: str) -> dict[str, Any]:
    period = {"from": "2026-06-01", "to": "2026-06-30"}
    with on(day):
        items = ok(kit.api.get("/reports/lgu-compliance", query_string=period), 200)["items"]
    (row,) = [item for item in items if item["lgu_id"] == lgu["id"]]
    return dict(row)


@pytest.mark.parametrize(
    ("postmarked", "status", "code"),
    [(LAST_DAY, 201, None), (DAY_AFTER, 422, "appeal_window_closed")],
)
def test_a_petition_postmarked_by_the_superseded_windows_last_day_appeals_that_application(
    kit: Kit, postmarked: str, status: int, code: str | None
) -> None:
    """Received 06-29, after the revision of 06-26: postmarked 06-24 it is timely and appeals
    application 1 (the plan is appealed and is not revised again meanwhile); postmarked 06-25 it
    is late, as it would have been before the revision."""
    lgu = kit.lgu()
    plan, _bank = superseded(kit, lgu)
    response = petition(kit, plan, postmarked=postmarked, received="2026-06-29")
    if code is not None:
        body = problem(response, status, code)
        assert body["ends"] == LAST_DAY and LAST_DAY in body["detail"]
        shown = read(kit, plan, "2026-06-29")
        assert (shown["status"], shown["appeals"]) == ("received", [])
        return
    appeal = ok(response, status)
    ok(pay(kit, appeal, "appeal_filing_fee", FEE, "2026-06-29"))  # in the petition's envelope
    with on("2026-06-29"):
        appeal = ok(kit.api.get(f"/appeals/{appeal['id']}"), 200)
    assert (appeal["application_number"], appeal["status"]) == (1, "petition_received")
    shown = read(kit, plan, "2026-06-29")
    assert (shown["application_number"], shown["status"], shown["outcome"]) == (2, "appealed", None)
    assert [a["id"] for a in shown["appeals"]] == [appeal["id"]]
    assert shown["applications"][0]["outcome"] == "approved"  # until the board decides
    # while it awaits the board the plan is not revised again, in place or as new
    problem(revise(kit, plan, lgu, 9_950, "2026-06-29"), 409, "conflict")
    problem(revise(kit, plan, lgu, 12_000, "2026-06-29"), 409, "conflict")
    assert read(kit, plan, "2026-06-29")["impact"]["area_sqft"] == 9_900


def test_a_petition_on_the_superseded_application_holds_the_plan_only_with_its_fee(
    kit: Kit,
) -> None:
    """Subd. 9: an appeal is obtained by mailing the petition and the fee within the window,
    which closed 06-24, before the revision.  The petition postmarked 06-24 reaches the board
    06-29 with no fee: it obtained no appeal and the plan is not appealed.  The fee, postmarked
    06-24 too, is recorded 07-01: the plan is appealed from then on."""
    lgu = kit.lgu()
    plan, _bank = superseded(kit, lgu)
    appeal = ok(petition(kit, plan, postmarked=LAST_DAY, received="2026-06-29"))
    shown = read(kit, plan, "2026-06-29")
    assert (appeal["application_number"], appeal["status"]) == (1, "no_fee_in_window")
    assert (shown["status"], [a["status"] for a in shown["appeals"]]) == (
        "received",
        ["no_fee_in_window"],
    )
    body = {
        "kind": "appeal_filing_fee",
        "amount_cents": FEE,
        "payer": "Residents",
        "received_on": "2026-07-01",
        "postmarked_on": LAST_DAY,
        "appeal_id": appeal["id"],
    }
    with on("2026-07-01"):
        ok(kit.api.post("/payments", body))
    shown = read(kit, plan, "2026-07-01")
    assert (shown["status"], [a["status"] for a in shown["appeals"]]) == (
        "appealed",
        ["petition_received"],
    )


def test_a_reversal_of_the_superseded_approval_returns_its_credits_and_leaves_the_revisions_record(
    app: Flask, kit: Kit
) -> None:
    """Application 2 is approved 06-26 (its notice mailed 06-29, its window to 07-14), 1,800 sq
    ft withdrawn for it 06-30 and 500 reserved.  The petition on application 1, postmarked
    06-24, arrives 07-01 and is reversed 07-06: the 18,000 sq ft withdrawn under application 1
    return to their lots; application 2's decision, withdrawal and reservation stand."""
    lgu = kit.lgu()
    plan, bank = superseded(kit, lgu)
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-26", plan=plan), "2026-06-26"))
    second = decision_body("approved", "2026-06-26")
    ok(act(kit, plan, lgu, "decision", second, "2026-06-26"))
    ok(act(kit, plan, lgu, "decision-notice", mailing("2026-06-29", plan=plan), "2026-06-29"))
    with on("2026-06-30"):
        more = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 1_800)
        held = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 500)
    ok(act(kit, plan, lgu, "withdrawals", {"reservation_ids": [more["id"]]}, "2026-06-30"))
    first_withdrawal = read(kit, plan, "2026-06-30")["withdrawals"][0]
    with on("2026-07-01"):
        before = kit.available(bank["id"], bank["unrestricted_class"])
    appeal = ok(petition(kit, plan, postmarked=LAST_DAY, received="2026-07-01"))
    assert appeal["application_number"] == 1
    ok(pay(kit, appeal, "appeal_filing_fee", FEE, "2026-07-01"))
    waiting = read(kit, plan, "2026-07-01")
    assert (waiting["status"], waiting["outcome"]) == ("appealed", "approved")
    ok(grant(kit, appeal, "2026-07-02"))
    decided = ok(rule(kit, appeal, "2026-07-06"))
    assert decided["decision"]["outcome"] == "plan_reversed"

    shown = read(kit, plan, "2026-07-06")
    # the plan stands on application 2's own approval, in its own window
    assert (shown["application_number"], shown["status"], shown["outcome"]) == (
        2,
        "approved",
        "approved",
    )
    assert shown["reversed_on_appeal"] is False and shown["revision_denied"] is False
    assert shown["decision"]["decided_on"] == "2026-06-26"
    assert shown["decision"]["resolution"] == second["resolution"]
    assert shown["decision_notice"]["mailed_on"] == "2026-06-29"
    [earlier] = shown["applications"]
    assert (earlier["outcome"], earlier["decision"]["outcome"]) == ("denied", "approved")
    # only what was withdrawn under application 1 comes back
    assert [
        (w["withdrawn_sqft"], w["reversal_transaction_id"] is None) for w in shown["withdrawals"]
    ] == [
        (18_000, False),
        (1_800, True),
    ]
    statuses = {r["id"]: (r["status"], r["reversed_on_appeal"]) for r in shown["reservations"]}
    assert statuses[held["id"]] == ("pending", False)
    with on("2026-07-06"):
        assert kit.available(bank["id"], bank["unrestricted_class"]) == before + 18_000
    assert blockers(shown)["credits_not_withdrawn"] == "1,800 of 19,800 sq ft of credits withdrawn"
    # the LGU's record: application 1 was reversed on appeal
    assert compliance(kit, lgu, "2026-07-06")["reversed_on_appeal"] == 1

    # the pages say which application the appeal was of, and that it was reversed
    with on("2026-07-06"):
        client = signed_in(app.test_client(), lgu["token"])
        page = parse(client.get(f"/plans/{plan['id']}").get_data(as_text=True))
        certificate = client.get(
            f"/plans/{plan['id']}/withdrawals/{first_withdrawal['id']}/certificate"
        )
        board = signed_in(app.test_client(), kit.api.token)
        appeals_page = parse(board.get(f"/plans/{plan['id']}/appeals").get_data(as_text=True))
    row = page.one("table", id="appeals").one("tr", data_appeal_id=appeal["id"])
    assert row.one(data_field="application").text == "of application 1"
    earlier_row = page.one("table", id="applications").one("tr", data_application="1")
    assert earlier_row.one(data_field="outcome-on-appeal").text == "denied on appeal"
    assert certificate.status_code == 200
    cert = parse(certificate.get_data(as_text=True))
    assert "On appeal" in cert.one(data_field="reversal_transaction_id").text
    shown_appeal = appeals_page.one("article", data_appeal_id=appeal["id"])
    assert "application 1" in shown_appeal.one(data_field="application").text


def test_an_upheld_appeal_of_the_superseded_approval_changes_nothing(kit: Kit) -> None:
    """Upheld, the plan is back where it was; the revision goes on and a petition on its own
    decision appeals application 2, as before."""
    lgu = kit.lgu()
    plan, bank = superseded(kit, lgu)
    with on("2026-06-29"):
        available = kit.available(bank["id"], bank["unrestricted_class"])
    appeal = ok(petition(kit, plan, postmarked=LAST_DAY, received="2026-06-29"))
    ok(grant(kit, appeal, "2026-06-30"))
    ok(rule(kit, appeal, "2026-07-01", "plan_upheld"))
    shown = read(kit, plan, "2026-07-01")
    assert (shown["status"], shown["outcome"], shown["reversed_on_appeal"]) == (
        "received",
        None,
        False,
    )
    assert shown["applications"][0]["outcome"] == "approved"
    assert [w["reversal_transaction_id"] for w in shown["withdrawals"]] == [None]
    with on("2026-07-01"):
        assert kit.available(bank["id"], bank["unrestricted_class"]) == available
    # the revision goes on: decided, noticed, and appealed on its own decision
    ok(act(kit, plan, lgu, "notices", mailing("2026-07-01", plan=plan), "2026-07-01"))
    ok(act(kit, plan, lgu, "decision", decision_body("approved", "2026-07-01"), "2026-07-01"))
    ok(act(kit, plan, lgu, "decision-notice", mailing("2026-07-02", plan=plan), "2026-07-02"))
    own = ok(petition(kit, plan, postmarked="2026-07-06", received="2026-07-08"))
    assert own["application_number"] == 2
    shown = read(kit, plan, "2026-07-08")
    assert (shown["status"], shown["outcome"]) == ("appealed", "approved")
    # and one mailed after application 2's window is late against application 2
    late = petition(kit, plan, postmarked="2026-07-20", received="2026-07-21")
    assert problem(late, 422, "appeal_window_closed")["ends"] == "2026-07-17"


def test_a_reversal_of_the_superseded_approval_after_the_revision_was_denied_leaves_no_approval(
    kit: Kit,
) -> None:
    """Application 2 is denied 06-29: application 1's approval stands (revision_denied) until
    the petition on it, postmarked 06-24 and received 06-30, is reversed 07-06.  Then nothing
    approved stands: the plan is denied and its 18,000 sq ft return.  The 500 sq ft reserved
    06-26 for application 2 stay reserved, as on any denial (application 2's denial may itself
    be appealed): the holder voids them, or they expire."""
    lgu = kit.lgu()
    plan, bank = superseded(kit, lgu)
    with on("2026-06-26"):  # application 2 needs 1,800 sq ft more than were withdrawn
        held = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 500)
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-29", plan=plan), "2026-06-29"))
    ok(act(kit, plan, lgu, "decision", decision_body("denied", "2026-06-29"), "2026-06-29"))
    standing = read(kit, plan, "2026-06-29")
    assert (standing["outcome"], standing["status"], standing["revision_denied"]) == (
        "approved",
        "final",
        True,
    )
    with on("2026-06-30"):
        before = kit.available(bank["id"], bank["unrestricted_class"])
    appeal = ok(petition(kit, plan, postmarked=LAST_DAY, received="2026-06-30"))
    assert appeal["application_number"] == 1
    ok(pay(kit, appeal, "appeal_filing_fee", FEE, "2026-06-30"))
    assert read(kit, plan, "2026-06-30")["status"] == "appealed"
    ok(grant(kit, appeal, "2026-07-01"))
    ok(rule(kit, appeal, "2026-07-06"))
    shown = read(kit, plan, "2026-07-06")
    assert (shown["outcome"], shown["revision_denied"], shown["impact_may_proceed"]) == (
        "denied",
        False,
        False,
    )
    assert [w["reversal_transaction_id"] is None for w in shown["withdrawals"]] == [False]
    with on("2026-07-06"):
        assert kit.available(bank["id"], bank["unrestricted_class"]) == before + 18_000
    statuses = {r["id"]: (r["status"], r["reversed_on_appeal"]) for r in shown["reservations"]}
    assert statuses[held["id"]] == ("pending", False)
    assert "not_approved" in blockers(shown)
    # a denied plan is not revised
    problem(revise(kit, plan, lgu, 12_000, "2026-07-20"), 409, "conflict")


def test_a_reversal_of_a_superseded_revisions_approval_returns_only_what_was_withdrawn_under_it(
    kit: Kit,
) -> None:
    """Application 2 (approved 06-26, noticed 06-29, window to 07-14, 1,800 sq ft withdrawn 06-30)
    is superseded by application 3, received 07-15 (600 ft away).  The petition on application
    2, postmarked 07-14 and received 07-16, is reversed: its 1,800 sq ft return, application 1's
    18,000 stand, and application 1's approval is the one standing when application 3 is
    denied."""
    lgu = kit.lgu()
    plan, bank = superseded(kit, lgu)
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-26", plan=plan), "2026-06-26"))
    ok(act(kit, plan, lgu, "decision", decision_body("approved", "2026-06-26"), "2026-06-26"))
    ok(act(kit, plan, lgu, "decision-notice", mailing("2026-06-29", plan=plan), "2026-06-29"))
    with on("2026-06-30"):
        more = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 1_800)
    ok(act(kit, plan, lgu, "withdrawals", {"reservation_ids": [more["id"]]}, "2026-06-30"))
    third = ok(revise(kit, plan, lgu, 9_900, "2026-07-15", feet=600))
    assert third["application_number"] == 3
    with on("2026-07-16"):
        before = kit.available(bank["id"], bank["unrestricted_class"])
    appeal = ok(petition(kit, plan, postmarked="2026-07-14", received="2026-07-16"))
    assert appeal["application_number"] == 2
    ok(grant(kit, appeal, "2026-07-17"))
    ok(rule(kit, appeal, "2026-07-20"))
    shown = read(kit, plan, "2026-07-20")
    assert [(a["number"], a["outcome"]) for a in shown["applications"]] == [
        (1, "approved"),
        (2, "denied"),
    ]
    assert [
        (w["withdrawn_sqft"], w["reversal_transaction_id"] is None) for w in shown["withdrawals"]
    ] == [
        (18_000, True),
        (1_800, False),
    ]
    with on("2026-07-20"):
        assert kit.available(bank["id"], bank["unrestricted_class"]) == before + 1_800
    ok(act(kit, plan, lgu, "notices", mailing("2026-07-20", plan=plan), "2026-07-20"))
    ok(act(kit, plan, lgu, "decision", decision_body("denied", "2026-07-20"), "2026-07-20"))
    shown = read(kit, plan, "2026-07-20")
    assert (shown["outcome"], shown["status"], shown["revision_denied"]) == (
        "approved",
        "final",
        True,
    )
    assert shown["impact"]["area_sqft"] == 9_000 and shown["impact_may_proceed"] is True


def test_a_late_petition_owes_the_security_its_application_required_not_the_new_ones(
    kit: Kit,
) -> None:
    """Application 1 required no security; on 06-26 the LGU requires $300 of application 2's
    petitioners.  The petition on application 1 (postmarked 06-24, received 06-29) is granted
    with its fee alone; one on application 2 owes the $300."""
    lgu = kit.lgu()
    plan, _bank = superseded(kit, lgu)
    ok(act(kit, plan, lgu, "appeal-security", {"amount_cents": 30_000}, "2026-06-26"))
    assert read(kit, plan, "2026-06-26")["appeal_security_required_cents"] == 30_000
    appeal = ok(petition(kit, plan, postmarked=LAST_DAY, received="2026-06-29"))
    assert (appeal["application_number"], appeal["security_required_cents"]) == (1, None)
    [listed] = read(kit, plan, "2026-06-29")["appeals"]
    assert listed["security_required_cents"] is None
    granted = ok(grant(kit, appeal, "2026-06-30"))
    assert granted["petition"]["granted"] is True


def timeline_states(app: Flask, token: str, plan: dict, day: str) -> dict[str, str]:
    """The plan page's timeline as the LGU reads it on ``day``: each step's state, by name."""
    with on(day):
        client = signed_in(app.test_client(), token)
        page = parse(client.get(f"/plans/{plan['id']}").get_data(as_text=True))
    rows = page.one("table", id="timeline").one("tbody").all("tr")
    return {row.one("th").text: row.attrs["data-state"] for row in rows}


def test_the_timeline_shows_the_appeal_of_the_superseded_application_marked_as_its(
    app: Flask, kit: Kit
) -> None:
    """The petition on application 1, received 06-29 after the revision of 06-26, is on the plan
    page's timeline with its deadlines, marked as of application 1 and numbered as the appeals
    table numbers it; an appeal of application 2's own decision follows it."""
    lgu = kit.lgu()
    plan, _bank = superseded(kit, lgu)
    earlier = ok(petition(kit, plan, postmarked=LAST_DAY, received="2026-06-29"))
    states = timeline_states(app, lgu["token"], plan, "2026-06-29")
    assert states["Appeal 1 (of application 1): petition received"] == "recorded"
    assert states["Appeal 1 (of application 1): board decides whether to grant"] == "open"

    ok(grant(kit, earlier, "2026-06-30"))
    ok(rule(kit, earlier, "2026-07-01", "plan_upheld"))
    ok(act(kit, plan, lgu, "notices", mailing("2026-07-01", plan=plan), "2026-07-01"))
    ok(act(kit, plan, lgu, "decision", decision_body("approved", "2026-07-01"), "2026-07-01"))
    ok(act(kit, plan, lgu, "decision-notice", mailing("2026-07-02", plan=plan), "2026-07-02"))
    own = ok(petition(kit, plan, postmarked="2026-07-06", received="2026-07-08"))
    states = timeline_states(app, lgu["token"], plan, "2026-07-08")
    assert states["Appeal 1 (of application 1): board decides whether to grant"] == "met"
    assert states["Appeal 1 (of application 1): board decides the appeal"] == "met"
    assert states["Appeal 2: petition received"] == "recorded"
    with on("2026-07-08"):
        client = signed_in(app.test_client(), lgu["token"])
        page = parse(client.get(f"/plans/{plan['id']}").get_data(as_text=True))
    table = page.one("table", id="appeals")
    assert table.one("tr", data_appeal_id=earlier["id"]).one("th").text.startswith("1")
    assert table.one("tr", data_appeal_id=own["id"]).one("th").text == "2"


@pytest.mark.parametrize("order", ["superseded_first", "revision_first"])
def test_both_approvals_reversed_on_appeal_void_the_reservations_whatever_the_order(
    kit: Kit, order: str
) -> None:
    """Approved 06-08 (9,000 sq ft at 2:1), revised to 9,900 (new) and approved 06-26, 500 sq
    ft reserved 06-30.  The board reverses both approvals, the superseded one on a petition
    mailed in its window: once neither stands, nothing can take the reservation and it is
    voided, whichever approval was reversed first (it stays while either stands)."""
    lgu = kit.lgu()
    plan, bank = approved_and_noticed(kit, lgu)
    ok(revise(kit, plan, lgu, 9_900, "2026-06-26"))
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-26", plan=plan), "2026-06-26"))
    ok(act(kit, plan, lgu, "decision", decision_body("approved", "2026-06-26"), "2026-06-26"))
    ok(act(kit, plan, lgu, "decision-notice", mailing("2026-06-29", plan=plan), "2026-06-29"))
    with on("2026-06-30"):
        held = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 500)
        available = kit.available(bank["id"], bank["unrestricted_class"])

    def status(day: str) -> str:
        with on(day):
            return str(ok(kit.api.get(f"/reservations/{held['id']}"), 200)["status"])

    if order == "superseded_first":
        first = ok(petition(kit, plan, postmarked="2026-06-24", received="2026-07-01"))
        ok(grant(kit, first, "2026-07-02"))
        ok(rule(kit, first, "2026-07-06"))
        assert status("2026-07-06") == "pending"  # the revision's approval stands
        second = ok(petition(kit, plan, postmarked="2026-07-07", received="2026-07-08"))
        ok(grant(kit, second, "2026-07-09"))
        ok(rule(kit, second, "2026-07-10"))
    else:
        second = ok(petition(kit, plan, postmarked="2026-07-06", received="2026-07-08"))
        ok(grant(kit, second, "2026-07-09"))
        ok(rule(kit, second, "2026-07-10"))
        assert status("2026-07-10") == "pending"  # the superseded approval stands
        first = ok(petition(kit, plan, postmarked="2026-06-24", received="2026-07-13"))
        assert first["application_number"] == 1
        ok(grant(kit, first, "2026-07-14"))
        ok(rule(kit, first, "2026-07-15"))
    shown = read(kit, plan, "2026-07-20")
    assert (shown["outcome"], shown["status"]) == ("denied", "final")
    assert status("2026-07-20") == "voided"
    with on("2026-07-20"):
        assert kit.available(bank["id"], bank["unrestricted_class"]) == available + 500
