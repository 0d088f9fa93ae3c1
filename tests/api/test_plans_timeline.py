"""docs/http.md "Replacement plans and appeals": the statutory timeline (docs/domain.md §4), the
worked Hollis Township plan, every deadline one day before, on and one day after, notice kinds,
revisions, and who may act."""

from __future__ import annotations

import pytest
from freezegun import freeze_time

from tests.api.kit import Kit, decision_body, mailing, ok, on, problem, recipients_for


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def decide(kit: Kit, plan: dict, day: str, outcome: str = "approved", token=None):
    return kit.api.post(f"/plans/{plan['id']}/decision", decision_body(outcome, day), token=token)


def test_the_notice_of_decision_is_due_ten_days_after_the_resolution_adopted(kit):
    # the resolution is the approval (Subd. 1 (b)); Subd. 7's ten days run from it, however
    # much later the decision is recorded as made
    township = kit.lgu(kind="township")
    with on("2026-06-08"):
        plan = kit.plan(township, received_on="2026-06-08", area_sqft=9_000, ratio="2")
        kit.mail_summary(township, plan, "2026-06-08")
    body = decision_body("approved", "2026-07-01")
    body["resolution"]["adopted_on"] = "2026-06-22"
    with on("2026-07-01"):
        approved = ok(kit.api.post(f"/plans/{plan['id']}/decision", body, token=township["token"]))
    # Monday 06-22 + 10 days is Thursday 07-02, not 07-13 (ten days from decided_on 07-01)
    assert approved["deadlines"]["decision_notice_due"] == "2026-07-02"
    path = f"/plans/{plan['id']}/decision-notice"
    with on("2026-07-01"):
        early = kit.api.post(path, mailing("2026-06-19", plan=plan), token=township["token"])
        assert problem(early, 422, "validation_error")["errors"] == {"mailed_on": ["too early"]}
        assert kit.get_plan(plan["id"])["deadlines"]["appeal_window_ends"] is None  # not mailed
        # mailed after the resolution, before the decision was recorded as made: in time
        mailed = ok(kit.api.post(path, mailing("2026-06-26", plan=plan), token=township["token"]))
    assert mailed["late"] is False and mailed["due"] == "2026-07-02"


def test_a_decision_made_by_a_resolution_adopted_by_decision_due_is_in_time(kit):
    # decision due Friday 08-07; the governing body denied the plan by a resolution adopted that
    # day (Subd. 1 (b): the resolution is the decision), recorded as decided on Monday 08-10
    township = kit.lgu(kind="township")
    with on("2026-06-08"):
        plan = kit.plan(township, received_on="2026-06-08", area_sqft=9_000, ratio="2")
        kit.mail_summary(township, plan, "2026-06-08")
    path = f"/plans/{plan['id']}/decision"
    late = decision_body("denied", "2026-08-10", resolution={"number": "R-9", "adopted_on": ""})
    with on("2026-08-10"):
        late["resolution"]["adopted_on"] = "2026-08-08"
        refused = kit.api.post(path, late, token=township["token"])
        assert problem(refused, 422, "deadline_passed")["due"] == "2026-08-07"
        late["resolution"]["adopted_on"] = "2026-08-07"
        denied = ok(kit.api.post(path, late, token=township["token"]))
    assert denied["status"] == "denied" and denied["outcome"] == "denied"
    assert denied["deadlines"]["decision_notice_due"] == "2026-08-17"  # 10 days from 08-07
    with on("2026-08-10"):
        query = {"from": "2026-06-01", "to": "2026-06-30"}
        report = ok(kit.api.get("/reports/lgu-compliance", query_string=query), 200)
    (row,) = [item for item in report["items"] if item["lgu_id"] == township["id"]]
    assert row["decided_in_time"] == 1 and row["deemed_approved"] == 0


# --- the worked Hollis Township plan (9,000 sq ft) --------------------------------------------


