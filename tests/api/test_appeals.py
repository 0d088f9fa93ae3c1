"""API.md "Appeals" (Subd. 9): EXAMPLES.md story 3, the appeal window, the fee and security, who
may petition, the board's deadlines, reversals, and who may act on appeals."""

from __future__ import annotations

import pytest

from tests.api.plan_kit import Kit, ok, on, problem


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def post_as(kit: Kit, path: str, body: dict, day: str, token=None):
    with on(day):
        return kit.api.post(path, body, token=token)


def petition(
    kit: Kit,
    plan: dict,
    *,
    postmarked: str = "2026-09-21",
    received: str = "2026-09-24",
    kind: str = "residents",
    residents: int | None = 100,
    fee: int = 20_000,
    security: int | None = None,
    token=None,
):
    body = {
        "petitioner_kind": kind,
        "postmarked_on": postmarked,
        "received_on": received,
        "filing_fee_cents": fee,
    }
    if residents is not None:
        body["resident_count"] = residents
    if security is not None:
        body["security_cents"] = security
    return post_as(kit, f"/plans/{plan['id']}/appeals", body, received, token)


def grant(kit: Kit, appeal: dict, day: str, granted: bool = True, token=None):
    body = {"granted": granted, "decided_on": day, "reason": "raises a question of public value"}
    return post_as(kit, f"/appeals/{appeal['id']}/petition", body, day, token)


def rule(kit: Kit, appeal: dict, day: str, outcome: str = "plan_reversed", token=None):
    body = {"outcome": outcome, "decided_on": day}
    return post_as(kit, f"/appeals/{appeal['id']}/decision", body, day, token)


def noticed_decision(kit: Kit, lgu: dict, outcome: str = "approved") -> dict:
    """A small plan received and decided on 2026-09-01, its decision notice postmarked Friday
    2026-09-04: the appeal window ends Saturday 09-19 → Monday 2026-09-21, as in story 3."""
    with on("2026-09-01"):
        plan = kit.plan(lgu, received_on="2026-09-01", area_sqft=9_000)
        body = {"outcome": outcome, "decided_on": "2026-09-01"}
        ok(kit.api.post(f"/plans/{plan['id']}/decision", body, token=lgu["token"]))
    with on("2026-09-04"):
        path = f"/plans/{plan['id']}/decision-notice"
        ok(kit.api.post(path, {"mailed_on": "2026-09-04"}, token=lgu["token"]))
    return plan


def granted_appeal(kit: Kit, lgu: dict, outcome: str = "approved") -> tuple[dict, dict]:
    plan = noticed_decision(kit, lgu, outcome)
    appeal = ok(petition(kit, plan))
    ok(grant(kit, appeal, "2026-10-06"))
    return plan, appeal


# --- EXAMPLES.md story 3 -----------------------------------------------------------------------


