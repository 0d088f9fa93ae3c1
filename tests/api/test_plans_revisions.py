"""Issue 24, part A: revisions after a decision (Subd. 6 (c)) with their own timeline, and
extensions the applicant agreed to (Minn. Stat. 15.99 subd. 3 (f), (g)), on both databases.

Dates are 2026; the LGU keeps neither optional holiday, the board keeps the Friday after
Thanksgiving."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.kit import Kit, decision_body, mailing, ok, on, problem
from tests.api.test_appeals import FEE, grant, noticed_decision, pay, petition, rule
from tests.api.web_kit import parse, signed_in


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def act(kit: Kit, plan: dict, lgu: dict, path: str, body: dict, day: str) -> Any:
    with on(day):
        return kit.api.post(f"/plans/{plan['id']}/{path}", body, token=lgu["token"])


def revise(kit: Kit, plan: dict, lgu: dict, area: int, day: str, feet: int = 0) -> Any:
    body = {"area_sqft": area, "displacement_ft": feet, "received_on": day}
    return act(kit, plan, lgu, "revisions", body, day)


def read(kit: Kit, plan: dict, day: str) -> dict:
    with on(day):
        return kit.get_plan(plan["id"])


def blockers(plan: dict) -> dict[str, str]:
    return {b["code"]: b["detail"] for b in plan["impact_blockers"]}


def final_approved_plan(kit: Kit, lgu: dict) -> tuple[dict, dict]:
    """9,000 sq ft at 2:1 received and approved Monday 2026-06-08, its notice mailed 06-09 (the
    window ends Wednesday 06-24), its 18,000 sq ft of credits withdrawn: final from 06-25."""
    with on("2026-06-01"):
        bank = kit.funded_account(day="2026-06-01", service_area=5, unrestricted=30_000)
    with on("2026-06-08"):
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000, ratio="2")
        held = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-08", plan=plan), "2026-06-08"))
    ok(act(kit, plan, lgu, "decision", decision_body("approved", "2026-06-08"), "2026-06-08"))
    ok(act(kit, plan, lgu, "decision-notice", mailing("2026-06-09", plan=plan), "2026-06-09"))
    ok(act(kit, plan, lgu, "withdrawals", {"reservation_ids": [held["id"]]}, "2026-06-09"))
    shown = read(kit, plan, "2026-06-25")
    assert shown["status"] == "final" and shown["impact_may_proceed"] is True
    return plan, bank


# --- item 5: a revision of an approved plan -------------------------------------------------------


def test_a_revision_of_an_approved_plan_counting_as_new_gets_its_own_timeline(kit: Kit) -> None:
    lgu = kit.lgu()
    plan, bank = final_approved_plan(kit, lgu)
    first = read(kit, plan, "2026-06-25")

    # Friday 2026-06-26: 9,900 sq ft, 10% larger: a new application (Subd. 6 (c)(1))
    revision = ok(revise(kit, plan, lgu, 9_900, "2026-06-26"))
    assert revision["counts_as_new_application"] is True
    assert revision["application_number"] == 2
    assert revision["plan_received_on"] == "2026-06-26"
    revised = read(kit, plan, "2026-06-26")
    assert revised["application_number"] == 2
    assert (revised["status"], revised["outcome"]) == ("received", None)
    assert revised["received_on"] == "2026-06-26" and revised["first_received_on"] == "2026-06-08"
    assert revised["notice"] is None and revised["decision"] is None
    assert revised["decision_notice"] is None and revised["extensions"] == []
    assert revised["deadlines"] == {
        "notice_due": "2026-07-06",  # 10 days: a Monday
        "comment_period_ends": None,  # still below 10,000 sq ft
        "decision_due": "2026-08-25",  # 60 days: a Tuesday
        "decision_notice_due": None,
        "appeal_window_ends": None,
    }
    # the withdrawn credits stay and count toward the revised requirement of 19,800 sq ft
    assert revised["required_credit_sqft"] == 19_800
    assert [w["withdrawn_sqft"] for w in revised["withdrawals"]] == [18_000]
    assert revised["impact_may_proceed"] is False
    waiting = blockers(revised)
    assert set(waiting) == {"not_approved", "credits_not_withdrawn"}
    assert "Subd. 6 (c)" in waiting["not_approved"]
    assert waiting["credits_not_withdrawn"] == "18,000 of 19,800 sq ft of credits withdrawn"
    # the first application is kept as it stood
    assert revised["applications"] == [
        {
            "number": 1,
            "received_on": "2026-06-08",
            "area_sqft": 9_000,
            "notice_mailed_on": "2026-06-08",  # its own summary; the revision has none yet
            "outcome": "approved",
            "decision": {k: v for k, v in first["decision"].items() if k != "tep_determination"},
            "decision_notice_mailed_on": "2026-06-09",
            "superseded_on": "2026-06-26",
            "revision_id": revision["id"],
        }
    ]
    second_timeline(kit, plan, lgu, bank, first)


def second_timeline(kit: Kit, plan: dict, lgu: dict, bank: dict, first: dict) -> None:
    """The revised application's own timeline, through the plan's same endpoints."""
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-29", plan=plan), "2026-06-29"))
    second = decision_body("approved", "2026-06-30")
    decided = ok(act(kit, plan, lgu, "decision", second, "2026-06-30"))
    assert decided["decision"]["resolution"] == second["resolution"]
    assert decided["decision"]["resolution"] != first["decision"]["resolution"]
    ok(act(kit, plan, lgu, "decision-notice", mailing("2026-07-01", plan=plan), "2026-07-01"))
    last_day = read(kit, plan, "2026-07-16")  # 15 days after 07-01
    assert last_day["deadlines"]["appeal_window_ends"] == "2026-07-16"
    assert last_day["status"] == "approved"
    assert set(blockers(last_day)) == {"decision_not_final", "credits_not_withdrawn"}
    final = read(kit, plan, "2026-07-17")
    assert final["status"] == "final" and set(blockers(final)) == {"credits_not_withdrawn"}

    # the rest of the revised requirement withdrawn, the impact may proceed again
    with on("2026-07-17"):
        more = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 1_800)
    ok(act(kit, plan, lgu, "withdrawals", {"reservation_ids": [more["id"]]}, "2026-07-17"))
    proceeds = read(kit, plan, "2026-07-17")
    assert proceeds["impact_may_proceed"] is True and proceeds["impact_blockers"] == []


def test_a_revision_of_an_approved_plan_not_counting_as_new_updates_area_and_requirement(
    kit: Kit,
) -> None:
    lgu = kit.lgu()
    plan, _bank = final_approved_plan(kit, lgu)
    revision = ok(revise(kit, plan, lgu, 9_899, "2026-06-26", feet=500))  # 9.99%, 500 ft
    assert revision["counts_as_new_application"] is False
    assert revision["application_number"] == 1
    shown = read(kit, plan, "2026-06-26")
    assert shown["impact"]["area_sqft"] == 9_899 and shown["required_credit_sqft"] == 19_798
    assert shown["status"] == "final" and shown["received_on"] == "2026-06-08"
    assert shown["decision"]["decided_on"] == "2026-06-08" and shown["applications"] == []
    assert set(blockers(shown)) == {"credits_not_withdrawn"}


def test_a_revision_counting_as_new_waits_until_the_approval_is_final(kit: Kit) -> None:
    lgu = kit.lgu()
    plan, _bank = final_approved_plan(kit, lgu)
    # on 2026-06-24 the appeal window is still open
    problem(revise(kit, plan, lgu, 9_900, "2026-06-24"), 409, "conflict")
    shown = read(kit, plan, "2026-06-24")
    assert shown["impact"]["area_sqft"] == 9_000 and shown["application_number"] == 1
    ok(revise(kit, plan, lgu, 9_900, "2026-06-25"))


def test_a_revision_is_received_no_earlier_than_the_approval_it_revises(kit: Kit) -> None:
    """Approved 06-08, final from 06-25: a revision counting as new dated before 06-25, or any
    revision dated before 06-08, would stand in the record before what it revises."""
    lgu = kit.lgu()
    plan, _bank = final_approved_plan(kit, lgu)

    def backdated(area: int, received_on: str) -> dict[str, Any]:
        body = {"area_sqft": area, "displacement_ft": 0, "received_on": received_on}
        return problem(
            act(kit, plan, lgu, "revisions", body, "2026-07-20"), 422, "validation_error"
        )

    assert "2026-06-25" in backdated(40_000, "2026-06-24")["errors"]["received_on"][0]
    assert "2026-06-08" in backdated(9_100, "2026-06-07")["errors"]["received_on"][0]
    shown = read(kit, plan, "2026-07-20")
    assert (shown["application_number"], shown["impact"]["area_sqft"]) == (1, 9_000)
    assert shown["status"] == "final" and shown["applications"] == []
    body = {"area_sqft": 9_100, "displacement_ft": 0, "received_on": "2026-06-08"}
    ok(act(kit, plan, lgu, "revisions", body, "2026-07-20"))  # on the day of the approval
    body = {"area_sqft": 40_000, "displacement_ft": 0, "received_on": "2026-06-25"}
    ok(act(kit, plan, lgu, "revisions", body, "2026-07-20"))  # the day it became final


def test_a_denied_revision_leaves_the_approval_it_applied_to_revise_standing(kit: Kit) -> None:
    """Subd. 6 (c): "an application for a revision to an approved replacement plan". Denied,
    the application fails; the approved plan, final and with its credits withdrawn, stands."""
    lgu = kit.lgu()
    plan, bank = final_approved_plan(kit, lgu)
    ok(revise(kit, plan, lgu, 9_900, "2026-06-26"))  # 10% larger: application 2
    with on("2026-06-26"):  # reserved for the revision's 1,800 sq ft more
        spare = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 100)
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-30", plan=plan), "2026-06-30"))
    ok(act(kit, plan, lgu, "decision", decision_body("denied", "2026-06-30"), "2026-06-30"))
    ok(act(kit, plan, lgu, "decision-notice", mailing("2026-07-01", plan=plan), "2026-07-01"))
    for day in ("2026-06-30", "2026-07-20"):  # in its appeal window and after it
        shown = read(kit, plan, day)
        assert (shown["application_number"], shown["decision"]["outcome"]) == (2, "denied")
        assert (shown["outcome"], shown["status"], shown["revision_denied"]) == (
            "approved",
            "final",
            True,
        )
        assert shown["impact"]["area_sqft"] == 9_000 and shown["required_credit_sqft"] == 18_000
        assert shown["impact_may_proceed"] is True and shown["impact_blockers"] == []
    # nothing more to withdraw, nor to reserve, for the approval that stands
    spent = act(kit, plan, lgu, "withdrawals", {"reservation_ids": [spare["id"]]}, "2026-07-20")
    assert problem(spent, 409, "conflict")["required_sqft"] == 18_000
    with on("2026-07-20"):
        body = kit.reservation_body(plan["id"], bank["unrestricted_class"], 100)
        more = kit.api.post(f"/accounts/{bank['id']}/reservations", body)
        assert problem(more, 409, "conflict")["required_sqft"] == 18_000
    # a further revision is compared with the approval standing, not the denied 9,900 sq ft
    problem(revise(kit, plan, lgu, 9_899, "2026-07-20"), 409, "conflict")  # under 10% of 9,000
    third = ok(revise(kit, plan, lgu, 9_900, "2026-07-20"))
    assert (third["counts_as_new_application"], third["application_number"]) == (True, 3)
    shown = read(kit, plan, "2026-07-20")
    assert [(a["number"], a["outcome"]) for a in shown["applications"]] == [
        (1, "approved"),
        (2, "denied"),
    ]
    assert (shown["status"], shown["outcome"], shown["revision_denied"]) == (
        "received",
        None,
        False,
    )


def test_a_revisions_approval_reversed_on_appeal_returns_only_what_was_withdrawn_for_it(
    kit: Kit,
) -> None:
    """The board reverses the revision's approval: the approval before it stands, with the
    18,000 sq ft withdrawn for it; the 1,800 sq ft withdrawn for the revision come back."""
    lgu = kit.lgu()
    plan, bank = final_approved_plan(kit, lgu)
    ok(revise(kit, plan, lgu, 9_900, "2026-06-26"))
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-30", plan=plan), "2026-06-30"))
    ok(act(kit, plan, lgu, "decision", decision_body("approved", "2026-06-30"), "2026-06-30"))
    ok(act(kit, plan, lgu, "decision-notice", mailing("2026-07-01", plan=plan), "2026-07-01"))
    with on("2026-07-02"):
        more = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 1_800)
    ok(act(kit, plan, lgu, "withdrawals", {"reservation_ids": [more["id"]]}, "2026-07-02"))
    with on("2026-07-06"):
        before = kit.available(bank["id"], bank["unrestricted_class"])
    appeal = ok(petition(kit, plan, postmarked="2026-07-06", received="2026-07-08"))
    ok(grant(kit, appeal, "2026-07-09"))
    ok(rule(kit, appeal, "2026-07-10"))
    shown = read(kit, plan, "2026-07-10")
    assert (shown["outcome"], shown["status"], shown["revision_denied"]) == (
        "approved",
        "final",
        True,
    )
    assert shown["reversed_on_appeal"] is True and shown["impact_may_proceed"] is True
    standing = [w for w in shown["withdrawals"] if w["reversal_transaction_id"] is None]
    assert [w["withdrawn_sqft"] for w in standing] == [18_000]
    with on("2026-07-10"):
        assert kit.available(bank["id"], bank["unrestricted_class"]) == before + 1_800


def approved_and_noticed(kit: Kit, lgu: dict) -> tuple[dict, dict]:
    """9,000 sq ft at 2:1 received and approved 06-08, its notice of decision mailed 06-09, and
    an account of 40,000 sq ft in its service area: the plan and the account."""
    with on("2026-06-01"):
        bank = kit.funded_account(day="2026-06-01", service_area=5, unrestricted=40_000)
    with on("2026-06-08"):
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000, ratio="2")
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-08", plan=plan), "2026-06-08"))
    ok(act(kit, plan, lgu, "decision", decision_body("approved", "2026-06-08"), "2026-06-08"))
    ok(act(kit, plan, lgu, "decision-notice", mailing("2026-06-09", plan=plan), "2026-06-09"))
    return plan, bank


@pytest.mark.parametrize("withdrawn_first", [0, 18_000])
def test_a_revisions_approval_reversed_keeps_the_reservations_the_standing_approval_can_take(
    kit: Kit, withdrawn_first: int
) -> None:
    """9,000 sq ft at 2:1 approved (18,000 sq ft required), ``withdrawn_first`` withdrawn under
    it; revised to 9,900 sq ft (a new application) and approved, credits reserved 07-02 for
    what is left, then the revision's approval reversed on appeal 07-10: the first approval
    stands.  With nothing withdrawn under it, the reservation stays pending and a withdrawal
    takes it under the approval that stands; with its requirement met, nothing can take it: it
    is voided and its credits go back to the holder."""
    lgu = kit.lgu()
    plan, bank = approved_and_noticed(kit, lgu)
    if withdrawn_first:
        with on("2026-06-09"):
            first = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
        ok(act(kit, plan, lgu, "withdrawals", {"reservation_ids": [first["id"]]}, "2026-06-09"))
    ok(revise(kit, plan, lgu, 9_900, "2026-06-26"))
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-30", plan=plan), "2026-06-30"))
    ok(act(kit, plan, lgu, "decision", decision_body("approved", "2026-06-30"), "2026-06-30"))
    ok(act(kit, plan, lgu, "decision-notice", mailing("2026-07-01", plan=plan), "2026-07-01"))
    with on("2026-07-02"):
        left = 19_800 - withdrawn_first
        held = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], left)
        before = kit.available(bank["id"], bank["unrestricted_class"])
    appeal = ok(petition(kit, plan, postmarked="2026-07-06", received="2026-07-08"))
    ok(grant(kit, appeal, "2026-07-09"))
    ok(rule(kit, appeal, "2026-07-10"))
    with on("2026-07-10"):
        shown = kit.get_plan(plan["id"])
        reservation = ok(kit.api.get(f"/reservations/{held['id']}"), 200)
        available = kit.available(bank["id"], bank["unrestricted_class"])
    assert (shown["outcome"], shown["status"], shown["revision_denied"]) == (
        "approved",
        "final",
        True,
    )
    assert shown["required_credit_sqft"] == 18_000
    take = {"reservation_ids": [held["id"]]}
    if not withdrawn_first:
        assert reservation["status"] == "pending" and available == before
        ok(act(kit, plan, lgu, "withdrawals", take, "2026-07-10"))
        after = read(kit, plan, "2026-07-10")
        assert [w["withdrawn_sqft"] for w in after["withdrawals"]] == [18_000]
        assert after["impact_may_proceed"] is True
    else:
        assert reservation["status"] == "voided" and available == before + left
        refused = act(kit, plan, lgu, "withdrawals", take, "2026-07-10")
        problem(refused, 409, "conflict")


def test_a_denied_plan_is_not_revised(kit: Kit) -> None:
    lgu = kit.lgu()
    with on("2026-06-08"):
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000)
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-08", plan=plan), "2026-06-08"))
    ok(act(kit, plan, lgu, "decision", decision_body("denied", "2026-06-08"), "2026-06-08"))
    for area in (9_100, 12_000):
        problem(revise(kit, plan, lgu, area, "2026-06-09"), 409, "conflict")
    assert read(kit, plan, "2026-06-09")["impact"]["area_sqft"] == 9_000


def test_a_plan_is_not_revised_while_a_petition_awaits_the_board(kit: Kit) -> None:
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)  # approved 2026-09-01, window to 2026-09-21
    appeal = ok(petition(kit, plan))  # received 2026-09-24
    ok(pay(kit, appeal, "appeal_filing_fee", FEE, "2026-09-24"))  # in the petition's envelope
    assert read(kit, plan, "2026-09-24")["status"] == "appealed"
    problem(revise(kit, plan, lgu, 9_100, "2026-09-24"), 409, "conflict")


def test_an_appeal_of_the_superseded_application_does_not_turn_the_revised_one(kit: Kit) -> None:
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu, "denied")  # denied 2026-09-01, noticed 09-04
    appeal = ok(petition(kit, plan))
    ok(grant(kit, appeal, "2026-10-06"))
    ok(rule(kit, appeal, "2026-11-23", "plan_reversed"))
    reversed_ = read(kit, plan, "2026-11-24")
    assert (reversed_["status"], reversed_["outcome"]) == ("final", "approved")
    assert reversed_["reversed_on_appeal"] is True

    ok(revise(kit, plan, lgu, 9_900, "2026-11-24"))
    ok(act(kit, plan, lgu, "notices", mailing("2026-11-24", plan=plan), "2026-11-24"))
    approved = ok(
        act(kit, plan, lgu, "decision", decision_body("approved", "2026-11-24"), "2026-11-24")
    )
    # the board reversed the first application's denial, not this approval
    assert (approved["status"], approved["outcome"]) == ("approved", "approved")
    assert approved["reversed_on_appeal"] is False
    assert [a["application_number"] for a in approved["appeals"]] == [1]
    [earlier] = approved["applications"]
    assert earlier["outcome"] == "approved" and earlier["decision"]["outcome"] == "denied"


# --- item 6: extensions ---------------------------------------------------------------------------


def contested_plan(kit: Kit, lgu: dict) -> dict:
    """The worked contested plan: 25,000 sq ft received Wednesday 2026-06-17, noticed 06-22; the
    decision is due Monday 2026-08-17."""
    with on("2026-06-17"):
        plan = kit.plan(lgu, received_on="2026-06-17", area_sqft=25_000)
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-22", plan=plan), "2026-06-22"))
    return plan


def extend(kit: Kit, plan: dict, lgu: dict, day: str, days: int, agreed: bool | None = None):
    body: dict[str, Any] = {"notified_on": day, "days": days, "reason": "the TEP's site visit"}
    if agreed is not None:
        body["applicant_agreed"] = agreed
    return act(kit, plan, lgu, "extensions", body, day)


@pytest.mark.parametrize("agreed", [None, False])
def test_an_extension_past_60_days_without_the_applicants_agreement_is_422(
    kit: Kit, agreed: bool | None
) -> None:
    lgu = kit.lgu()
    plan = contested_plan(kit, lgu)
    refused = problem(extend(kit, plan, lgu, "2026-08-10", 61, agreed), 422, "validation_error")
    assert "days" in refused["errors"]
    shown = read(kit, plan, "2026-08-10")
    assert shown["extensions"] == [] and shown["deadlines"]["decision_due"] == "2026-08-17"


def test_an_extension_past_60_days_with_the_applicants_agreement_is_201(kit: Kit) -> None:
    lgu = kit.lgu()
    plan = contested_plan(kit, lgu)
    extension = ok(extend(kit, plan, lgu, "2026-08-10", 61, True))
    # 2026-06-17 + 60 + 61 days = Friday 2026-10-16
    assert extension == {
        "notified_on": "2026-08-10",
        "days": 61,
        "reason": "the TEP's site visit",
        "applicant_agreed": True,
        "decision_due": "2026-10-16",
    }
    assert read(kit, plan, "2026-08-10")["deadlines"]["decision_due"] == "2026-10-16"


def test_further_extensions_need_the_applicants_agreement_and_add_up(kit: Kit) -> None:
    lgu = kit.lgu()
    plan = contested_plan(kit, lgu)
    assert ok(extend(kit, plan, lgu, "2026-08-10", 30))["decision_due"] == "2026-09-15"
    problem(extend(kit, plan, lgu, "2026-09-15", 20), 409, "conflict")
    problem(extend(kit, plan, lgu, "2026-09-15", 20, False), 409, "conflict")
    # sent on the decision deadline as it stands, with the applicant's written approval
    assert ok(extend(kit, plan, lgu, "2026-09-15", 20, True))["decision_due"] == "2026-10-05"
    # one sent after the deadline as it then stands is too late, agreed or not
    problem(extend(kit, plan, lgu, "2026-10-06", 20, True), 422, "deadline_passed")
    shown = read(kit, plan, "2026-10-05")
    assert [(e["days"], e["applicant_agreed"]) for e in shown["extensions"]] == [
        (30, False),
        (20, True),
    ]
    assert shown["deadlines"]["decision_due"] == "2026-10-05"  # 2026-06-17 + 110, a Monday
    assert shown["status"] == "noticed"
    assert read(kit, plan, "2026-10-06")["status"] == "deemed_approved"


def test_a_revision_moving_a_plan_out_of_a_date_filter_does_not_end_the_listing_early(
    kit: Kit,
) -> None:
    """The cursor names the last plan of a page; the next page starts after it even when a
    revision counting as new has since moved its ``received_on`` out of the filter."""
    lgu = kit.lgu()
    with on("2026-01-05"):
        for _ in range(4):
            kit.plan(lgu, received_on="2026-01-05", area_sqft=9_000)
        listed = ok(kit.api.get("/plans?limit=10", token=lgu["token"]), 200)["items"]
    moved = listed[1]
    ok(act(kit, moved, lgu, "notices", mailing("2026-01-05", plan=moved), "2026-01-05"))
    ok(act(kit, moved, lgu, "decision", decision_body("approved", "2026-01-05"), "2026-01-05"))
    ok(act(kit, moved, lgu, "decision-notice", mailing("2026-01-06", plan=moved), "2026-01-06"))
    path = "/plans?received_to=2026-01-31&limit=2"
    with on("2026-03-02"):
        first = ok(kit.api.get(path, token=lgu["token"]), 200)
        assert [p["id"] for p in first["items"]] == [p["id"] for p in listed[:2]]
        ok(revise(kit, moved, lgu, 20_000, "2026-03-02"))  # received anew on 03-02
        cursor = first["next_cursor"]
        second = ok(kit.api.get(f"{path}&cursor={cursor}", token=lgu["token"]), 200)
    assert [p["id"] for p in second["items"]] == [p["id"] for p in listed[2:]]


def test_a_revision_of_an_undecided_revision_reversed_on_appeal_leaves_the_first_approval(
    kit: Kit,
) -> None:
    """Application 2 (a revision of the approval) is superseded undecided by application 3,
    which is approved and then reversed on appeal: application 1's approval stands, with the
    18,000 sq ft withdrawn for it; only the 1,900 withdrawn for application 3 come back."""
    lgu = kit.lgu()
    plan, bank = final_approved_plan(kit, lgu)
    ok(revise(kit, plan, lgu, 9_900, "2026-06-26"))  # application 2, left undecided
    third = ok(revise(kit, plan, lgu, 9_950, "2026-06-29", feet=600))  # application 3
    assert third["application_number"] == 3
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-30", plan=plan), "2026-06-30"))
    ok(act(kit, plan, lgu, "decision", decision_body("approved", "2026-06-30"), "2026-06-30"))
    ok(act(kit, plan, lgu, "decision-notice", mailing("2026-07-01", plan=plan), "2026-07-01"))
    with on("2026-07-02"):
        more = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 1_900)
    ok(act(kit, plan, lgu, "withdrawals", {"reservation_ids": [more["id"]]}, "2026-07-02"))
    appeal = ok(petition(kit, plan, postmarked="2026-07-06", received="2026-07-08"))
    ok(grant(kit, appeal, "2026-07-09"))
    ok(rule(kit, appeal, "2026-07-10"))
    shown = read(kit, plan, "2026-07-10")
    assert (shown["outcome"], shown["status"], shown["impact_may_proceed"]) == (
        "approved",
        "final",
        True,
    )
    standing = [
        w["withdrawn_sqft"] for w in shown["withdrawals"] if not w["reversal_transaction_id"]
    ]
    assert standing == [18_000]


@pytest.mark.parametrize("revision_decided", [False, True])
def test_the_certificate_states_the_application_its_credits_were_withdrawn_under(
    kit: Kit, app, revision_decided: bool
) -> None:
    """Withdrawn under application 1 (9,000 sq ft approved 06-08); a revision to 9,900 sq ft
    counting as new is recorded 06-26, undecided or approved 06-30: the certificate still states
    application 1's approval and impact, with the plan's status now."""
    lgu = kit.lgu()
    plan, _bank = final_approved_plan(kit, lgu)
    (withdrawal,) = read(kit, plan, "2026-06-25")["withdrawals"]
    ok(revise(kit, plan, lgu, 9_900, "2026-06-26"))
    if revision_decided:
        ok(act(kit, plan, lgu, "notices", mailing("2026-06-30", plan=plan), "2026-06-30"))
        ok(act(kit, plan, lgu, "decision", decision_body("approved", "2026-06-30"), "2026-06-30"))
    client = signed_in(app.test_client(), lgu["token"])
    with on("2026-07-01"):
        page = client.get(f"/plans/{plan['id']}/withdrawals/{withdrawal['id']}/certificate")
    assert page.status_code == 200
    cert = parse(page.get_data(as_text=True))
    decision = cert.one(data_field="decision").text
    assert decision.startswith("Approved 2026-06-08"), decision
    # the plan's status now beside it, where it is not the outcome's word
    assert ("the plan is received" in decision) is not revision_decided
    assert cert.one(data_field="impact").text.startswith("9,000 sq ft")
    assert "application" not in cert.one(data_field="plan").text


def test_the_certificate_after_a_denied_revision_states_the_approval_that_stands(
    kit: Kit, app
) -> None:
    lgu = kit.lgu()
    plan, _bank = final_approved_plan(kit, lgu)
    first = read(kit, plan, "2026-06-25")
    ok(revise(kit, plan, lgu, 9_900, "2026-06-26"))
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-30", plan=plan), "2026-06-30"))
    ok(act(kit, plan, lgu, "decision", decision_body("denied", "2026-06-30"), "2026-06-30"))
    (withdrawal,) = first["withdrawals"]
    client = signed_in(app.test_client(), lgu["token"])
    with on("2026-07-01"):
        page = client.get(f"/plans/{plan['id']}/withdrawals/{withdrawal['id']}/certificate")
    assert page.status_code == 200
    cert = parse(page.get_data(as_text=True))
    assert cert.one(data_field="decision").text.startswith("Approved 2026-06-08")
    assert cert.one(data_field="impact").text.startswith("9,000 sq ft")
    assert "application" not in cert.one(data_field="plan").text


def certified(app, lgu: dict, plan: dict, withdrawal: dict, day: str) -> dict[str, str]:
    """The certificate's plan, decision and impact, as the LGU reads them on ``day``."""
    with on(day):
        client = signed_in(app.test_client(), lgu["token"])
        page = client.get(f"/plans/{plan['id']}/withdrawals/{withdrawal['id']}/certificate")
    assert page.status_code == 200
    cert = parse(page.get_data(as_text=True))
    return {name: cert.one(data_field=name).text for name in ("plan", "decision", "impact")}


