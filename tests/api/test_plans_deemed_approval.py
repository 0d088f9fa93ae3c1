"""A deemed approval others relied on stands (Minn. Stat. 15.99; Subd. 6, 7, 9; docs/domain.md
§4 "A deemed approval relied on").

A small plan received Monday 2026-06-08 is due Friday 2026-08-07 and deemed approved from
2026-08-08.  A decision, an extension or a notice of application dated on or before 08-07 may
still be recorded later, while nothing relied on the deemed approval; once a notice of it was
mailed, a petition filed, credits withdrawn, a security drawn on or the plan revised, it is
``conflict`` naming what relied on it, and the plan is left as it was.  Dated 08-08 or later, it
is ``deadline_passed`` whatever relied on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.api.kit import Kit, decision_body, mailing, ok, on, problem
from tests.api.test_appeals import grant, petition, rule
from tests.api.test_money import draw, hold

RECEIVED, DUE, DEEMED = "2026-06-08", "2026-08-07", "2026-08-08"
#: the day the reliance is recorded, and the day the late act is
RELIED, LATE = "2026-08-10", "2026-09-01"


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def small_plan(kit: Kit, lgu: dict, *, summary: bool = True, **extra: Any) -> dict:
    """9,000 sq ft received ``RECEIVED``, its summary mailed that day (Subd. 6 (b)) unless not."""
    with on(RECEIVED):
        plan = kit.plan(lgu, received_on=RECEIVED, area_sqft=9_000, **extra)
        if summary:
            kit.mail_summary(lgu, plan, RECEIVED)
        return plan


def read(kit: Kit, plan: dict, day: str = LATE) -> dict:
    with on(day):
        return kit.get_plan(plan["id"])


def act(kit: Kit, plan: dict, lgu: dict, path: str, body: dict, day: str = LATE) -> Any:
    with on(day):
        return kit.api.post(f"/plans/{plan['id']}/{path}", body, token=lgu["token"])


# --- what relies on a deemed approval ---------------------------------------------------------
# each makes the plan (of the method it needs), relies on its deemed approval and answers the
# plan and what a refusal names


def nothing(kit: Kit, lgu: dict) -> tuple[dict, str | None]:
    return small_plan(kit, lgu), None


def notice_of_decision(kit: Kit, lgu: dict) -> tuple[dict, str | None]:
    """Mailed Monday 08-10: the window ends Tuesday 08-25, the plan is final from 08-26."""
    plan = small_plan(kit, lgu)
    ok(act(kit, plan, lgu, "decision-notice", mailing(RELIED, plan=plan), RELIED))
    assert read(kit, plan)["status"] == "final"
    return plan, f"the notice of decision mailed {RELIED}"


def appeal_upheld(kit: Kit, lgu: dict) -> tuple[dict, str | None]:
    """With no notice mailed, the owner petitions 08-12; the board upholds the approval."""
    plan = small_plan(kit, lgu)
    owner = {"kind": "owner", "residents": None}
    appeal = ok(petition(kit, plan, postmarked="2026-08-12", received="2026-08-13", **owner))
    ok(grant(kit, appeal, "2026-08-20"))
    ok(rule(kit, appeal, "2026-08-27", "plan_upheld"))
    return plan, "the petition postmarked 2026-08-12"


def withdrawal(kit: Kit, lgu: dict) -> tuple[dict, str | None]:
    with on(RECEIVED):
        bank = kit.funded_account(day=RECEIVED, service_area=5, unrestricted=20_000)
    plan = small_plan(kit, lgu)
    with on(RECEIVED):
        reserved = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
    body = {"reservation_ids": [reserved["id"]]}
    withdrawn = ok(act(kit, plan, lgu, "withdrawals", body, RELIED))
    return plan, f"withdrawal {withdrawn['id']}"


def security_drawn(kit: Kit, lgu: dict) -> tuple[dict, str | None]:
    plan = small_plan(kit, lgu, method="project_specific")
    security = ok(hold(kit, plan, token=lgu["token"], issued_on=RECEIVED))
    ok(draw(kit, security, RELIED, 1_000, token=lgu["token"]))
    return plan, f"on security {security['id']}"


def revised(kit: Kit, lgu: dict) -> tuple[dict, str | None]:
    """A revision of the approved plan under 10% larger (not a new application)."""
    plan = small_plan(kit, lgu)
    body = {"area_sqft": 9_500, "displacement_ft": 0, "received_on": RELIED}
    revision = ok(act(kit, plan, lgu, "revisions", body, RELIED))
    return plan, f"revision {revision['id']} received {RELIED}"


RELIANCES: dict[str, Callable[[Kit, dict], tuple[dict, str | None]]] = {
    "nothing": nothing,
    "notice_of_decision": notice_of_decision,
    "appeal_upheld": appeal_upheld,
    "withdrawal": withdrawal,
    "security_drawn": security_drawn,
    "revision": revised,
}


def refused_for(body: dict, relied: str) -> None:
    """A 409 naming what relied on the deemed approval, in ``relied_on`` and the detail."""
    assert body["decision_due"] == DUE
    assert any(relied in item for item in body["relied_on"]), body
    assert relied in body["detail"]


# --- a decision dated in time, recorded late -------------------------------------------------


@pytest.mark.parametrize("reliance", list(RELIANCES))
@pytest.mark.parametrize("decided_on", [DUE, DEEMED])
@pytest.mark.parametrize("outcome", ["denied", "approved"])
def test_a_decision_dated_by_decision_due_is_recorded_late_only_while_nothing_relied(
    kit, reliance, decided_on, outcome
):
    lgu = kit.lgu()
    plan, relied = RELIANCES[reliance](kit, lgu)
    before = read(kit, plan)
    assert before["outcome"] == "deemed_approved"
    response = act(kit, plan, lgu, "decision", decision_body(outcome, decided_on))
    if decided_on == DEEMED:
        problem(response, 422, "deadline_passed")
    elif relied is None:
        decided = ok(response)
        assert (decided["status"], decided["outcome"]) == (outcome, outcome)
        assert decided["decision"]["decided_on"] == DUE
        return
    else:
        refused_for(problem(response, 409, "conflict"), relied)
    after = read(kit, plan)
    assert after["decision"] is None
    assert (after["status"], after["outcome"]) == (before["status"], "deemed_approved")


def test_a_final_deemed_approval_is_not_denied_back_dated_and_the_report_keeps_it(kit):
    """The notice says deemed approved, the plan is final: a denial dated 08-07 recorded
    on 09-01 is refused, and the compliance report still counts the plan deemed approved."""
    lgu = kit.lgu()
    plan, relied = notice_of_decision(kit, lgu)
    response = act(kit, plan, lgu, "decision", decision_body("denied", DUE))
    refused_for(problem(response, 409, "conflict"), str(relied))
    shown = read(kit, plan)
    assert (shown["status"], shown["outcome"]) == ("final", "deemed_approved")
    assert "not_approved" not in [b["code"] for b in shown["impact_blockers"]]
    with on(LATE):
        report = ok(kit.api.get("/reports/lgu-compliance?from=2026-06-01&to=2026-06-30"), 200)
    (row,) = [item for item in report["items"] if item["lgu_id"] == lgu["id"]]
    assert (row["deemed_approved"], row["decided_in_time"]) == (1, 0)


def test_a_withdrawal_reversed_on_appeal_still_relied_on_the_deemed_approval(kit):
    """The board reversed the deemed approval and with it the withdrawal; a
    back-dated approval would undo the board's reversal: refused, naming both."""
    lgu = kit.lgu()
    plan, relied = withdrawal(kit, lgu)
    owner = {"kind": "owner", "residents": None}
    appeal = ok(petition(kit, plan, postmarked="2026-08-12", received="2026-08-13", **owner))
    ok(grant(kit, appeal, "2026-08-20"))
    ok(rule(kit, appeal, "2026-08-27", "plan_reversed"))
    response = act(kit, plan, lgu, "decision", decision_body("approved", DUE))
    body = problem(response, 409, "conflict")
    assert f"{relied} (reversed on appeal)" in body["relied_on"]
    assert "the petition postmarked 2026-08-12" in body["relied_on"]
    shown = read(kit, plan)
    assert (shown["outcome"], shown["reversed_on_appeal"]) == ("denied", True)