def test_story_3_a_contested_plan_is_reversed_and_its_credits_return_to_their_lots(kit):
    api = kit.api
    lgu = kit.lgu()
    with on("2026-06-01"):
        developer = kit.funded_account(
            day="2026-06-01",
            service_area=7,
            wetland_type="3",
            unrestricted=30_000,
            restricted=20_000,
        )
        lots_before = kit.available(developer["id"])
    assert sorted(lots_before.values()) == [20_000, 30_000]

    # Wednesday 2026-06-17: 25,000 sq ft in BSA 7 at 2:1
    with on("2026-06-17"):
        plan = kit.plan(
            lgu, received_on="2026-06-17", area_sqft=25_000, service_area=7, wetland_type="3"
        )
    pid = plan["id"]
    assert plan["status"] == "received"
    assert plan["notice_kind"] == "full"
    assert plan["required_credit_sqft"] == 50_000
    assert plan["required_unrestricted_sqft"] == 25_000
    assert plan["deadlines"] == {
        "notice_due": "2026-06-29",  # Saturday 06-27 → Monday 06-29
        "comment_period_ends": None,
        "decision_due": "2026-08-17",  # Sunday 08-16 → Monday 08-17
        "decision_notice_due": None,
        "appeal_window_ends": None,
    }

    with on("2026-06-22"):
        notice = ok(
            api.post(f"/plans/{pid}/notices", {"mailed_on": "2026-06-22"}, token=lgu["token"])
        )
        noticed = kit.get_plan(pid)
    assert notice["late"] is False
    assert noticed["status"] == "noticed"
    assert noticed["deadlines"]["comment_period_ends"] == "2026-07-22"

    # a decision dated 2026-07-22 or earlier is inside the comment period
    problem(
        post_as(
            kit,
            f"/plans/{pid}/decision",
            {"outcome": "approved", "decided_on": "2026-07-22"},
            "2026-07-22",
            lgu["token"],
        ),
        422,
        "comment_period_open",
    )

    with on("2026-08-10"):
        extension = ok(
            api.post(
                f"/plans/{pid}/extensions",
                {"notified_on": "2026-08-10", "days": 30, "reason": "awaiting the TEP"},
                token=lgu["token"],
            )
        )
    assert extension["decision_due"] == "2026-09-15"  # 2026-06-17 + 90, a Tuesday

    with on("2026-08-20"):
        u = kit.reserve(developer["id"], pid, developer["unrestricted_class"], 30_000)
        r = kit.reserve(developer["id"], pid, developer["restricted_class"], 20_000)
        assert kit.get_plan(pid)["status"] == "noticed"  # not deemed: the extension holds

    with on("2026-09-01"):
        approved = ok(
            api.post(
                f"/plans/{pid}/decision",
                {
                    "outcome": "approved",
                    "decided_on": "2026-09-01",
                    "tep_recommendation": "approve",
                },
                token=lgu["token"],
            )
        )
    assert approved["status"] == "approved" and approved["outcome"] == "approved"
    assert approved["deadlines"]["decision_notice_due"] == "2026-09-11"
    assert approved["deadlines"]["appeal_window_ends"] is None
    assert approved["decision"]["tep_recommendation"] == "approve"

    with on("2026-09-04"):
        mailed = ok(
            api.post(
                f"/plans/{pid}/decision-notice", {"mailed_on": "2026-09-04"}, token=lgu["token"]
            )
        )
        withdrawal = ok(
            api.post(
                f"/plans/{pid}/withdrawals",
                {"reservation_ids": [u["id"], r["id"]]},
                token=lgu["token"],
            )
        )
        withdrawn = kit.available(developer["id"])
    assert mailed == {"mailed_on": "2026-09-04", "due": "2026-09-11", "late": False}
    assert sorted(
        (a["credit_class"], a["amount_sqft"], a["portion"]) for a in withdrawal["allocations"]
    ) == [
        ("BSA7-T3-R", 20_000, "above_1_to_1"),
        ("BSA7-T3-U", 5_000, "above_1_to_1"),
        ("BSA7-T3-U", 25_000, "first_1_to_1"),
    ]
    assert withdrawal["withdrawn_sqft"] == 50_000
    assert withdrawn == {lot: 0 for lot in lots_before}

    with on("2026-09-21"):
        last_day = kit.get_plan(pid)
    assert last_day["deadlines"]["appeal_window_ends"] == "2026-09-21"  # Sat 09-19 → Mon 09-21
    assert last_day["status"] == "approved"
    with on("2026-09-22"):
        assert kit.get_plan(pid)["status"] == "final"

    # 100 county residents, postmarked 2026-09-21, received 2026-09-24: timely
    appeal = ok(
        petition(kit, plan, postmarked="2026-09-21", received="2026-09-24", security=50_000)
    )
    assert appeal["status"] == "petition_received"
    assert appeal["grant_decision_due"] == "2026-10-26"  # Saturday 10-24 → Monday 10-26
    assert appeal["decision_due"] is None
    with on("2026-09-24"):
        fee = ok(
            api.post(
                "/payments",
                {
                    "kind": "appeal_filing_fee",
                    "amount_cents": 20_000,
                    "payer": "Residents",
                    "received_on": "2026-09-24",
                    "appeal_id": appeal["id"],
                },
            )
        )
        security = ok(
            api.post(
                "/payments",
                {
                    "kind": "appeal_security",
                    "amount_cents": 50_000,
                    "payer": "Residents",
                    "received_on": "2026-09-24",
                    "appeal_id": appeal["id"],
                },
            )
        )
        reopened = kit.get_plan(pid)
    assert reopened["status"] == "appealed"  # the timely petition reopens the final plan
    assert reopened["impact_may_proceed"] is False

    granted = ok(grant(kit, appeal, "2026-10-06"))
    assert granted["status"] == "granted"
    assert granted["petition"]["late"] is False
    assert granted["decision_due"] == "2026-12-07"  # Saturday 12-05 → Monday 12-07
    with on("2026-10-06"):
        assert ok(api.get(f"/payments/{security['id']}"), 200)["status"] == "returned"
        assert ok(api.get(f"/payments/{fee['id']}"), 200)["status"] == "received"
        assert kit.get_plan(pid)["status"] == "appealed"

    reversed_ = ok(rule(kit, appeal, "2026-11-30", "plan_reversed"))
    assert reversed_["status"] == "decided"
    assert reversed_["decision"] == {
        "outcome": "plan_reversed",
        "decided_on": "2026-11-30",
        "late": False,
    }
    with on("2026-11-30"):
        final = kit.get_plan(pid, token=lgu["token"])
        restored = kit.available(developer["id"])
        lots_after = kit.lots(developer["id"])
    assert final["outcome"] == "denied"
    assert final["reversed_on_appeal"] is True
    assert final["status"] == "final"
    assert final["impact_may_proceed"] is False
    assert final["withdrawals"][0]["reversal_transaction_id"]
    # the credits return to the lots they came from
    assert restored == lots_before
    assert {lot: lots_after[lot]["posted_sqft"] for lot in lots_before} == lots_before

    # false for good
    with on("2027-06-01"):
        later = kit.get_plan(pid)
    assert later["impact_may_proceed"] is False and later["outcome"] == "denied"
    with on("2027-06-01"):
        body = {
            "plan_id": pid,
            "credit_class": developer["unrestricted_class"],
            "amount_sqft": 1_000,
            "expires_on": "2027-12-31",
        }
        problem(api.post(f"/accounts/{developer['id']}/reservations", body), 409, "conflict")