def test_story_2_a_road_project_buys_and_uses_credits_on_every_date(kit):
    api = kit.api
    with on("2026-05-20"):
        prairie = kit.funded_account(
            day="2026-05-20",
            service_area=5,
            wetland_type="2",
            unrestricted=60_000,
            restricted=45_000,
            federally_approved=True,
        )
        prairie_lots = kit.lots_by_id(prairie["id"])
        hollis_holder = kit.holder("Hollis Township")
        hollis_account = kit.account(hollis_holder["id"], 5)
        for credit_class, amount in (
            (prairie["unrestricted_class"], 20_000),
            (prairie["restricted_class"], 8_000),
        ):
            ok(
                api.post(
                    "/transfers",
                    {
                        "from_account_id": prairie["id"],
                        "to_account_id": hollis_account,
                        "credit_class": credit_class,
                        "amount_sqft": amount,
                    },
                )
            )
        hollis_lots = kit.lots_by_id(hollis_account)
    # the lots in Hollis's account point back to Prairie Creek's lots and site, not resalable
    assert sorted(lot["posted_sqft"] for lot in hollis_lots.values()) == [8_000, 20_000]
    for lot in hollis_lots.values():
        assert lot["parent_lot_id"] in prairie_lots
        assert lot["bank_site_id"] == prairie["site_id"]
        assert lot["federally_approved"] is False

    township = kit.lgu(kind="township")
    # Monday 2026-06-08: 9,000 sq ft of type 2 in BSA 5 at 2:1
    with on("2026-06-08"):
        plan = kit.plan(township, received_on="2026-06-08", area_sqft=9_000, ratio="2")
    assert plan["status"] == "received" and plan["outcome"] is None
    assert plan["required_credit_sqft"] == 18_000
    assert plan["required_unrestricted_sqft"] == 9_000
    assert plan["notice_kind"] == "summary"
    assert plan["deadlines"] == {
        "notice_due": "2026-06-18",  # 10 days, a Thursday
        "comment_period_ends": None,  # < 10,000 sq ft: no comment period
        "decision_due": "2026-08-07",  # 60 days, a Friday
        "decision_notice_due": None,
        "appeal_window_ends": None,
    }

    with on("2026-06-10"):
        before = kit.balances(hollis_account)
        unrestricted = kit.reserve(
            hollis_account, plan["id"], prairie["unrestricted_class"], 10_000, "2026-09-30"
        )
        restricted = kit.reserve(
            hollis_account, plan["id"], prairie["restricted_class"], 8_000, "2026-09-30"
        )
        after = kit.balances(hollis_account)
    assert unrestricted["status"] == restricted["status"] == "pending"
    dropped = sum(before[c]["available_sqft"] - after[c]["available_sqft"] for c in before)
    assert dropped == 18_000  # available drops by 18,000 at once

    with on("2026-06-18"):
        notice = ok(
            api.post(
                f"/plans/{plan['id']}/notices",
                mailing("2026-06-18", plan=plan),
                token=township["token"],
            )
        )
        assert notice == {
            "mailed_on": "2026-06-18",
            "due": "2026-06-18",
            "late": False,
            "kind": "summary",
            "recipients": recipients_for(plan),
            "id": notice["id"],
        }
        assert kit.get_plan(plan["id"])["status"] == "noticed"

    with on("2026-07-01"):
        approved = ok(decide(kit, plan, "2026-07-01", token=township["token"]))
    assert approved["status"] == "approved" and approved["outcome"] == "approved"
    # 10 days after the decision is Saturday 2026-07-11 → Monday 2026-07-13
    assert approved["deadlines"]["decision_notice_due"] == "2026-07-13"
    assert approved["deadlines"]["appeal_window_ends"] is None

    with on("2026-07-02"):
        mailed = ok(
            api.post(
                f"/plans/{plan['id']}/decision-notice",
                mailing("2026-07-02", plan=plan),
                token=township["token"],
            )
        )
        assert mailed["late"] is False
        assert kit.get_plan(plan["id"])["deadlines"]["appeal_window_ends"] == "2026-07-17"
        withdrawal = ok(
            api.post(
                f"/plans/{plan['id']}/withdrawals",
                {"reservation_ids": [unrestricted["id"], restricted["id"]]},
                token=township["token"],
            )
        )
        posted = kit.balances(hollis_account)
    allocations = [
        (a["credit_class"], a["amount_sqft"], a["portion"]) for a in withdrawal["allocations"]
    ]
    assert sorted(allocations) == sorted(
        [
            ("BSA5-T2-R", 8_000, "above_1_to_1"),
            ("BSA5-T2-U", 9_000, "first_1_to_1"),
            ("BSA5-T2-U", 1_000, "above_1_to_1"),
        ]
    )
    assert withdrawal["withdrawn_sqft"] == 18_000
    # 18,000 posted, nothing left to release
    assert sum(before[c]["posted_sqft"] - posted[c]["posted_sqft"] for c in before) == 18_000
    assert sum(row["reserved_sqft"] for row in posted.values()) == 0

    with on("2026-07-17"):
        last_day = kit.get_plan(plan["id"])
    assert last_day["status"] == "approved"
    assert last_day["impact_may_proceed"] is False
    assert [b["code"] for b in last_day["impact_blockers"]] == ["decision_not_final"]

    # no petition by 2026-07-17: on 2026-07-18 the plan is final
    with on("2026-07-18"):
        final = kit.get_plan(plan["id"], token=township["token"])
    assert final["status"] == "final" and final["outcome"] == "approved"
    assert final["impact_may_proceed"] is True and final["impact_blockers"] == []
    assert {r["status"] for r in final["reservations"]} == {"posted"}


# --- the deadlines of story 3, one day before, on and one day after --------------------------

STORY_3 = {"received_on": "2026-06-17", "area_sqft": 25_000, "service_area": 7, "ratio": "2"}