def test_what_relied_on_an_earlier_applications_approval_does_not_hold_a_revisions(kit):
    """Application 1 approved and final, its credits withdrawn; a revision counting as new
    (application 2, received 09-01, due Monday 11-02) is deemed approved from 11-03.  What relied
    on application 1 does not stop a decision on application 2 dated 11-02 recorded on 11-10."""
    lgu = kit.lgu()
    with on(RECEIVED):
        bank = kit.funded_account(day=RECEIVED, service_area=5, unrestricted=20_000)
        plan = kit.approved_plan(lgu, RECEIVED)
        reserved = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
    ok(act(kit, plan, lgu, "decision-notice", mailing(RECEIVED, plan=plan), RECEIVED))
    ok(act(kit, plan, lgu, "withdrawals", {"reservation_ids": [reserved["id"]]}, RECEIVED))
    body = {"area_sqft": 9_900, "displacement_ft": 0, "received_on": LATE}
    assert ok(act(kit, plan, lgu, "revisions", body, LATE))["application_number"] == 2
    assert read(kit, plan, "2026-11-03")["status"] == "deemed_approved"
    # application 1's summary is not application 2's (Subd. 6 (c): a new application)
    denial = decision_body("denied", "2026-11-02")
    refused = problem(
        act(kit, plan, lgu, "decision", denial, "2026-11-10"), 422, "comment_period_open"
    )
    assert (refused["deadline"], refused["due"]) == ("notice_due", "2026-09-11")
    # its own, mailed by decision_due and late (due 09-11), is recorded on 11-10; then the decision
    summary = ok(act(kit, plan, lgu, "notices", mailing("2026-11-02", plan=plan), "2026-11-10"))
    assert summary["late"] is True
    decided = ok(act(kit, plan, lgu, "decision", denial, "2026-11-10"))
    # the denied revision leaves application 1's approval standing
    assert (decided["outcome"], decided["revision_denied"]) == ("approved", True)


