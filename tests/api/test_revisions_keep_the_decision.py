"""A revision cannot leave an approval standing for an area it could not have been given on its
day (Subd. 8, docs/domain.md §4 "Revised applications"), on both databases.

A 2026 plan received Monday 06-01 whose notice of application was mailed 06-02: from 10,000 sq
ft its Subd. 8 comment period runs to Thursday 07-02, so a decision dated on or before that day
is ``comment_period_open``; below 10,000 sq ft there is none."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.kit import Kit, decision_body, mailing, ok, on, problem


@pytest.fixture
def kit(api: Any, app: Any) -> Kit:
    return Kit(api, app)


def act(kit: Kit, plan: dict, lgu: dict, path: str, body: dict, day: str) -> Any:
    with on(day):
        return kit.api.post(f"/plans/{plan['id']}/{path}", body, token=lgu["token"])


def revise(kit: Kit, plan: dict, lgu: dict, area: int, received_on: str, today: str) -> Any:
    body = {"area_sqft": area, "displacement_ft": 0, "received_on": received_on}
    return act(kit, plan, lgu, "revisions", body, today)


def read(kit: Kit, plan: dict, day: str) -> dict[str, Any]:
    with on(day):
        return kit.get_plan(plan["id"])


def noticed(kit: Kit, lgu: dict, area: int) -> dict[str, Any]:
    """A plan of ``area`` sq ft received 06-01, its notice of application mailed 06-02."""
    with on("2026-06-01"):
        plan = kit.plan(lgu, received_on="2026-06-01", area_sqft=area, ratio="2")
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-02", plan=plan), "2026-06-02"))
    return plan


def test_a_revision_down_and_back_up_does_not_skip_the_comment_period(kit: Kit) -> None:
    """12,000 sq ft, revised to 9,999 and approved 06-03 (no comment period below 10,000 sq ft):
    the approval cannot be revised back to 12,000 sq ft, on 06-04 or after 07-02, as it would
    then be an approval of 12,000 sq ft given inside the comment period."""
    lgu = kit.lgu()
    plan = noticed(kit, lgu, 12_000)
    approve = decision_body("approved", "2026-06-03")
    problem(act(kit, plan, lgu, "decision", approve, "2026-06-03"), 422, "comment_period_open")
    down = ok(revise(kit, plan, lgu, 9_999, "2026-06-03", "2026-06-03"))
    assert down["counts_as_new_application"] is False
    ok(act(kit, plan, lgu, "decision", approve, "2026-06-03"))

    for received_on, today in (("2026-06-04", "2026-06-04"), ("2026-07-10", "2026-07-10")):
        for area in (12_000, 10_000):
            refused = problem(
                revise(kit, plan, lgu, area, received_on, today), 422, "comment_period_open"
            )
            assert refused["deadline"] == "comment_period_ends" and refused["ends"] == "2026-07-02"
            assert "2026-06-03" in refused["detail"] and "Subd. 8" in refused["detail"]
            assert list(refused["errors"]) == ["area_sqft"]
    shown = read(kit, plan, "2026-07-10")
    assert shown["impact"]["area_sqft"] == 9_999 and shown["required_credit_sqft"] == 19_998
    assert (shown["outcome"], shown["decision"]["decided_on"]) == ("approved", "2026-06-03")
    assert shown["deadlines"]["comment_period_ends"] is None
    assert shown["application_number"] == 1 and shown["applications"] == []
    # below the threshold the approval stands as given: a revision to 9,999 sq ft is taken
    ok(revise(kit, plan, lgu, 9_000, "2026-07-10", "2026-07-10"))
    ok(revise(kit, plan, lgu, 9_999, "2026-07-10", "2026-07-10"))
    assert read(kit, plan, "2026-07-10")["impact"]["area_sqft"] == 9_999


def test_a_small_plan_approved_inside_what_would_be_its_comment_period_stays_below_10_000(
    kit: Kit,
) -> None:
    """9,500 sq ft approved 06-03 with its summary mailed 06-02: revised under 10% larger (not
    a new application), it may reach 9,999 sq ft but not 10,000."""
    lgu = kit.lgu()
    plan = noticed(kit, lgu, 9_500)
    ok(act(kit, plan, lgu, "decision", decision_body("approved", "2026-06-03"), "2026-06-03"))
    refused = problem(
        revise(kit, plan, lgu, 10_000, "2026-06-04", "2026-06-04"), 422, "comment_period_open"
    )
    assert refused["ends"] == "2026-07-02"
    shown = read(kit, plan, "2026-06-04")
    assert shown["impact"]["area_sqft"] == 9_500 and shown["required_credit_sqft"] == 19_000
    taken = ok(revise(kit, plan, lgu, 9_999, "2026-06-04", "2026-06-04"))
    assert taken["counts_as_new_application"] is False
    assert read(kit, plan, "2026-06-04")["impact"]["area_sqft"] == 9_999


def test_an_approval_made_after_the_comment_period_would_have_ended_may_reach_10_000(
    kit: Kit,
) -> None:
    """9,500 sq ft with its summary mailed 06-02, approved by a resolution adopted 07-03 (the
    day after the comment period a 10,000 sq ft plan would have had): revised to 10,000 sq ft,
    the approval is one that could have been given on its day."""
    lgu = kit.lgu()
    plan = noticed(kit, lgu, 9_500)
    ok(act(kit, plan, lgu, "decision", decision_body("approved", "2026-07-03"), "2026-07-03"))
    ok(revise(kit, plan, lgu, 10_000, "2026-07-06", "2026-07-06"))
    shown = read(kit, plan, "2026-07-06")
    assert shown["impact"]["area_sqft"] == 10_000 and shown["outcome"] == "approved"
    assert shown["deadlines"]["comment_period_ends"] == "2026-07-02"
    assert shown["decision"]["decided_on"] == "2026-07-03"


def test_a_resolution_adopted_inside_the_comment_period_holds_the_approval_below_10_000(
    kit: Kit,
) -> None:
    """Recorded as decided 07-06 but approved by a resolution adopted 07-02 (the comment
    period's last day): the resolution is the approval (Subd. 1 (b)), so 10,000 sq ft is
    refused."""
    lgu = kit.lgu()
    plan = noticed(kit, lgu, 9_500)
    body = decision_body("approved", "2026-07-06")
    body["resolution"]["adopted_on"] = "2026-07-02"
    ok(act(kit, plan, lgu, "decision", body, "2026-07-06"))
    refused = problem(
        revise(kit, plan, lgu, 10_000, "2026-07-06", "2026-07-06"), 422, "comment_period_open"
    )
    assert "2026-07-02" in refused["detail"]
    assert read(kit, plan, "2026-07-06")["impact"]["area_sqft"] == 9_500


def test_a_decision_is_made_no_earlier_than_the_revision_it_decides(kit: Kit) -> None:
    """12,000 sq ft noticed 06-02 and revised to 9,999 sq ft on 06-10: a decision dated 06-03
    (recorded 06-10) would approve the 12,000 sq ft application as it stood that day, inside
    its comment period; dated 06-10 it decides the 9,999 sq ft one."""
    lgu = kit.lgu()
    plan = noticed(kit, lgu, 12_000)
    ok(revise(kit, plan, lgu, 9_999, "2026-06-10", "2026-06-10"))
    early = problem(
        act(kit, plan, lgu, "decision", decision_body("approved", "2026-06-03"), "2026-06-10"),
        422,
        "validation_error",
    )
    assert early["errors"] == {"resolution": {"adopted_on": ["before the revision of 2026-06-10"]}}
    denied = decision_body("denied", "2026-06-09")
    early = problem(act(kit, plan, lgu, "decision", denied, "2026-06-10"), 422, "validation_error")
    assert early["errors"] == {"decided_on": ["before the revision of 2026-06-10"]}
    assert read(kit, plan, "2026-06-10")["decision"] is None
    ok(act(kit, plan, lgu, "decision", decision_body("approved", "2026-06-10"), "2026-06-10"))
    assert read(kit, plan, "2026-06-10")["impact"]["area_sqft"] == 9_999