def story_3_plan(kit: Kit, lgu: dict, *, notice: str | None = "2026-06-22") -> dict:
    """The worked contested plan: Wednesday 2026-06-17, 25,000 sq ft in BSA 7 at 2:1, noticed
    06-22."""
    with on("2026-06-17"):
        plan = kit.plan(lgu, **STORY_3)
    if notice:
        with on(notice):
            ok(
                kit.api.post(
                    f"/plans/{plan['id']}/notices", mailing(notice, plan=plan), token=lgu["token"]
                )
            )
    return plan


def test_story_3_a_full_notice_is_due_monday_and_the_comment_period_runs_30_days(kit):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu, notice=None)
    assert plan["notice_kind"] == "full"
    assert plan["required_credit_sqft"] == 50_000
    assert plan["deadlines"] == {
        "notice_due": "2026-06-29",  # Saturday 06-27 → Monday 06-29
        "comment_period_ends": None,  # null until the notice is mailed
        "decision_due": "2026-08-17",  # Sunday 08-16 → Monday 08-17
        "decision_notice_due": None,
        "appeal_window_ends": None,
    }
    with on("2026-06-22"):
        ok(api_notice(kit, plan, lgu, "2026-06-22"))
        noticed = kit.get_plan(plan["id"], token=lgu["token"])
    assert noticed["status"] == "noticed"
    assert noticed["notice"] == {
        "mailed_on": "2026-06-22",
        "due": "2026-06-29",
        "late": False,
        "kind": "full",
        "recipients": recipients_for(plan),
        "id": noticed["notice"]["id"],
    }
    assert noticed["deadlines"]["comment_period_ends"] == "2026-07-22"  # a Wednesday


def api_notice(kit: Kit, plan: dict, lgu: dict, day: str):
    return kit.api.post(f"/plans/{plan['id']}/notices", mailing(day, plan=plan), token=lgu["token"])


@pytest.mark.parametrize(
    ("mailed_on", "late"),
    [("2026-06-28", False), ("2026-06-29", False), ("2026-06-30", True)],
)
def test_a_notice_mailed_after_2026_06_29_is_recorded_and_flagged_late(kit, mailed_on, late):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu, notice=None)
    with on(mailed_on):
        notice = ok(api_notice(kit, plan, lgu, mailed_on))
        shown = kit.get_plan(plan["id"])
    assert notice == {
        "mailed_on": mailed_on,
        "due": "2026-06-29",
        "late": late,
        "kind": "full",
        "recipients": recipients_for(plan),
        "id": notice["id"],
    }
    assert shown["notice"]["late"] is late and shown["status"] == "noticed"


def test_a_second_application_notice_is_a_conflict(kit):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on("2026-06-23"):
        problem(api_notice(kit, plan, lgu, "2026-06-23"), 409, "conflict")


@pytest.mark.parametrize(
    ("decided_on", "status", "code"),
    [
        ("2026-07-21", 422, "comment_period_open"),
        ("2026-07-22", 422, "comment_period_open"),  # comment_period_ends itself
        ("2026-07-23", 201, None),
    ],
)
def test_a_decision_dated_on_or_before_2026_07_22_is_inside_the_comment_period(
    kit, decided_on, status, code
):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on(decided_on):
        response = decide(kit, plan, decided_on, token=lgu["token"])
        shown = kit.get_plan(plan["id"])
    if code:
        problem(response, status, code)
        assert shown["status"] == "noticed" and shown["decision"] is None
    else:
        assert ok(response, status)["status"] == "approved"


def test_a_plan_of_10_000_sq_ft_without_a_notice_cannot_be_decided(kit):
    lgu = kit.lgu()
    with on("2026-07-23"):
        plan = kit.plan(lgu, received_on="2026-06-17", area_sqft=10_000)
        problem(decide(kit, plan, "2026-07-23", token=lgu["token"]), 422, "comment_period_open")


@pytest.mark.parametrize(
    ("decided_on", "recorded_on", "status", "code"),
    [
        ("2026-08-16", "2026-08-16", 201, None),
        ("2026-08-17", "2026-08-17", 201, None),  # decision_due itself
        ("2026-08-17", "2026-08-25", 201, None),  # dated in time, recorded later
        ("2026-08-18", "2026-08-18", 422, "deadline_passed"),
    ],
)
def test_a_decision_dated_after_decision_due_2026_08_17_is_deadline_passed(
    kit, decided_on, recorded_on, status, code
):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on(recorded_on):
        response = decide(kit, plan, decided_on, outcome="denied", token=lgu["token"])
    if code:
        body = problem(response, status, code)
        assert "2026-08-17" in body["detail"]
    else:
        body = ok(response, status)
        assert body["status"] == "denied" and body["outcome"] == "denied"
        assert body["decision"]["decided_on"] == decided_on


@pytest.mark.parametrize(
    ("today", "status", "outcome"),
    [
        ("2026-08-16", "noticed", None),
        ("2026-08-17", "noticed", None),  # decision_due itself
        ("2026-08-18", "deemed_approved", "deemed_approved"),
    ],
)
def test_an_undecided_plan_is_deemed_approved_the_day_after_2026_08_17(kit, today, status, outcome):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on(today):
        shown = kit.get_plan(plan["id"], token=lgu["token"])
    assert shown["status"] == status and shown["outcome"] == outcome
    # Subd. 9 runs the window from the postmark of a notice of decision: none was mailed
    assert shown["deadlines"]["appeal_window_ends"] is None