# --- the appeal window ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("postmarked", "status", "code"),
    [
        ("2026-09-18", 201, None),
        ("2026-09-21", 201, None),  # appeal_window_ends (Saturday 09-19 → Monday 09-21)
        ("2026-09-22", 422, "appeal_window_closed"),
    ],
)
def test_a_petition_postmarked_after_2026_09_21_is_appeal_window_closed(
    kit, postmarked, status, code
):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    response = petition(kit, plan, postmarked=postmarked, received="2026-09-24")
    if code:
        body = problem(response, status, code)
        assert "2026-09-21" in body["detail"]
        with on("2026-09-24"):
            assert kit.get_plan(plan["id"])["status"] == "final"
    else:
        ok(response, status)
        with on("2026-09-24"):
            assert kit.get_plan(plan["id"])["status"] == "appealed"


def test_a_petition_before_the_notice_of_decision_is_a_conflict(kit):
    lgu = kit.lgu()
    with on("2026-09-01"):
        undecided = kit.plan(lgu, received_on="2026-09-01", area_sqft=9_000)
        decided = kit.approved_plan(lgu, "2026-09-01")
    for plan in (undecided, decided):
        problem(
            petition(kit, plan, postmarked="2026-09-02", received="2026-09-03"), 409, "conflict"
        )