def test_credits_withdrawn_after_a_revision_is_denied_are_certified_under_the_approval_that_stands(
    kit: Kit, app
) -> None:
    """Application 1 (9,000 sq ft) approved 06-08, nothing withdrawn; a revision to 9,900 sq ft
    counting as new denied 06-30; the credits withdrawn 07-01 meet the approval that stands:
    the certificate states it, not the revision's denial dated with the standing outcome."""
    lgu = kit.lgu()
    with on("2026-06-01"):
        bank = kit.funded_account(day="2026-06-01", service_area=5, unrestricted=30_000)
    with on("2026-06-08"):
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000, ratio="2")
    first = decision_body("approved", "2026-06-08")
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-08", plan=plan), "2026-06-08"))
    ok(act(kit, plan, lgu, "decision", first, "2026-06-08"))
    ok(act(kit, plan, lgu, "decision-notice", mailing("2026-06-09", plan=plan), "2026-06-09"))
    ok(revise(kit, plan, lgu, 9_900, "2026-06-26"))
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-30", plan=plan), "2026-06-30"))
    ok(act(kit, plan, lgu, "decision", decision_body("denied", "2026-06-30"), "2026-06-30"))
    with on("2026-07-01"):
        held = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
    take = {"reservation_ids": [held["id"]]}
    withdrawal = ok(act(kit, plan, lgu, "withdrawals", take, "2026-07-01"))

    shown = certified(app, lgu, plan, withdrawal, "2026-07-02")

    number = first["resolution"]["number"]
    assert shown["decision"] == f"Approved 2026-06-08 by resolution {number}; the plan is final"
    assert shown["plan"] == plan["id"] and shown["impact"].startswith("9,000 sq ft")