@pytest.mark.parametrize(
    ("today", "status"),
    [
        # with no notice mailed a deemed approval stays deemed_approved: it is not final on
        # 2026-09-02, 15 days after decision_due
        ("2026-09-02", "deemed_approved"),
        ("2026-11-15", "deemed_approved"),
        # a notice postmarked Tuesday 2026-08-18 opens the window to Wednesday 2026-09-02
        ("2026-09-02 noticed", "deemed_approved"),
        ("2026-09-03 noticed", "final"),
    ],
)
def test_a_deemed_approval_is_final_only_15_days_after_the_postmark_of_its_notice(
    kit, today, status
):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    day, _, noticed = today.partition(" ")
    if noticed:
        with on("2026-08-18"):
            ok(mail_decision_notice(kit, plan, lgu, "2026-08-18"))
    with on(day):
        shown = kit.get_plan(plan["id"])
    assert shown["status"] == status and shown["outcome"] == "deemed_approved"
    assert shown["deadlines"]["appeal_window_ends"] == ("2026-09-02" if noticed else None)


def test_a_decision_after_a_deemed_approval_is_deadline_passed_not_conflict(kit):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on("2026-08-20"):
        problem(decide(kit, plan, "2026-08-20", token=lgu["token"]), 422, "deadline_passed")
        assert kit.get_plan(plan["id"])["status"] == "deemed_approved"


def test_deciding_twice_is_a_conflict_and_the_first_decision_stands(kit):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on("2026-07-23"):
        ok(decide(kit, plan, "2026-07-23", token=lgu["token"]))
        problem(decide(kit, plan, "2026-07-23", "denied", token=lgu["token"]), 409, "conflict")
        shown = kit.get_plan(plan["id"])
    assert shown["outcome"] == "approved"
    assert shown["decision"]["decided_on"] == "2026-07-23"


def test_a_decision_dated_in_the_future_is_a_validation_error(kit):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on("2026-07-23"):
        body = problem(decide(kit, plan, "2026-07-24", token=lgu["token"]), 422, "validation_error")
    assert "decided_on" in body["errors"]


# --- the 15.99 extension ----------------------------------------------------------------------


def extend(kit: Kit, plan: dict, lgu: dict, day: str, days: int):
    return kit.api.post(
        f"/plans/{plan['id']}/extensions",
        {"notified_on": day, "days": days, "reason": "the TEP asked for a site visit"},
        token=lgu["token"],
    )


def test_story_3_a_30_day_extension_sent_2026_08_10_moves_the_decision_to_2026_09_15(kit):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on("2026-08-10"):
        assert kit.get_plan(plan["id"])["deadlines"]["decision_due"] == "2026-08-17"
        extension = ok(extend(kit, plan, lgu, "2026-08-10", 30))
        shown = kit.get_plan(plan["id"])
    assert extension["decision_due"] == "2026-09-15"  # 2026-06-17 + 90, a Tuesday
    assert shown["deadlines"]["decision_due"] == "2026-09-15"
    assert [e["days"] for e in shown["extensions"]] == [30]
    # no longer deemed approved on 2026-08-18, but on 2026-09-16
    with on("2026-09-15"):
        assert kit.get_plan(plan["id"])["status"] == "noticed"
    with on("2026-09-16"):
        assert kit.get_plan(plan["id"])["status"] == "deemed_approved"


@pytest.mark.parametrize(
    ("notified_on", "status", "code"),
    [
        ("2026-08-16", 201, None),
        ("2026-08-17", 201, None),  # decision_due itself
        ("2026-08-18", 422, "deadline_passed"),
    ],
)
def test_an_extension_sent_after_decision_due_2026_08_17_is_deadline_passed(
    kit, notified_on, status, code
):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on(notified_on):
        response = extend(kit, plan, lgu, notified_on, 60)
    if code:
        problem(response, status, code)
    else:
        # 60 days more: 2026-06-17 + 120 = Thursday 2026-10-15
        assert ok(response, status)["decision_due"] == "2026-10-15"


def test_after_an_agreed_extension_the_lgus_own_is_still_sent_within_the_first_60_days(kit):
    """15.99 subd. 3 (f): the LGU extends "before the end of the initial time limit". The
    applicant agreed to 30 more days (decision due 09-15); the LGU's own extension sent on
    08-20, after the first 60 days ended (Monday 08-17), is refused and changes nothing: the plan
    is deemed approved from 09-16."""
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on("2026-08-10"):
        agreed = {
            "notified_on": "2026-08-10",
            "days": 30,
            "reason": "the applicant asked for time to revise",
            "applicant_agreed": True,
        }
        path = f"/plans/{plan['id']}/extensions"
        assert ok(kit.api.post(path, agreed, token=lgu["token"]))["decision_due"] == "2026-09-15"
    with on("2026-08-20"):
        refused = problem(extend(kit, plan, lgu, "2026-08-20", 60), 422, "deadline_passed")
        assert (refused["deadline"], refused["due"]) == ("initial_decision_due", "2026-08-17")
        shown = kit.get_plan(plan["id"])
    assert shown["deadlines"]["decision_due"] == "2026-09-15"
    assert [e["days"] for e in shown["extensions"]] == [30]
    with on("2026-09-16"):
        assert kit.get_plan(plan["id"])["status"] == "deemed_approved"