# --- an extension sent in time, recorded late ------------------------------------------------


def extension_body(notified_on: str) -> dict:
    return {
        "notified_on": notified_on,
        "days": 120,
        "reason": "the applicant asked for time",
        "applicant_agreed": True,
    }


@pytest.mark.parametrize("reliance", list(RELIANCES))
@pytest.mark.parametrize("notified_on", [DUE, DEEMED])
def test_an_extension_sent_by_decision_due_is_recorded_late_only_while_nothing_relied(
    kit, reliance, notified_on
):
    lgu = kit.lgu()
    plan, relied = RELIANCES[reliance](kit, lgu)
    before = read(kit, plan)
    response = act(kit, plan, lgu, "extensions", extension_body(notified_on))
    if notified_on == DEEMED:
        problem(response, 422, "deadline_passed")
    elif relied is None:
        # 60 + 120 days from 06-08: Saturday 12-05 → Monday 12-07; undecided again
        assert ok(response)["decision_due"] == "2026-12-07"
        shown = read(kit, plan)
        assert (shown["status"], shown["outcome"]) == ("noticed", None)
        return
    else:
        refused_for(problem(response, 409, "conflict"), relied)
    after = read(kit, plan)
    assert after["extensions"] == []
    assert after["deadlines"]["decision_due"] == DUE
    assert (after["status"], after["outcome"]) == (before["status"], "deemed_approved")