def test_credits_withdrawn_under_a_revisions_approval_reversed_on_appeal_are_certified_so(
    kit: Kit, app
) -> None:
    """Application 1 (9,000 sq ft) approved 06-08; its revision to 9,900 sq ft approved 06-30
    and 19,800 sq ft withdrawn under it 07-02; the board reverses the revision's approval 07-10
    and 18,000 sq ft are withdrawn under the first approval, which stands again: each
    certificate states the approval its credits met, the first with the board's reversal."""
    lgu = kit.lgu()
    plan, bank = approved_and_noticed(kit, lgu)
    ok(revise(kit, plan, lgu, 9_900, "2026-06-26"))
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-30", plan=plan), "2026-06-30"))
    second = decision_body("approved", "2026-06-30")
    ok(act(kit, plan, lgu, "decision", second, "2026-06-30"))
    ok(act(kit, plan, lgu, "decision-notice", mailing("2026-07-01", plan=plan), "2026-07-01"))
    with on("2026-07-02"):
        held = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 19_800)
    take = {"reservation_ids": [held["id"]]}
    under_revision = ok(act(kit, plan, lgu, "withdrawals", take, "2026-07-02"))
    appeal = ok(petition(kit, plan, postmarked="2026-07-06", received="2026-07-08"))
    ok(grant(kit, appeal, "2026-07-09"))
    ok(rule(kit, appeal, "2026-07-10"))
    with on("2026-07-10"):
        again = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
    take = {"reservation_ids": [again["id"]]}
    under_first = ok(act(kit, plan, lgu, "withdrawals", take, "2026-07-10"))
    with on("2026-07-10"):
        (first,) = [a for a in kit.get_plan(plan["id"])["applications"] if a["number"] == 1]

    reversed_ = certified(app, lgu, plan, under_revision, "2026-07-11")
    standing = certified(app, lgu, plan, under_first, "2026-07-11")

    assert reversed_["decision"] == (
        f"Approved 2026-06-30 by resolution {second['resolution']['number']}; "
        "reversed by the board on appeal 2026-07-10, so denied; the plan is final"
    )
    assert reversed_["plan"] == f"{plan['id']} (application 2)"
    assert reversed_["impact"].startswith("9,900 sq ft")
    number = first["decision"]["resolution"]["number"]
    assert standing["decision"] == f"Approved 2026-06-08 by resolution {number}; the plan is final"
    assert standing["plan"] == plan["id"] and standing["impact"].startswith("9,000 sq ft")


def test_a_revision_is_received_from_the_day_the_resolution_approved_the_plan(kit):
    """Approved by a resolution adopted 06-22, recorded as decided 07-01: the resolution is the
    approval (Subd. 1 (b)), so a revision (not counting as new) received 06-25 revises it."""
    lgu = kit.lgu()
    with on("2026-06-08"):
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000, ratio="2")
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-12", plan=plan), "2026-06-12"))
    body = decision_body("approved", "2026-07-01")
    body["resolution"]["adopted_on"] = "2026-06-22"
    ok(act(kit, plan, lgu, "decision", body, "2026-07-01"))
    early = problem(revise(kit, plan, lgu, 9_500, "2026-06-21"), 422, "validation_error")
    assert early["errors"] == {"received_on": ["before 2026-06-22"]}
    revised = ok(revise(kit, plan, lgu, 9_500, "2026-06-25"))
    assert revised["counts_as_new_application"] is False