def test_a_second_extension_without_the_applicants_agreement_is_a_conflict(kit):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on("2026-08-10"):
        ok(extend(kit, plan, lgu, "2026-08-10", 10))
        problem(extend(kit, plan, lgu, "2026-08-10", 10), 409, "conflict")
        assert [e["days"] for e in kit.get_plan(plan["id"])["extensions"]] == [10]


@pytest.mark.parametrize(("days", "status"), [(0, 422), (60, 201), (61, 422)])
def test_an_extension_is_1_to_60_days(kit, days, status):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on("2026-08-10"):
        response = extend(kit, plan, lgu, "2026-08-10", days)
    if status == 422:
        problem(response, 422, "validation_error")
    else:
        ok(response)


# --- the notice of decision and the appeal window ------------------------------------------


def mail_decision_notice(kit: Kit, plan: dict, lgu: dict, day: str):
    return kit.api.post(
        f"/plans/{plan['id']}/decision-notice", mailing(day, plan=plan), token=lgu["token"]
    )


def test_a_notice_of_decision_before_the_decision_is_a_conflict(kit):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on("2026-07-23"):
        problem(mail_decision_notice(kit, plan, lgu, "2026-07-23"), 409, "conflict")


@pytest.mark.parametrize(
    ("mailed_on", "late"),
    [("2026-08-02", False), ("2026-08-03", False), ("2026-08-04", True)],
)
def test_a_notice_of_decision_after_2026_08_03_is_recorded_and_flagged_late(kit, mailed_on, late):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on("2026-07-24"):
        decided = ok(decide(kit, plan, "2026-07-24", token=lgu["token"]))
    # 10 days after 2026-07-24 is Monday 2026-08-03
    assert decided["deadlines"]["decision_notice_due"] == "2026-08-03"
    with on(mailed_on):
        notice = ok(mail_decision_notice(kit, plan, lgu, mailed_on))
        shown = kit.get_plan(plan["id"])
    assert notice == {
        "mailed_on": mailed_on,
        "due": "2026-08-03",
        "late": late,
        "kind": "summary",
        "recipients": recipients_for(plan),
        "id": notice["id"],
    }
    assert shown["decision_notice"]["late"] is late


@pytest.mark.parametrize(
    ("mailed_on", "late"),
    [("2026-08-27", False), ("2026-08-28", True)],
)
def test_a_notice_of_a_deemed_approval_is_due_10_days_after_decision_due(kit, mailed_on, late):
    """Subd. 7: "within ten days of the approval": a deemed approval's notice is due ten days
    after the last day to decide (Monday 2026-08-17), Thursday 2026-08-27, once the plan is
    deemed approved; the plan flags a later one, as the compliance report counts it."""
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on("2026-08-17"):
        assert kit.get_plan(plan["id"])["deadlines"]["decision_notice_due"] is None
    with on("2026-08-18"):
        assert kit.get_plan(plan["id"])["deadlines"]["decision_notice_due"] == "2026-08-27"
    with on(mailed_on):
        notice = ok(mail_decision_notice(kit, plan, lgu, mailed_on))
        shown = kit.get_plan(plan["id"])
        report = ok(kit.api.get("/reports/lgu-compliance?from=2026-06-01&to=2026-06-30"), 200)
    assert (notice["due"], notice["late"]) == ("2026-08-27", late)
    assert shown["decision_notice"]["late"] is late
    (row,) = [item for item in report["items"] if item["lgu_id"] == lgu["id"]]
    assert row["decision_notices_late"] == int(late)


@pytest.mark.parametrize(
    ("today", "status"),
    [
        ("2026-09-18", "approved"),
        ("2026-09-19", "approved"),
        ("2026-09-21", "approved"),  # appeal_window_ends: Saturday 09-19 → Monday 09-21
        ("2026-09-22", "final"),
    ],
)
def test_story_3_an_approval_is_final_the_day_after_its_window_ends_2026_09_21(kit, today, status):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on("2026-08-10"):
        ok(extend(kit, plan, lgu, "2026-08-10", 30))
    with on("2026-09-01"):
        approved = ok(decide(kit, plan, "2026-09-01", token=lgu["token"]))
    assert approved["deadlines"]["decision_notice_due"] == "2026-09-11"
    with on("2026-09-04"):
        ok(mail_decision_notice(kit, plan, lgu, "2026-09-04"))
    with on(today):
        shown = kit.get_plan(plan["id"])
    assert shown["deadlines"]["appeal_window_ends"] == "2026-09-21"
    assert shown["status"] == status and shown["outcome"] == "approved"