def test_after_a_refused_extension_a_final_deemed_approval_takes_no_petition(kit):
    """The plan stays final and deemed approved; a petition after its window is refused as
    for any final plan, not accepted on an undecided one."""
    lgu = kit.lgu()
    plan, _ = notice_of_decision(kit, lgu)
    problem(act(kit, plan, lgu, "extensions", extension_body(DUE)), 409, "conflict")
    owner = {"kind": "owner", "residents": None}
    late = petition(kit, plan, postmarked=LATE, received=LATE, **owner)
    problem(late, 422, "appeal_window_closed")
    shown = read(kit, plan)
    assert (shown["status"], shown["outcome"], shown["appeals"]) == (
        "final",
        "deemed_approved",
        [],
    )


# --- a notice of application after the plan was deemed approved ------------------------------


def large_plan(kit: Kit, lgu: dict) -> dict:
    """25,000 sq ft received Wednesday 2026-06-17, never noticed: due Monday 08-17."""
    with on("2026-06-17"):
        return kit.plan(lgu, received_on="2026-06-17", area_sqft=25_000)


@pytest.mark.parametrize(
    ("mailed_on", "decision_noticed", "status", "code"),
    [
        ("2026-08-17", False, 201, None),  # mailed by decision_due, recorded later
        ("2026-08-18", False, 422, "deadline_passed"),
        ("2026-08-17", True, 409, "conflict"),  # a notice of the deemed approval relied on it
        ("2026-08-18", True, 422, "deadline_passed"),
    ],
)
def test_a_notice_of_application_comes_by_decision_due_and_before_anything_relied(
    kit, mailed_on, decision_noticed, status, code
):
    lgu = kit.lgu()
    plan = large_plan(kit, lgu)
    if decision_noticed:
        ok(act(kit, plan, lgu, "decision-notice", mailing("2026-08-20", plan=plan), "2026-08-20"))
    before = read(kit, plan, "2026-09-10")
    response = act(kit, plan, lgu, "notices", mailing(mailed_on, plan=plan), "2026-09-10")
    shown = read(kit, plan, "2026-09-10")
    if code is None:
        assert ok(response)["late"] is True
        # its comment period runs to 09-16; the plan stays deemed approved (Minn. Stat. 15.99)
        assert shown["deadlines"]["comment_period_ends"] == "2026-09-16"
        assert shown["outcome"] == "deemed_approved"
        return
    body = problem(response, status, code)
    if code == "conflict":
        assert body["relied_on"] == ["the notice of decision mailed 2026-08-20"]
    else:
        assert (body["deadline"], body["due"]) == ("decision_due", "2026-08-17")
    assert shown["notice"] is None and shown["deadlines"]["comment_period_ends"] is None
    assert (shown["status"], shown["outcome"]) == (before["status"], "deemed_approved")
    with on("2026-09-10"):
        missing = kit.api.get(f"/plans/{plan['id']}/notices/application", token=lgu["token"])
    assert missing.status_code == 404