@pytest.mark.parametrize(
    ("postmarked", "status", "code"),
    [
        ("2026-08-07", 409, "conflict"),  # decision_due itself: not yet deemed approved
        ("2026-08-08", 201, None),
        ("2026-08-24", 201, None),  # 08-07 + 15 = Saturday 08-22 → Monday 08-24
        ("2026-08-25", 422, "appeal_window_closed"),
    ],
)
def test_a_deemed_approvals_window_runs_15_days_from_decision_due(kit, postmarked, status, code):
    lgu = kit.lgu()
    with on("2026-06-08"):
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000)  # due Friday 08-07
    with on("2026-08-08"):
        assert kit.get_plan(plan["id"])["deadlines"]["appeal_window_ends"] == "2026-08-24"
    response = petition(kit, plan, postmarked=postmarked, received="2026-08-26")
    if code:
        problem(response, status, code)
    else:
        ok(response, status)
        with on("2026-08-26"):
            shown = kit.get_plan(plan["id"])
        assert shown["status"] == "appealed" and shown["outcome"] == "deemed_approved"


def test_a_deemed_approval_reversed_on_appeal_is_denied_and_its_withdrawal_reversed(kit):
    lgu = kit.lgu()
    with on("2026-06-08"):
        bank = kit.funded_account(day="2026-06-08", service_area=5, unrestricted=20_000)
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000)
        before = kit.available(bank["id"])
        reservation = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
    with on("2026-08-10"):
        path = f"/plans/{plan['id']}/withdrawals"
        ok(kit.api.post(path, {"reservation_ids": [reservation["id"]]}, token=lgu["token"]))
    appeal = ok(
        petition(
            kit, plan, kind="owner", residents=None, postmarked="2026-08-20", received="2026-08-21"
        )
    )
    ok(grant(kit, appeal, "2026-08-28"))
    ok(rule(kit, appeal, "2026-09-30", "plan_reversed"))
    with on("2026-09-30"):
        shown = kit.get_plan(plan["id"])
        after = kit.available(bank["id"])
    assert shown["outcome"] == "denied" and shown["reversed_on_appeal"] is True
    assert shown["status"] == "final"
    assert after == before


# --- fee, security and who may petition -------------------------------------------------------


@pytest.mark.parametrize(("fee", "status"), [(19_999, 422), (20_000, 201), (20_001, 422)])
def test_the_filing_fee_is_exactly_200_dollars(kit, fee, status):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    response = petition(kit, plan, fee=fee)
    if status == 422:
        problem(response, 422, "invalid_fee")
        with on("2026-09-24"):
            assert kit.get_plan(plan["id"])["appeals"] == []
    else:
        assert ok(response)["filing_fee_cents"] == 20_000


@pytest.mark.parametrize(("security", "status"), [(None, 201), (50_000, 201), (50_001, 422)])
def test_the_security_is_at_most_500_dollars(kit, security, status):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    response = petition(kit, plan, security=security)
    if status == 422:
        problem(response, 422, "invalid_fee")
    else:
        assert ok(response)["security_cents"] == security


@pytest.mark.parametrize(
    ("kind", "residents", "status"),
    [
        ("residents", 99, 422),
        ("residents", 100, 201),
        ("residents", None, 422),
        ("owner", None, 201),
        ("notice_recipient", None, 201),
    ],
)
def test_100_county_residents_the_owner_or_a_notice_recipient_may_petition(
    kit, kind, residents, status
):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    response = petition(kit, plan, kind=kind, residents=residents)
    if status == 422:
        problem(response, 422, "not_eligible")
    else:
        assert ok(response)["petitioner_kind"] == kind


def test_a_petition_dated_in_the_future_is_a_validation_error(kit):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    body = {
        "petitioner_kind": "owner",
        "postmarked_on": "2026-09-21",
        "received_on": "2026-09-25",
        "filing_fee_cents": 20_000,
    }
    response = post_as(kit, f"/plans/{plan['id']}/appeals", body, "2026-09-24")
    assert "received_on" in problem(response, 422, "validation_error")["errors"]