def test_a_denial_is_final_after_its_window_and_the_impact_may_not_proceed(kit):
    lgu = kit.lgu()
    with on("2026-06-08"):
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000)
        kit.mail_summary(lgu, plan, "2026-06-08")
    with on("2026-07-01"):
        ok(decide(kit, plan, "2026-07-01", "denied", token=lgu["token"]))
        ok(mail_decision_notice(kit, plan, lgu, "2026-07-01"))
    with on("2026-07-16"):
        assert kit.get_plan(plan["id"])["status"] == "denied"
    with on("2026-07-17"):
        shown = kit.get_plan(plan["id"])
    assert shown["status"] == "final" and shown["outcome"] == "denied"
    assert shown["impact_may_proceed"] is False
    assert "not_approved" in [b["code"] for b in shown["impact_blockers"]]


# --- calendars: the LGU's for its acts, the board's for the window --------------------------


@pytest.mark.parametrize(("observes", "due"), [(False, "2026-10-12"), (True, "2026-10-13")])
def test_a_decision_due_on_indigenous_peoples_day_moves_only_for_an_lgu_that_observes_it(
    kit, observes, due
):
    lgu = kit.lgu(observes_indigenous_peoples_day=observes)
    with on("2026-08-13"):
        plan = kit.plan(lgu, received_on="2026-08-13", area_sqft=9_000)  # + 60 = Mon 10-12
    assert plan["deadlines"]["decision_due"] == due


def test_an_appeal_window_ending_the_friday_after_thanksgiving_runs_to_monday_for_the_board(kit):
    lgu = kit.lgu(observes_friday_after_thanksgiving=False)
    with on("2026-11-12"):
        plan = kit.plan(lgu, received_on="2026-11-12", area_sqft=9_000)
        kit.mail_summary(lgu, plan, "2026-11-12")
        ok(decide(kit, plan, "2026-11-12", token=lgu["token"]))
        ok(mail_decision_notice(kit, plan, lgu, "2026-11-12"))
        shown = kit.get_plan(plan["id"])
    # 15 days after 2026-11-12 is Friday 2026-11-27, which the board observes
    assert shown["deadlines"]["appeal_window_ends"] == "2026-11-30"


# --- plans of 9,999 and 10,000 sq ft ------------------------------------------------------------


@pytest.mark.parametrize(
    ("area", "kind", "comment_ends"),
    [(9_999, "summary", None), (10_000, "full", "2026-07-22")],
)
def test_below_10_000_sq_ft_a_summary_notice_and_no_comment_period(kit, area, kind, comment_ends):
    lgu = kit.lgu()
    with on("2026-06-22"):
        plan = kit.plan(lgu, received_on="2026-06-17", area_sqft=area)
        ok(api_notice(kit, plan, lgu, "2026-06-22"))
        shown = kit.get_plan(plan["id"])
    assert plan["notice_kind"] == shown["notice_kind"] == kind
    assert shown["deadlines"]["comment_period_ends"] == comment_ends
    with on("2026-06-23"):
        response = decide(kit, plan, "2026-06-23", token=lgu["token"])
    if comment_ends:
        problem(response, 422, "comment_period_open")
    else:
        assert ok(response)["status"] == "approved"


@pytest.mark.parametrize("mailed_on", ["2026-06-17", "2026-06-29", "2026-06-30"])
def test_a_plan_of_9_999_sq_ft_is_decided_once_its_summary_is_recorded(kit, mailed_on):
    """Subd. 6 (b): no comment period, but the summary is mailed (due Monday 06-29, 06-27 being
    a Saturday); once decided, no notice of application can be recorded, so the decision waits
    for it: refused without it, nothing recorded; after it, in time or late, accepted."""
    lgu = kit.lgu()
    with on("2026-06-17"):
        plan = kit.plan(lgu, received_on="2026-06-17", area_sqft=9_999)
    with on(mailed_on):
        refused = problem(
            decide(kit, plan, mailed_on, token=lgu["token"]), 422, "comment_period_open"
        )
        assert (refused["deadline"], refused["due"]) == ("notice_due", "2026-06-29")
        assert "Subd. 6 (b)" in refused["detail"]
        shown = kit.get_plan(plan["id"])
        assert (shown["status"], shown["decision"]) == ("received", None)
        noticed = ok(api_notice(kit, plan, lgu, mailed_on))
        assert noticed["late"] is (mailed_on == "2026-06-30")
        assert ok(decide(kit, plan, mailed_on, token=lgu["token"]))["status"] == "approved"


# --- revised applications (Subd. 6 (c)) ------------------------------------------------------


def revise(kit: Kit, plan: dict, lgu: dict, area: int, feet: int, day: str):
    return kit.api.post(
        f"/plans/{plan['id']}/revisions",
        {"area_sqft": area, "displacement_ft": feet, "received_on": day},
        token=lgu["token"],
    )