@pytest.mark.parametrize(
    ("mailed_on", "decision_noticed", "status", "code"),
    [
        (DUE, False, 201, None),  # mailed by decision_due, recorded later: late, accepted
        (DEEMED, False, 422, "deadline_passed"),
        (DUE, True, 409, "conflict"),  # a notice of the deemed approval relied on it
    ],
)
@pytest.mark.parametrize("outcome", ["approved", "denied"])
def test_a_small_plans_decision_waits_for_its_summary_mailed_by_decision_due(
    kit, mailed_on, decision_noticed, status, code, outcome
):
    """9,000 sq ft received 06-08, its summary (Subd. 6 (b), due 06-18) never recorded: the plan
    reads ``received`` through 08-07 and ``deemed_approved`` from 08-08 (Minn. Stat. 15.99), and a
    decision the LGU dated 08-07 waits for the summary (``comment_period_open``, nothing
    recorded).  Mailed by 08-07 and recorded 09-01 it is accepted, flagged late, and the decision
    follows; mailed 08-08, or once a notice of the deemed approval was mailed, it is refused and
    the deemed approval stands."""
    lgu = kit.lgu()
    plan = small_plan(kit, lgu, summary=False)
    assert (read(kit, plan, DUE)["status"], read(kit, plan, DEEMED)["status"]) == (
        "received",
        "deemed_approved",
    )
    if decision_noticed:
        ok(act(kit, plan, lgu, "decision-notice", mailing(RELIED, plan=plan), RELIED))
    before = read(kit, plan)
    waiting = act(kit, plan, lgu, "decision", decision_body(outcome, DUE))
    if decision_noticed:
        refused_for(problem(waiting, 409, "conflict"), f"the notice of decision mailed {RELIED}")
    else:
        refused = problem(waiting, 422, "comment_period_open")
        assert "Subd. 6 (b)" in refused["detail"]
        assert "record the notice of application" in refused["detail"]
        assert (refused["deadline"], refused["due"]) == ("notice_due", "2026-06-18")
    assert read(kit, plan) == before
    summary = act(kit, plan, lgu, "notices", mailing(mailed_on, plan=plan))
    decision = act(kit, plan, lgu, "decision", decision_body(outcome, DUE))
    shown = read(kit, plan)
    if code is None:
        assert ok(summary)["late"] is True
        assert shown["notice"]["kind"] == "summary"
        decided = ok(decision)
        assert (decided["status"], decided["outcome"]) == (outcome, outcome)
        assert decided["decision"]["decided_on"] == DUE
        return
    body = problem(summary, status, code)
    if code == "conflict":
        assert body["relied_on"] == [f"the notice of decision mailed {RELIED}"]
        refused_for(problem(decision, 409, "conflict"), f"the notice of decision mailed {RELIED}")
    else:
        assert (body["deadline"], body["due"]) == ("decision_due", DUE)
        problem(decision, 422, "comment_period_open")  # still no summary on record
    assert shown["notice"] is None and shown["decision"] is None
    assert (shown["status"], shown["outcome"]) == (before["status"], "deemed_approved")


def test_a_notice_of_application_after_a_decision_is_a_conflict(kit):
    lgu = kit.lgu()
    with on(RECEIVED):
        plan = kit.approved_plan(lgu, RECEIVED)
    problem(
        act(kit, plan, lgu, "notices", mailing(RECEIVED, plan=plan), "2026-06-09"), 409, "conflict"
    )


# --- the panel's part, dated by decision_due and recorded late (Subd. 2) ---------------------
# the decision includes the panel's determination, so a decision made in time on a determination
# recorded after the plan was deemed approved needs both recorded late, under the same rule

#: the panel Subd. 2 names: one of the board, of the district, appointed by the LGU
PANEL = [
    {"name": "Dana Board", "represents": "board"},
    {"name": "Sam Swcd", "represents": "swcd"},
    {"name": "Lee Appointee", "represents": "lgu"},
]
REFERRED = "2026-07-01"


def referral(day: str) -> dict:
    return {"referred_on": day, "questions": ["size", "type"]}


def determination(inspected_on: str) -> dict:
    return {
        "inspected_on": inspected_on,
        "members": PANEL,
        "determination": "a type 2 wet meadow of 9,000 sq ft",
        "recommendation": "approve",
    }