# --- the board's decisions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decided_on", "late"), [("2026-10-23", False), ("2026-10-26", False), ("2026-10-27", True)]
)
def test_a_grant_decision_after_2026_10_26_is_recorded_and_flagged_late(kit, decided_on, late):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    appeal = ok(petition(kit, plan, received="2026-09-24"))
    decided = ok(grant(kit, appeal, decided_on))
    assert decided["grant_decision_due"] == "2026-10-26"
    assert decided["petition"]["granted"] is True and decided["petition"]["late"] is late


@pytest.mark.parametrize(
    ("decided_on", "late"), [("2026-12-04", False), ("2026-12-07", False), ("2026-12-08", True)]
)
def test_an_appeal_decision_after_2026_12_07_is_recorded_and_flagged_late(kit, decided_on, late):
    lgu = kit.lgu()
    _plan, appeal = granted_appeal(kit, lgu)
    decided = ok(rule(kit, appeal, decided_on, "plan_upheld"))
    assert decided["decision_due"] == "2026-12-07"  # 10-06 + 60 = Saturday 12-05 → Monday
    assert decided["decision"]["late"] is late


def test_a_denied_petition_makes_the_decision_final(kit):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    appeal = ok(
        petition(kit, plan, postmarked="2026-09-10", received="2026-09-11", security=50_000)
    )
    with on("2026-09-11"):
        body = {
            "kind": "appeal_security",
            "amount_cents": 50_000,
            "payer": "Neighbour",
            "received_on": "2026-09-11",
            "appeal_id": appeal["id"],
        }
        security = ok(kit.api.post("/payments", body))
        assert kit.get_plan(plan["id"])["status"] == "appealed"
    denied = ok(grant(kit, appeal, "2026-09-15", granted=False))
    assert denied["status"] == "petition_denied" and denied["decision_due"] is None
    with on("2026-09-15"):
        shown = kit.get_plan(plan["id"])
        # security is returned only when the petition is accepted
        assert ok(kit.api.get(f"/payments/{security['id']}"), 200)["status"] == "received"
    assert shown["status"] == "final" and shown["outcome"] == "approved"
    problem(rule(kit, appeal, "2026-09-16"), 409, "conflict")


def test_an_upheld_approval_is_final_and_its_withdrawal_stands(kit):
    lgu = kit.lgu()
    with on("2026-09-01"):
        bank = kit.funded_account(day="2026-09-01", service_area=5, unrestricted=20_000)
    plan = noticed_decision(kit, lgu)
    with on("2026-09-04"):
        reservation = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
        path = f"/plans/{plan['id']}/withdrawals"
        ok(kit.api.post(path, {"reservation_ids": [reservation["id"]]}, token=lgu["token"]))
    appeal = ok(petition(kit, plan))
    with on("2026-09-24"):
        # while appealed, the plan allows no withdrawal
        again = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 1_000)
        problem(
            kit.api.post(path, {"reservation_ids": [again["id"]]}, token=lgu["token"]),
            409,
            "conflict",
        )
        ok(kit.api.post(f"/reservations/{again['id']}/void"), 200)
    ok(grant(kit, appeal, "2026-10-06"))
    ok(rule(kit, appeal, "2026-11-02", "plan_upheld"))
    with on("2026-11-02"):
        shown = kit.get_plan(plan["id"])
        balance = kit.balances(bank["id"])["BSA5-T2-U"]
    assert shown["status"] == "final" and shown["outcome"] == "approved"
    assert shown["reversed_on_appeal"] is False
    assert shown["impact_may_proceed"] is True
    assert shown["withdrawals"][0]["reversal_transaction_id"] is None
    assert balance["posted_sqft"] == 2_000


def test_a_denial_reversed_on_appeal_becomes_an_approval(kit):
    lgu = kit.lgu()
    plan, appeal = granted_appeal(kit, lgu, outcome="denied")
    ok(rule(kit, appeal, "2026-11-02", "plan_reversed"))
    with on("2026-11-02"):
        shown = kit.get_plan(plan["id"])
    assert shown["outcome"] == "approved" and shown["reversed_on_appeal"] is True
    assert shown["status"] == "final"