@pytest.mark.parametrize(
    ("area", "feet", "counts"),
    [
        (10_999, 0, False),  # +9.99%
        (11_000, 0, True),  # +10% exactly counts
        (10_000, 500, False),  # 500 feet exactly does not
        (10_000, 501, True),
    ],
)
def test_a_revision_of_a_10_000_sq_ft_plan_counts_as_new_at_10_percent_or_501_feet(
    kit, area, feet, counts
):
    lgu = kit.lgu()
    with on("2026-06-22"):
        plan = kit.plan(lgu, received_on="2026-06-17", area_sqft=10_000)
        ok(api_notice(kit, plan, lgu, "2026-06-22"))
    with on("2026-07-01"):
        revision = ok(revise(kit, plan, lgu, area, feet, "2026-07-01"))
        shown = kit.get_plan(plan["id"])
    assert revision["counts_as_new_application"] is counts
    assert revision["previous_area_sqft"] == 10_000
    assert shown["impact"]["area_sqft"] == area
    assert shown["first_received_on"] == "2026-06-17"
    if counts:
        # a new application: received_on restarts every clock, the notice must be mailed again
        assert shown["received_on"] == revision["plan_received_on"] == "2026-07-01"
        assert shown["status"] == "received" and shown["notice"] is None
        assert shown["deadlines"] == {
            "notice_due": "2026-07-13",  # Saturday 07-11 → Monday 07-13
            "comment_period_ends": None,
            "decision_due": "2026-08-31",  # Sunday 08-30 → Monday 08-31
            "decision_notice_due": None,
            "appeal_window_ends": None,
        }
    else:
        assert shown["received_on"] == "2026-06-17"
        assert shown["status"] == "noticed" and shown["notice"]["mailed_on"] == "2026-06-22"
        assert shown["deadlines"]["notice_due"] == "2026-06-29"
        assert shown["deadlines"]["comment_period_ends"] == "2026-07-22"
        assert shown["deadlines"]["decision_due"] == "2026-08-17"


def test_revisions_are_compared_with_the_application_as_last_received_as_new(kit):
    lgu = kit.lgu()
    with on("2026-06-22"):
        plan = kit.plan(lgu, received_on="2026-06-17", area_sqft=10_000)
    with on("2026-07-01"):
        first = ok(revise(kit, plan, lgu, 10_999, 0, "2026-07-01"))
    with on("2026-07-02"):
        second = ok(revise(kit, plan, lgu, 11_000, 0, "2026-07-02"))
    with on("2026-07-03"):
        third = ok(revise(kit, plan, lgu, 12_099, 0, "2026-07-03"))
    assert first["counts_as_new_application"] is False
    assert first["plan_received_on"] == "2026-06-17"
    # 11,000 is 10% larger than the 10,000 sq ft last received as new, not than 10,999
    assert second["counts_as_new_application"] is True
    assert second["previous_area_sqft"] == 10_000
    assert second["plan_received_on"] == "2026-07-02"
    # and 12,099 is less than 10% larger than the 11,000 sq ft now received as new
    assert third["counts_as_new_application"] is False
    assert third["previous_area_sqft"] == 11_000
    assert third["plan_received_on"] == "2026-07-02"


def test_a_counting_revision_drops_the_extension_of_the_old_application(kit):
    lgu = kit.lgu()
    plan = story_3_plan(kit, lgu)
    with on("2026-08-10"):
        ok(extend(kit, plan, lgu, "2026-08-10", 30))
        ok(revise(kit, plan, lgu, 27_500, 0, "2026-08-10"))
        shown = kit.get_plan(plan["id"])
    assert shown["extensions"] == []
    # 2026-08-10 + 60 = Friday 2026-10-09
    assert shown["deadlines"]["decision_due"] == "2026-10-09"


def test_a_revision_counting_as_new_before_the_approval_is_final_is_a_conflict(kit):
    lgu = kit.lgu()
    with on("2026-06-17"):
        plan = kit.approved_plan(lgu, "2026-06-17")
        problem(revise(kit, plan, lgu, 20_000, 0, "2026-06-17"), 409, "conflict")
        assert kit.get_plan(plan["id"])["impact"]["area_sqft"] == 9_000


# --- who may see and act on a plan -------------------------------------------------------------


def test_an_lgu_files_plans_for_itself_whatever_lgu_id_it_names(kit):
    mine, other = kit.lgu(), kit.lgu()
    with on("2026-06-17"):
        body = kit.plan_body(received_on="2026-06-17", area_sqft=9_000, lgu_id=other["id"])
        plan = ok(kit.api.post("/plans", body, token=mine["token"]))
    assert plan["lgu_id"] == mine["id"]