@pytest.mark.parametrize("reliance", list(RELIANCES))
@pytest.mark.parametrize("referred_on", [DUE, DEEMED])
def test_a_referral_by_decision_due_is_recorded_late_only_while_nothing_relied(
    kit, reliance, referred_on
):
    """Referred 08-07 and recorded 09-01: with nothing relied on, the determination after an
    inspection 08-07 and the decision of 08-07 follow it; otherwise 409 naming what relied.
    Referred 08-08, after the last day to decide: 422 ``deadline_passed``."""
    lgu = kit.lgu()
    plan, relied = RELIANCES[reliance](kit, lgu)
    before = read(kit, plan)
    response = act(kit, plan, lgu, "tep-referral", referral(referred_on))
    if referred_on == DEEMED:
        body = problem(response, 422, "deadline_passed")
        assert (body["deadline"], body["due"]) == ("decision_due", DUE)
    elif relied is None:
        assert ok(response)["referred_on"] == DUE
        ok(act(kit, plan, lgu, "tep-determination", determination(DUE)))
        decided = ok(act(kit, plan, lgu, "decision", decision_body("approved", DUE)))
        assert (decided["status"], decided["outcome"]) == ("approved", "approved")
        assert decided["tep"]["determination"]["inspected_on"] == DUE
        return
    else:
        refused_for(problem(response, 409, "conflict"), relied)
        # with no referral, the determination is refused for the same reason first
        late = act(kit, plan, lgu, "tep-determination", determination(DUE))
        refused_for(problem(late, 409, "conflict"), relied)
    after = read(kit, plan)
    assert after["tep"] is None
    assert (after["status"], after["outcome"]) == (before["status"], "deemed_approved")


@pytest.mark.parametrize(
    ("inspected_on", "decision_noticed", "status", "code"),
    [
        (DUE, False, 201, None),  # inspected by decision_due, determination recorded later
        (DEEMED, False, 422, "deadline_passed"),
        (DUE, True, 409, "conflict"),  # the notice of the deemed approval relied on it
        (DEEMED, True, 422, "deadline_passed"),
    ],
)
@pytest.mark.parametrize("outcome", ["approved", "denied"])
def test_a_determination_by_decision_due_recorded_late_lets_the_decision_follow(
    kit, inspected_on, decision_noticed, status, code, outcome
):
    """Questions referred 07-01 (recorded that day); no determination recorded by 08-07, so no
    decision could be: the plan is deemed approved.  On 09-01 the LGU records the panel's
    determination after its inspection and its decision of 08-07."""
    lgu = kit.lgu()
    plan = small_plan(kit, lgu)
    ok(act(kit, plan, lgu, "tep-referral", referral(REFERRED), REFERRED))
    if decision_noticed:
        ok(act(kit, plan, lgu, "decision-notice", mailing(RELIED, plan=plan), RELIED))
    before = read(kit, plan)
    assert before["outcome"] == "deemed_approved"
    response = act(kit, plan, lgu, "tep-determination", determination(inspected_on))
    decision = act(kit, plan, lgu, "decision", decision_body(outcome, DUE))
    shown = read(kit, plan)
    if code is None:
        assert ok(response)["determination"]["inspected_on"] == DUE
        decided = ok(decision)
        assert (decided["status"], decided["outcome"]) == (outcome, outcome)
        assert decided["decision"]["decided_on"] == DUE
        assert shown["tep"]["determination"]["recommendation"] == "approve"
        return
    body = problem(response, status, code)
    if code == "conflict":
        assert body["relied_on"] == [f"the notice of decision mailed {RELIED}"]
        refused_for(problem(decision, 409, "conflict"), f"the notice of decision mailed {RELIED}")
    else:
        assert (body["deadline"], body["due"]) == ("decision_due", DUE)
        # the decision still waits for a determination that can no longer be recorded
        problem(decision, 409, "conflict")
    assert shown["tep"]["referred_on"] == REFERRED and shown["tep"]["determination"] is None
    assert shown["decision"] is None
    assert (shown["status"], shown["outcome"]) == (before["status"], "deemed_approved")


def test_the_panels_part_after_a_decision_is_a_conflict(kit):
    lgu = kit.lgu()
    with on(RECEIVED):
        plan = kit.approved_plan(lgu, RECEIVED)
    problem(act(kit, plan, lgu, "tep-referral", referral(RECEIVED), "2026-06-09"), 409, "conflict")