def test_the_board_decides_each_petition_and_appeal_once_and_only_after_a_grant(kit):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    appeal = ok(petition(kit, plan))
    problem(rule(kit, appeal, "2026-09-25"), 409, "conflict")  # not granted yet
    ok(grant(kit, appeal, "2026-09-25"))
    problem(grant(kit, appeal, "2026-09-26", granted=False), 409, "conflict")
    ok(rule(kit, appeal, "2026-10-01", "plan_upheld"))
    problem(rule(kit, appeal, "2026-10-02", "plan_reversed"), 409, "conflict")


def test_a_board_decision_dated_in_the_future_is_a_validation_error(kit):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    appeal = ok(petition(kit, plan))
    body = {"granted": True, "decided_on": "2026-09-25", "reason": "x"}
    response = post_as(kit, f"/appeals/{appeal['id']}/petition", body, "2026-09-24")
    problem(response, 422, "validation_error")


# --- who may act on appeals ---------------------------------------------------------------------


def test_appeals_endpoints_are_for_the_board_only(kit):
    lgu, holder = kit.lgu(), kit.holder()
    plan = noticed_decision(kit, lgu)
    for token in (lgu["token"], holder["token"]):
        problem(petition(kit, plan, token=token), 403, "forbidden")
    appeal = ok(petition(kit, plan))
    for token in (lgu["token"], holder["token"]):
        problem(grant(kit, appeal, "2026-09-25", token=token), 403, "forbidden")
    ok(grant(kit, appeal, "2026-09-25"))
    for token in (lgu["token"], holder["token"]):
        problem(rule(kit, appeal, "2026-09-26", token=token), 403, "forbidden")
    with on("2026-09-26"):
        shown = ok(kit.api.get(f"/appeals/{appeal['id']}"), 200)
    assert shown["decision"] is None


def test_an_lgu_reads_the_appeals_of_its_own_plans_only(kit):
    owner, stranger = kit.lgu(), kit.lgu()
    plan = noticed_decision(kit, owner)
    appeal = ok(petition(kit, plan))
    with on("2026-09-24"):
        assert (
            ok(kit.api.get(f"/appeals/{appeal['id']}", token=owner["token"]), 200)["id"]
            == appeal["id"]
        )
        problem(kit.api.get(f"/appeals/{appeal['id']}", token=stranger["token"]), 404, "not_found")
        shown = kit.get_plan(plan["id"], token=owner["token"])
    assert [a["id"] for a in shown["appeals"]] == [appeal["id"]]


def test_a_notice_of_a_deemed_approval_starts_its_window_from_its_postmark(kit):
    lgu = kit.lgu()
    with on("2026-06-08"):
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000)  # due Friday 08-07
    path = f"/plans/{plan['id']}/decision-notice"
    # on decision_due the plan is not yet deemed approved: there is nothing to give notice of
    early = post_as(kit, path, {"mailed_on": "2026-08-07"}, "2026-08-07", lgu["token"])
    problem(early, 409, "conflict")
    # nor can a notice be dated before the approval it gives notice of
    problem(
        post_as(kit, path, {"mailed_on": "2026-08-07"}, "2026-08-10", lgu["token"]),
        422,
        "validation_error",
    )
    ok(post_as(kit, path, {"mailed_on": "2026-08-10"}, "2026-08-10", lgu["token"]))
    with on("2026-08-10"):
        shown = kit.get_plan(plan["id"])
    assert shown["status"] == "deemed_approved"
    assert shown["deadlines"]["appeal_window_ends"] == "2026-08-25"  # 08-10 + 15, a Tuesday
    owner = {"kind": "owner", "residents": None, "received": "2026-08-26"}
    ok(petition(kit, plan, postmarked="2026-08-25", **owner))
    problem(petition(kit, plan, postmarked="2026-08-26", **owner), 422, "appeal_window_closed")