def test_the_board_names_the_lgu_of_a_plan_it_files(kit):
    lgu = kit.lgu()
    with on("2026-06-17"):
        body = kit.plan_body(received_on="2026-06-17", area_sqft=9_000)
        problem(kit.api.post("/plans", body), 422, "validation_error")
        plan = ok(kit.api.post("/plans", {**body, "lgu_id": lgu["id"]}))
        # the board may act for any LGU
        ok(kit.api.post(f"/plans/{plan['id']}/notices", mailing("2026-06-17", plan=plan)))
        assert ok(decide(kit, plan, "2026-06-17"))["status"] == "approved"
    assert plan["lgu_id"] == lgu["id"]
    assert kit.get_plan(plan["id"], token=lgu["token"])["id"] == plan["id"]


def test_another_lgus_plan_is_not_found_for_reading_or_acting(kit):
    owner, stranger = kit.lgu(), kit.lgu()
    plan = story_3_plan(kit, owner, notice=None)
    token = stranger["token"]
    with on("2026-06-22"):
        problem(kit.api.get(f"/plans/{plan['id']}", token=token), 404, "not_found")
        problem(api_notice(kit, plan, stranger, "2026-06-22"), 404, "not_found")
        problem(extend(kit, plan, stranger, "2026-06-22", 30), 404, "not_found")
        problem(revise(kit, plan, stranger, 30_000, 0, "2026-06-22"), 404, "not_found")
        problem(mail_decision_notice(kit, plan, stranger, "2026-06-22"), 404, "not_found")
        problem(
            kit.api.post(
                f"/plans/{plan['id']}/withdrawals", {"reservation_ids": ["res_x"]}, token=token
            ),
            404,
            "not_found",
        )
        listed = ok(kit.api.get("/plans", token=token), 200)["items"]
        assert kit.get_plan(plan["id"])["notice"] is None  # nothing was written
    assert plan["id"] not in [p["id"] for p in listed]
    with on("2026-07-23"):
        problem(decide(kit, plan, "2026-07-23", token=token), 404, "not_found")


def test_an_lgu_lists_its_own_plans_by_status(kit):
    lgu = kit.lgu()
    with on("2026-06-22"):
        received = kit.plan(lgu, received_on="2026-06-17", area_sqft=9_000)
        approved = kit.approved_plan(lgu, "2026-06-22")
        everything = ok(kit.api.get("/plans", token=lgu["token"]), 200)["items"]
        only = ok(kit.api.get("/plans?status=approved", token=lgu["token"]), 200)["items"]
    assert {p["id"] for p in everything} == {received["id"], approved["id"]}
    assert [p["id"] for p in only] == [approved["id"]]


def test_a_holder_may_not_write_plans(kit):
    lgu, holder = kit.lgu(), kit.holder()
    plan = story_3_plan(kit, lgu, notice=None)
    token = holder["token"]
    with on("2026-07-23"):
        body = kit.plan_body(received_on="2026-07-23", area_sqft=9_000, lgu_id=lgu["id"])
        problem(kit.api.post("/plans", body, token=token), 403, "forbidden")
        for path, payload in (
            ("notices", {"mailed_on": "2026-07-23"}),
            ("extensions", {"notified_on": "2026-07-23", "days": 30, "reason": "x"}),
            ("decision", {"outcome": "approved", "decided_on": "2026-07-23"}),
            ("decision-notice", {"mailed_on": "2026-07-23"}),
            ("revisions", {"area_sqft": 30_000, "displacement_ft": 0, "received_on": "2026-07-23"}),
            ("withdrawals", {"reservation_ids": ["res_x"]}),
        ):
            response = kit.api.post(f"/plans/{plan['id']}/{path}", payload, token=token)
            problem(response, 403, "forbidden")
        assert kit.get_plan(plan["id"])["status"] == "received"


@pytest.mark.parametrize(
    ("utc", "status"),
    [("2026-07-18 04:59:00", "approved"), ("2026-07-18 05:00:00", "final")],
)
def test_today_is_the_minnesota_date_so_the_plan_turns_final_at_midnight_in_st_paul(
    kit, utc, status
):
    lgu = kit.lgu()
    with on("2026-07-02"):
        plan = kit.approved_plan(lgu, "2026-07-02")
        ok(mail_decision_notice(kit, plan, lgu, "2026-07-02"))  # window ends Friday 07-17
    with freeze_time(utc, tz_offset=0):  # 23:59 and 00:00 Central Daylight Time
        assert kit.get_plan(plan["id"])["status"] == status


def test_a_holder_does_not_see_plans(kit):
    lgu, holder = kit.lgu(), kit.holder()
    with on("2026-06-17"):
        plan = kit.plan(lgu, received_on="2026-06-17", area_sqft=9_000)
        # the role may not read plans at all: 403 for a real plan and a missing one alike, so
        # the answer says nothing of which plans exist
        problem(kit.api.get(f"/plans/{plan['id']}", token=holder["token"]), 403, "forbidden")
        problem(kit.api.get("/plans/plan_nope", token=holder["token"]), 403, "forbidden")
        problem(kit.api.get("/plans", token=holder["token"]), 403, "forbidden")
