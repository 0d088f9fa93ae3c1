"""Appeals (Subd. 9; docs/domain.md §4): the worked contested plan (25,000 sq ft), the appeal window
(from the postmark of the Subd. 7 notice, for deemed approvals too), finality, several petitions and
reversals, the fee and security, the grounds of a denial, the board's deadlines, service and
judicial review, the plan page, and who may act on appeals."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from flask import Flask

from api import create_app
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, decision_body, mailing, ok, on, problem, recipients_for
from tests.api.web_kit import Element, parse, signed_in

FEE = 20_000


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


@pytest.fixture
def private_kit(fresh_db_url: str) -> Iterator[Kit]:
    """A board client on a database of its own: for plans filed under a rule set only the test
    knows, which no later test listing every plan may meet."""
    application = create_app({"DATABASE_URL": fresh_db_url, "PROPAGATE_EXCEPTIONS": False})
    yield Kit(Api(application.test_client(), make_token(application, "board")), application)
    application.extensions["wetbank.db"].dispose()


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
    name: str = "Wright County residents",
    address: str = "10 2nd St NW, Buffalo, MN 55313",
    token=None,
):
    body = {
        "petitioner_kind": kind,
        "petitioner_name": name,
        "petitioner_address": address,
        "postmarked_on": postmarked,
        "received_on": received,
        "filing_fee_cents": fee,
    }
    if residents is not None:
        body["resident_count"] = residents
    if security is not None:
        body["security_cents"] = security
    return post_as(kit, f"/plans/{plan['id']}/appeals", body, received, token)


def pay(kit: Kit, appeal: dict, kind: str, amount: int, day: str, postmarked: str | None = None):
    """The board records a payment for the appeal (``POST /payments``), a filing fee received
    on another day than the petition with its ``postmarked`` day."""
    body = {
        "kind": kind,
        "amount_cents": amount,
        "payer": "Petitioner",
        "received_on": day,
        "appeal_id": appeal["id"],
    }
    if postmarked is not None:
        body["postmarked_on"] = postmarked
    return post_as(kit, "/payments", body, day)


def pay_mailed_with_petition(kit: Kit, appeal: dict, day: str, amount: int = FEE):
    """The filing fee mailed with the petition (its postmark), received by the board on
    ``day``."""
    return pay(kit, appeal, "appeal_filing_fee", amount, day, appeal["postmarked_on"])


def fee_paid(kit: Kit, appeal: dict, day: str) -> bool:
    with on(day):
        listed = ok(kit.api.get(f"/payments?plan_id={appeal['plan_id']}"), 200)["items"]
    return any(
        p["appeal_id"] == appeal["id"]
        and p["kind"] == "appeal_filing_fee"
        and p["status"] == "received"
        for p in listed
    )


def grant(
    kit: Kit,
    appeal: dict,
    day: str,
    granted: bool = True,
    token=None,
    *,
    pay_fee: bool = True,
    grounds: list[str] | None = None,
):
    """The board's grant decision; a grant first records the $200 filing fee (as the board,
    mailed with the petition) unless ``pay_fee`` is false or it is already paid; a denial is
    on ``grounds``."""
    if granted and pay_fee and not fee_paid(kit, appeal, day):
        ok(pay_mailed_with_petition(kit, appeal, day))
    body: dict[str, Any] = {
        "granted": granted,
        "decided_on": day,
        "reason": "raises a question of public value",
    }
    if not granted:
        body["grounds"] = grounds if grounds is not None else ["meritless"]
    return post_as(kit, f"/appeals/{appeal['id']}/petition", body, day, token)


def rule(
    kit: Kit,
    appeal: dict,
    day: str,
    outcome: str = "plan_reversed",
    token=None,
    served_on: str | None = None,
):
    body = {"outcome": outcome, "decided_on": day}
    if served_on is not None:
        body["served_on"] = served_on
    return post_as(kit, f"/appeals/{appeal['id']}/decision", body, day, token)


def noticed_decision(kit: Kit, lgu: dict, outcome: str = "approved") -> dict:
    """A small plan received, its summary mailed and decided on 2026-09-01, its decision notice
    postmarked Friday 2026-09-04: the appeal window ends Saturday 09-19 → Monday 2026-09-21, as
    in story 3."""
    with on("2026-09-01"):
        plan = kit.plan(lgu, received_on="2026-09-01", area_sqft=9_000)
        kit.mail_summary(lgu, plan, "2026-09-01")
        body = decision_body(outcome, "2026-09-01")
        ok(kit.api.post(f"/plans/{plan['id']}/decision", body, token=lgu["token"]))
    with on("2026-09-04"):
        path = f"/plans/{plan['id']}/decision-notice"
        ok(kit.api.post(path, mailing("2026-09-04", plan=plan), token=lgu["token"]))
    return plan


def granted_appeal(kit: Kit, lgu: dict, outcome: str = "approved") -> tuple[dict, dict]:
    plan = noticed_decision(kit, lgu, outcome)
    appeal = ok(petition(kit, plan))
    ok(grant(kit, appeal, "2026-10-06"))
    return plan, appeal


# --- the worked contested plan (25,000 sq ft) -------------------------------------------------


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
        lots_before = kit.available_by_lot(developer["id"])
    assert sorted(lots_before.values()) == [20_000, 30_000]

    # Wednesday 2026-06-17: 25,000 sq ft in BSA 7 at 2:1; the LGU requires $500 of security
    with on("2026-06-17"):
        plan = kit.plan(
            lgu,
            received_on="2026-06-17",
            area_sqft=25_000,
            service_area=7,
            wetland_type="3",
            appeal_security_required_cents=50_000,
        )
    pid = plan["id"]
    assert plan["status"] == "received"
    assert plan["notice_kind"] == "full"
    assert plan["required_credit_sqft"] == 50_000
    assert plan["required_unrestricted_sqft"] == 25_000
    assert plan["appeal_security_required_cents"] == 50_000
    assert plan["deadlines"] == {
        "notice_due": "2026-06-29",  # Saturday 06-27 → Monday 06-29
        "comment_period_ends": None,
        "decision_due": "2026-08-17",  # Sunday 08-16 → Monday 08-17
        "decision_notice_due": None,
        "appeal_window_ends": None,
    }

    with on("2026-06-22"):
        notice = ok(
            api.post(f"/plans/{pid}/notices", mailing("2026-06-22", plan=plan), token=lgu["token"])
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
            decision_body("approved", "2026-07-22"),
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
                decision_body("approved", "2026-09-01", tep_recommendation="approve"),
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
                f"/plans/{pid}/decision-notice",
                mailing("2026-09-04", plan=plan),
                token=lgu["token"],
            )
        )
        withdrawal = ok(
            api.post(
                f"/plans/{pid}/withdrawals",
                {"reservation_ids": [u["id"], r["id"]]},
                token=lgu["token"],
            )
        )
        withdrawn = kit.available_by_lot(developer["id"])
    assert mailed == {
        "mailed_on": "2026-09-04",
        "due": "2026-09-11",
        "late": False,
        "kind": "summary",
        "recipients": recipients_for(plan),
        "id": mailed["id"],
    }
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
    # recorded after the window with no fee yet: until the fee mailed with it is, it obtained
    # no appeal (Subd. 9: "mailing a petition and payment of a filing fee")
    assert appeal["status"] == "no_fee_in_window"
    assert appeal["grant_decision_due"] == "2026-10-26"  # Saturday 10-24 → Monday 10-26
    assert appeal["decision_due"] is None
    with on("2026-09-24"):
        assert kit.get_plan(pid)["status"] == "final"
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
        paid = ok(api.get(f"/appeals/{appeal['id']}"), 200)
    # the timely petition and its fee (in its envelope: postmarked 09-21) reopen the final plan
    assert paid["status"] == "petition_received"
    assert paid["filing_fee_postmarked_on"] == "2026-09-21"
    assert reopened["status"] == "appealed"
    assert reopened["impact_may_proceed"] is False

    granted = ok(grant(kit, appeal, "2026-10-06", pay_fee=False))
    assert granted["status"] == "granted"
    assert granted["petition"]["late"] is False
    # Subd. 9 "within 60 days of the appeal": 60 days after the petition's receipt 09-24,
    # Monday 2026-11-23 (not 60 days from the grant, which would be 12-07)
    assert granted["decision_due"] == "2026-11-23"
    with on("2026-10-06"):
        assert ok(api.get(f"/payments/{security['id']}"), 200)["status"] == "returned"
        assert ok(api.get(f"/payments/{fee['id']}"), 200)["status"] == "received"
        assert kit.get_plan(pid)["status"] == "appealed"

    reversed_ = ok(rule(kit, appeal, "2026-11-30", "plan_reversed"))
    assert reversed_["status"] == "decided"
    # decided a week after 11-23: recorded, and flagged late
    assert reversed_["decision"] == {
        "outcome": "plan_reversed",
        "decided_on": "2026-11-30",
        "late": True,
    }
    with on("2026-11-30"):
        final = kit.get_plan(pid, token=lgu["token"])
        restored = kit.available_by_lot(developer["id"])
        lots_after = kit.lots_by_id(developer["id"])
    assert final["outcome"] == "denied"
    assert final["reversed_on_appeal"] is True
    assert final["status"] == "final"
    assert final["impact_may_proceed"] is False
    assert [b["code"] for b in final["impact_blockers"]][0] == "reversed_on_appeal"
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
        # the fee in the petition's envelope (its postmark) is recorded with it
        ok(pay(kit, ok(response, status), "appeal_filing_fee", FEE, "2026-09-24"))
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
        ("2026-08-25", 201, None),  # once "15 days from decision_due": no longer a limit
        ("2026-11-05", 201, None),  # 90 days after decision_due
    ],
)
def test_a_deemed_approval_without_a_notice_takes_petitions_postmarked_after_decision_due(
    kit, postmarked, status, code
):
    lgu = kit.lgu()
    with on("2026-06-08"):
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000)  # due Friday 08-07
    with on("2026-08-08"):
        assert kit.get_plan(plan["id"])["deadlines"]["appeal_window_ends"] is None
    received = "2026-11-06"
    response = petition(kit, plan, postmarked=postmarked, received=received)
    if code:
        problem(response, status, code)
    else:
        ok(response, status)
        with on(received):
            shown = kit.get_plan(plan["id"])
        assert shown["status"] == "appealed" and shown["outcome"] == "deemed_approved"


def test_a_deemed_approval_90_days_old_without_a_notice_is_deemed_approved_not_final(kit):
    """Subd. 9 runs the window from the Subd. 7 mailing: with none, no one entitled to the
    notice has lost the appeal, so the deemed approval never becomes final by itself."""
    lgu = kit.lgu()
    with on("2026-06-08"):
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000)  # due Friday 08-07
    with on("2026-11-05"):  # 90 days after decision_due
        shown = kit.get_plan(plan["id"])
    assert shown["status"] == "deemed_approved" and shown["outcome"] == "deemed_approved"
    assert shown["deadlines"]["appeal_window_ends"] is None
    assert "decision_not_final" in [b["code"] for b in shown["impact_blockers"]]

    # the LGU mails a notice of the deemed approval on Thursday 11-05: 15 days later is
    # Friday 11-20; final from Saturday 11-21
    path = f"/plans/{plan['id']}/decision-notice"
    ok(post_as(kit, path, mailing("2026-11-05", plan=plan), "2026-11-05", lgu["token"]))
    for day, status in (("2026-11-20", "deemed_approved"), ("2026-11-21", "final")):
        with on(day):
            shown = kit.get_plan(plan["id"])
        assert shown["deadlines"]["appeal_window_ends"] == "2026-11-20"
        assert shown["status"] == status, day
    owner = {"kind": "owner", "residents": None, "received": "2026-11-23"}
    ok(petition(kit, plan, postmarked="2026-11-20", **owner))
    problem(petition(kit, plan, postmarked="2026-11-21", **owner), 422, "appeal_window_closed")
    # a petition mailed after decision_due but before the notice appeals nothing it names
    problem(petition(kit, plan, postmarked="2026-11-04", **owner), 422, "validation_error")


def test_a_deemed_approval_reversed_on_appeal_is_denied_and_its_withdrawal_reversed(kit):
    lgu = kit.lgu()
    with on("2026-06-08"):
        bank = kit.funded_account(day="2026-06-08", service_area=5, unrestricted=20_000)
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000)
        before = kit.available_by_lot(bank["id"])
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
        after = kit.available_by_lot(bank["id"])
    assert shown["outcome"] == "denied" and shown["reversed_on_appeal"] is True
    # no notice of the deemed approval was ever mailed, so no window has closed: the plan
    # shows its decided status, not final; it is denied either way
    assert shown["status"] == "denied"
    assert shown["impact_may_proceed"] is False
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
    ("decided_on", "late"), [("2026-11-20", False), ("2026-11-23", False), ("2026-11-24", True)]
)
def test_an_appeal_decision_after_2026_11_23_is_recorded_and_flagged_late(kit, decided_on, late):
    lgu = kit.lgu()
    _plan, appeal = granted_appeal(kit, lgu)
    decided = ok(rule(kit, appeal, decided_on, "plan_upheld"))
    # received 09-24, granted 10-06: due 60 days after the receipt, Monday 2026-11-23
    assert decided["received_on"] == "2026-09-24"
    assert decided["decision_due"] == "2026-11-23"
    assert decided["decision"]["late"] is late


def test_a_petition_denied_on_day_3_leaves_the_plan_approved_until_the_window_closes(kit):
    """Notice postmarked Friday 09-04; window to Monday 09-21.  A neighbour's petition is denied
    on Monday 09-07 (day 3): the approval is not final, a petition postmarked 09-21 is accepted.
    The LGU requires $500 of appeal security, kept on the denial."""
    lgu = kit.lgu()
    plan = _noticed_decision_requiring_security(kit, lgu, 50_000)
    appeal = ok(
        petition(
            kit,
            plan,
            kind="owner",
            residents=None,
            postmarked="2026-09-05",
            received="2026-09-07",
            security=50_000,
        )
    )
    ok(pay(kit, appeal, "appeal_security", 50_000, "2026-09-07"))
    with on("2026-09-07"):
        assert kit.get_plan(plan["id"])["status"] == "appealed"
    denied = ok(grant(kit, appeal, "2026-09-07", granted=False, grounds=["trivial"]))
    assert denied["status"] == "petition_denied" and denied["decision_due"] is None
    assert denied["grounds"] == ["trivial"]
    with on("2026-09-07"):
        shown = kit.get_plan(plan["id"])
        # security is returned only when the petition is accepted
        listed = ok(kit.api.get(f"/payments?plan_id={plan['id']}"), 200)["items"]
    assert [p["status"] for p in listed] == ["received"]
    assert shown["status"] == "approved" and shown["outcome"] == "approved"
    assert shown["impact_may_proceed"] is False
    assert "decision_not_final" in [b["code"] for b in shown["impact_blockers"]]
    problem(rule(kit, appeal, "2026-09-08"), 409, "conflict")
    with on("2026-09-21"):
        assert kit.get_plan(plan["id"])["status"] == "approved"

    # a resident petition postmarked on the window's last day is still accepted
    last = ok(petition(kit, plan, postmarked="2026-09-21", received="2026-09-24"))
    ok(pay(kit, last, "appeal_filing_fee", FEE, "2026-09-24"))  # in the petition's envelope
    with on("2026-09-24"):
        assert kit.get_plan(plan["id"])["status"] == "appealed"
    ok(grant(kit, last, "2026-10-01", granted=False, grounds=["local_remedies_not_exhausted"]))
    with on("2026-10-01"):
        assert kit.get_plan(plan["id"])["status"] == "final"


def test_an_upheld_approval_is_final_and_its_withdrawal_stands(kit):
    lgu = kit.lgu()
    with on("2026-09-01"):
        bank = kit.funded_account(day="2026-09-01", service_area=5, unrestricted=20_000)
    plan = noticed_decision(kit, lgu)
    with on("2026-09-04"):
        reservation = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
        # reserved before the withdrawal met the requirement (none is taken after it)
        again = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 1_000)
        path = f"/plans/{plan['id']}/withdrawals"
        ok(kit.api.post(path, {"reservation_ids": [reservation["id"]]}, token=lgu["token"]))
    appeal = ok(petition(kit, plan))
    ok(pay(kit, appeal, "appeal_filing_fee", FEE, "2026-09-24"))  # in the petition's envelope
    with on("2026-09-24"):
        # while appealed, the plan allows no withdrawal
        refused = problem(
            kit.api.post(path, {"reservation_ids": [again["id"]]}, token=lgu["token"]),
            409,
            "conflict",
        )
        assert refused["current_status"] == "appealed"
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
    early = post_as(kit, path, mailing("2026-08-07", plan=plan), "2026-08-07", lgu["token"])
    problem(early, 409, "conflict")
    # nor can a notice be dated before the approval it gives notice of
    problem(
        post_as(kit, path, mailing("2026-08-07", plan=plan), "2026-08-10", lgu["token"]),
        422,
        "validation_error",
    )
    ok(post_as(kit, path, mailing("2026-08-10", plan=plan), "2026-08-10", lgu["token"]))
    with on("2026-08-10"):
        shown = kit.get_plan(plan["id"])
    assert shown["status"] == "deemed_approved"
    assert shown["deadlines"]["appeal_window_ends"] == "2026-08-25"  # 08-10 + 15, a Tuesday
    owner = {"kind": "owner", "residents": None, "received": "2026-08-26"}
    ok(petition(kit, plan, postmarked="2026-08-25", **owner))
    problem(petition(kit, plan, postmarked="2026-08-26", **owner), 422, "appeal_window_closed")


# --- the petitioner (Subd. 9: the petition is mailed; the decision is served by mail) ----------


@pytest.mark.parametrize("missing", ["petitioner_name", "petitioner_address"])
def test_a_petition_without_the_petitioners_name_or_address_is_a_validation_error(kit, missing):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    body = {
        "petitioner_kind": "owner",
        "petitioner_name": "Ann Owner",
        "petitioner_address": "1 Lake Rd, Buffalo, MN",
        "postmarked_on": "2026-09-10",
        "received_on": "2026-09-11",
        "filing_fee_cents": FEE,
    }
    for value in (None, ""):
        if value is None:
            body.pop(missing)
        else:
            body[missing] = value
        response = post_as(kit, f"/plans/{plan['id']}/appeals", body, "2026-09-11")
        assert missing in problem(response, 422, "validation_error")["errors"]
    with on("2026-09-11"):
        assert kit.get_plan(plan["id"])["appeals"] == []


def test_the_appeal_shows_its_petitioner_at_its_top_level(kit):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    appeal = ok(
        petition(kit, plan, kind="owner", residents=None, name="Ann Owner", address="1 Lake Rd")
    )
    with on("2026-09-24"):
        read = ok(kit.api.get(f"/appeals/{appeal['id']}", token=lgu["token"]), 200)
    assert read["petitioner_name"] == "Ann Owner"
    assert read["petitioner_address"] == "1 Lake Rd"
    assert read["grounds"] == [] and read["factors_considered"] is None
    assert read["served_on"] is None and read["judicial_review_ends"] is None


@pytest.mark.parametrize(
    ("postmarked", "status", "code"),
    [("2026-09-03", 422, "validation_error"), ("2026-09-04", 201, None)],
)
def test_a_petition_postmarked_before_the_decision_notice_2026_09_04_is_a_validation_error(
    kit, postmarked, status, code
):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)  # notice postmarked Friday 2026-09-04
    response = petition(kit, plan, postmarked=postmarked, received="2026-09-08")
    if code:
        assert "postmarked_on" in problem(response, status, code)["errors"]
    else:
        ok(response, status)


# --- the filing fee and the security (Subd. 9) ---------------------------------------------------


def test_a_petition_is_granted_only_once_its_200_dollar_filing_fee_is_paid(kit):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    appeal = ok(petition(kit, plan))
    refused = problem(grant(kit, appeal, "2026-09-25", pay_fee=False), 422, "invalid_fee")
    # the window closed 09-21 with no fee recorded: no appeal was obtained, unless one mailed by
    # then arrives
    assert refused["detail"] == (
        "the $200.00 filing fee has not been paid: none mailed by 2026-09-21, when the appeal "
        "window closed, is recorded, so the petition obtained no appeal (Subd. 9; a fee mailed "
        "by then is recorded when it arrives)"
    )
    with on("2026-09-25"):
        assert ok(kit.api.get(f"/appeals/{appeal['id']}"), 200)["petition"] is None
    ok(pay_mailed_with_petition(kit, appeal, "2026-09-25"))
    granted = ok(grant(kit, appeal, "2026-09-25", pay_fee=False), 201)
    assert granted["status"] == "granted" and granted["petition"]["granted"] is True


def test_the_filing_fee_is_retained_by_the_board_a_refund_is_not_eligible(kit):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    appeal = ok(petition(kit, plan))
    fee = ok(pay(kit, appeal, "appeal_filing_fee", FEE, "2026-09-24"))
    with on("2026-09-25"):
        refused = problem(kit.api.post(f"/payments/{fee['id']}/refund"), 422, "not_eligible")
        assert "retained by the board" in refused["detail"]
        assert ok(kit.api.get(f"/payments/{fee['id']}"), 200)["status"] == "received"
    ok(grant(kit, appeal, "2026-09-25", pay_fee=False))
    with on("2026-09-25"):
        problem(kit.api.post(f"/payments/{fee['id']}/refund"), 422, "not_eligible")


def test_the_fee_refusals_name_the_fee_of_the_rules_the_petition_was_filed_under(
    private_kit, monkeypatch
):
    """Rules amended from 2026-01-01 with a $250 fee: the petition filed under them is refused a
    grant with that figure, in dollars and cents (never a fixed "$200"), before the fee is paid
    and when it arrived after the grant's day, and the fee's refund says the same."""
    kit = private_kit
    import dataclasses

    from bank.rules import ruleset as rules

    amended = dataclasses.replace(
        rules.SEED,
        id="amended 2026-01-01",
        effective_from=date(2026, 1, 1),
        appeal_filing_fee_cents=25_000,
    )
    monkeypatch.setattr(rules, "RULESETS", (rules.SEED, amended))
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    appeal = ok(petition(kit, plan, fee=25_000))
    unpaid = problem(grant(kit, appeal, "2026-09-25", pay_fee=False), 422, "invalid_fee")
    assert unpaid["detail"].startswith("the $250.00 filing fee has not been paid: ")
    assert unpaid["fee_cents"] == 25_000
    fee = ok(pay_mailed_with_petition(kit, appeal, "2026-09-26", 25_000))
    body = {"granted": True, "decided_on": "2026-09-25", "reason": "raises a question"}
    late = problem(
        post_as(kit, f"/appeals/{appeal['id']}/petition", body, "2026-09-26"), 422, "invalid_fee"
    )
    assert late["detail"] == "the $250.00 filing fee was received on 2026-09-26, after 2026-09-25"
    with on("2026-09-26"):
        refused = problem(kit.api.post(f"/payments/{fee['id']}/refund"), 422, "not_eligible")
        assert ok(kit.api.get(f"/appeals/{appeal['id']}"), 200)["petition"] is None
    assert refused["detail"] == (
        "Subd. 9: the $250.00 filing fee is retained by the board and is not refunded"
    )


def test_the_appeal_shows_when_its_fee_was_received_and_the_security_still_held(kit):
    """What the petition says it pays (``filing_fee_cents``, ``security_cents``) beside what the
    board recorded: the live fee's receipt day and the security posted and not yet returned."""
    lgu = kit.lgu()
    plan = _noticed_decision_requiring_security(kit, lgu, 30_000)
    appeal = ok(petition(kit, plan, security=30_000))
    assert appeal["filing_fee_received_on"] is None and appeal["security_held_cents"] == 0
    ok(pay(kit, appeal, "appeal_filing_fee", FEE, "2026-09-24"))
    ok(pay(kit, appeal, "appeal_security", 30_000, "2026-09-25"))
    with on("2026-09-25"):
        shown = ok(kit.api.get(f"/appeals/{appeal['id']}"), 200)
        (listed,) = kit.get_plan(plan["id"])["appeals"]
    assert shown["filing_fee_received_on"] == "2026-09-24"
    assert shown["security_held_cents"] == 30_000
    assert listed == shown
    granted = ok(grant(kit, appeal, "2026-09-25"))  # the security goes back (Subd. 9)
    assert granted["filing_fee_received_on"] == "2026-09-24"
    assert granted["security_held_cents"] == 0


def test_security_required_by_the_lgu_must_be_posted_before_the_petition_is_granted(kit):
    lgu = kit.lgu()
    with on("2026-09-01"):
        plan = kit.plan(
            lgu, received_on="2026-09-01", area_sqft=9_000, appeal_security_required_cents=30_000
        )
        kit.mail_summary(lgu, plan, "2026-09-01")
        body = decision_body("approved", "2026-09-01")
        ok(kit.api.post(f"/plans/{plan['id']}/decision", body, token=lgu["token"]))
    with on("2026-09-04"):
        path = f"/plans/{plan['id']}/decision-notice"
        ok(kit.api.post(path, mailing("2026-09-04", plan=plan), token=lgu["token"]))
    appeal = ok(petition(kit, plan))
    assert appeal["security_required_cents"] == 30_000
    ok(pay(kit, appeal, "appeal_filing_fee", FEE, "2026-09-24"))
    refused = problem(grant(kit, appeal, "2026-09-25"), 422, "security_required")
    assert refused["required_cents"] == 30_000 and refused["posted_cents"] == 0
    # less than required is not enough either
    short = ok(pay(kit, appeal, "appeal_security", 29_999, "2026-09-25"))
    problem(grant(kit, appeal, "2026-09-25"), 422, "security_required")
    with on("2026-09-25"):
        ok(kit.api.post(f"/payments/{short['id']}/refund"))
    posted = ok(pay(kit, appeal, "appeal_security", 30_000, "2026-09-25"))
    ok(grant(kit, appeal, "2026-09-25"))
    with on("2026-09-25"):
        # Subd. 9: the security posted is returned once the petition is accepted
        assert ok(kit.api.get(f"/payments/{posted['id']}"), 200)["status"] == "returned"


def test_without_a_security_requirement_a_paid_petition_is_granted(kit):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    appeal = ok(petition(kit, plan))
    assert appeal["security_required_cents"] is None
    ok(grant(kit, appeal, "2026-09-25"))


def _noticed_decision_requiring_security(kit: Kit, lgu: dict, cents: int) -> dict:
    """``noticed_decision``'s plan, the LGU requiring ``cents`` of appeal security."""
    with on("2026-09-01"):
        plan = kit.plan(
            lgu, received_on="2026-09-01", area_sqft=9_000, appeal_security_required_cents=cents
        )
        kit.mail_summary(lgu, plan, "2026-09-01")
        body = decision_body("approved", "2026-09-01")
        ok(kit.api.post(f"/plans/{plan['id']}/decision", body, token=lgu["token"]))
    with on("2026-09-04"):
        path = f"/plans/{plan['id']}/decision-notice"
        ok(kit.api.post(path, mailing("2026-09-04", plan=plan), token=lgu["token"]))
    return plan


def test_security_not_posted_denies_a_petition_only_when_the_lgu_required_more_than_is_posted(
    kit,
):
    """Subd. 9: "... or that the petitioner has not posted a letter of credit, cashier's check,
    or cash if required by the local government unit"."""
    lgu = kit.lgu()
    # no security required: the ground cannot hold, alone or beside another
    appeal = ok(petition(kit, noticed_decision(kit, lgu)))
    for grounds in (["security_not_posted"], ["meritless", "security_not_posted"]):
        refused = problem(
            grant(kit, appeal, "2026-09-25", granted=False, grounds=grounds),
            422,
            "validation_error",
        )
        assert list(refused["errors"]) == ["grounds"]
    with on("2026-09-25"):
        assert ok(kit.api.get(f"/appeals/{appeal['id']}"), 200)["petition"] is None
    # required and posted in full: it cannot hold either; another ground can
    plan = _noticed_decision_requiring_security(kit, lgu, 30_000)
    appeal = ok(petition(kit, plan))
    posted = ok(pay(kit, appeal, "appeal_security", 30_000, "2026-09-24"))
    refused = grant(kit, appeal, "2026-09-25", granted=False, grounds=["security_not_posted"])
    assert list(problem(refused, 422, "validation_error")["errors"]) == ["grounds"]
    denied = ok(grant(kit, appeal, "2026-09-25", granted=False, grounds=["trivial"]))
    assert denied["grounds"] == ["trivial"]
    with on("2026-09-25"):
        # kept when the petition is denied
        assert ok(kit.api.get(f"/payments/{posted['id']}"), 200)["status"] == "received"
    # required and short: the ground holds
    plan = _noticed_decision_requiring_security(kit, lgu, 30_000)
    appeal = ok(petition(kit, plan))
    ok(pay(kit, appeal, "appeal_security", 29_999, "2026-09-24"))
    denied = ok(grant(kit, appeal, "2026-09-25", granted=False, grounds=["security_not_posted"]))
    assert denied["grounds"] == ["security_not_posted"]
    assert denied["petition"]["granted"] is False


def test_security_posted_for_a_denied_petition_is_kept_not_refunded(kit):
    """Subd. 9 returns the security only "if the petition for hearing is accepted"."""
    lgu = kit.lgu()
    appeal = ok(petition(kit, _noticed_decision_requiring_security(kit, lgu, 30_000)))
    posted = ok(pay(kit, appeal, "appeal_security", 30_000, "2026-09-24"))
    ok(grant(kit, appeal, "2026-09-25", granted=False, grounds=["trivial"]))
    with on("2026-09-26"):
        refused = problem(kit.api.post(f"/payments/{posted['id']}/refund"), 422, "not_eligible")
        assert "kept" in refused["detail"]
        assert ok(kit.api.get(f"/payments/{posted['id']}"), 200)["status"] == "received"


def test_the_lgu_or_the_board_requires_appeal_security_before_the_notice_of_decision(kit):
    """Subd. 9: the petitioner reads the requirement in the notice of decision; once it is
    mailed (and once anyone petitions), the requirement no longer changes."""
    lgu, stranger = kit.lgu(), kit.lgu()
    with on("2026-09-01"):
        plan = kit.plan(lgu, received_on="2026-09-01", area_sqft=9_000)
        kit.mail_summary(lgu, plan, "2026-09-01")
        body = decision_body("approved", "2026-09-01")
        ok(kit.api.post(f"/plans/{plan['id']}/decision", body, token=lgu["token"]))
    path = f"/plans/{plan['id']}/appeal-security"
    for amount in (0, 50_001):
        response = post_as(kit, path, {"amount_cents": amount}, "2026-09-02", lgu["token"])
        problem(response, 422, "validation_error")
    problem(
        post_as(kit, path, {"amount_cents": 100}, "2026-09-02", stranger["token"]), 404, "not_found"
    )
    shown = ok(post_as(kit, path, {"amount_cents": 50_000}, "2026-09-02", lgu["token"]))
    assert shown["appeal_security_required_cents"] == 50_000
    shown = ok(post_as(kit, path, {"amount_cents": 25_000}, "2026-09-03"))  # the board
    assert shown["appeal_security_required_cents"] == 25_000
    with on("2026-09-04"):
        mailed = f"/plans/{plan['id']}/decision-notice"
        ok(kit.api.post(mailed, mailing("2026-09-04", plan=plan), token=lgu["token"]))
    late = problem(
        post_as(kit, path, {"amount_cents": 100}, "2026-09-05", lgu["token"]), 409, "conflict"
    )
    assert "2026-09-04" in late["detail"]
    ok(petition(kit, plan, received="2026-09-10", postmarked="2026-09-09"))
    problem(post_as(kit, path, {"amount_cents": 100}, "2026-09-10"), 409, "conflict")
    with on("2026-09-10"):
        assert kit.get_plan(plan["id"])["appeal_security_required_cents"] == 25_000


@pytest.mark.parametrize(("amount", "status"), [(0, 422), (1, 201), (50_000, 201), (50_001, 422)])
def test_a_plans_appeal_security_is_1_to_50_000_cents(kit, amount, status):
    lgu = kit.lgu()
    body = kit.plan_body(
        received_on="2026-09-01", area_sqft=9_000, appeal_security_required_cents=amount
    )
    with on("2026-09-01"):
        response = kit.api.post("/plans", body, token=lgu["token"])
    if status == 201:
        assert ok(response)["appeal_security_required_cents"] == amount
    else:
        errors = problem(response, 422, "validation_error")["errors"]
        assert "appeal_security_required_cents" in errors


# --- the grounds of a denial (Subd. 9) ---------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {"granted": False},
        {"granted": False, "grounds": []},
        {"granted": False, "grounds": ["a bad idea"]},
        {"granted": False, "reason": "meritless"},
        {"granted": True, "grounds": ["trivial"]},
    ],
    ids=["none", "empty", "unknown", "reason-only", "grant-with-grounds"],
)
def test_a_denial_needs_grounds_from_the_statutes_list_and_a_grant_takes_none(kit, body):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    appeal = ok(petition(kit, plan))
    ok(pay(kit, appeal, "appeal_filing_fee", FEE, "2026-09-24"))
    response = post_as(
        kit, f"/appeals/{appeal['id']}/petition", {**body, "decided_on": "2026-09-25"}, "2026-09-25"
    )
    errors = problem(response, 422, "validation_error")["errors"]
    assert [field.split(".")[0] for field in errors] == ["grounds"]
    with on("2026-09-25"):
        assert ok(kit.api.get(f"/appeals/{appeal['id']}"), 200)["petition"] is None


def test_a_denial_records_its_grounds_and_the_factors_the_board_considered(kit):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    appeal = ok(petition(kit, plan))
    body = {
        "granted": False,
        "decided_on": "2026-09-25",
        "grounds": ["solely_for_delay", "meritless", "meritless"],
        "factors_considered": "a 9,000 sq ft wet meadow; no controversy; a second delay",
    }
    denied = ok(post_as(kit, f"/appeals/{appeal['id']}/petition", body, "2026-09-25"))
    # each ground once, in the statute's order; no free-text reason was needed
    assert denied["grounds"] == ["meritless", "solely_for_delay"]
    assert denied["factors_considered"] == body["factors_considered"]
    assert denied["petition"]["reason"] is None and denied["petition"]["granted"] is False


# --- service of the decision and judicial review (Subd. 9; Minn. Stat. 14.63) -------------------


def test_judicial_review_ends_30_days_after_service_rolled_past_thanksgiving(kit):
    lgu = kit.lgu()
    _plan, appeal = granted_appeal(kit, lgu)
    decided = ok(rule(kit, appeal, "2026-10-27", "plan_upheld", served_on="2026-10-27"))
    # 10-27 + 30 = Thursday 11-26, Thanksgiving; Friday 11-27 the board keeps; the weekend
    assert decided["served_on"] == "2026-10-27"
    assert decided["judicial_review_ends"] == "2026-11-30"
    again = post_as(
        kit, f"/appeals/{appeal['id']}/service", {"served_on": "2026-10-28"}, "2026-10-28"
    )
    problem(again, 409, "conflict")


def test_the_decisions_service_is_recorded_once_after_the_decision(kit):
    lgu = kit.lgu()
    _plan, appeal = granted_appeal(kit, lgu)
    path = f"/appeals/{appeal['id']}/service"
    # nothing to serve before the decision
    problem(post_as(kit, path, {"served_on": "2026-10-07"}, "2026-10-07"), 409, "conflict")
    decided = ok(rule(kit, appeal, "2026-10-09", "plan_upheld"))
    assert decided["served_on"] is None and decided["judicial_review_ends"] is None
    # served before it was decided: refused
    problem(post_as(kit, path, {"served_on": "2026-10-08"}, "2026-10-12"), 422, "validation_error")
    served = ok(post_as(kit, path, {"served_on": "2026-10-12"}, "2026-10-12"))
    # 10-12 + 30 = Wednesday 11-11, Veterans Day: Thursday 11-12
    assert served["served_on"] == "2026-10-12"
    assert served["judicial_review_ends"] == "2026-11-12"
    problem(post_as(kit, path, {"served_on": "2026-10-13"}, "2026-10-13"), 409, "conflict")
    lgu_token = lgu["token"]
    with on("2026-10-13"):
        read = ok(kit.api.get(f"/appeals/{appeal['id']}", token=lgu_token), 200)
        problem(kit.api.post(path, {"served_on": "2026-10-13"}, token=lgu_token), 403, "forbidden")
    assert read["judicial_review_ends"] == "2026-11-12"


# --- several petitions: any reversal reverses the plan for good --------------------------------


def test_two_appeals_one_upheld_then_one_reversed_reverse_the_approval_for_good(kit):
    """Approved 09-01, notice postmarked 09-04 (window to 09-21), credits withdrawn 09-08.
    Two petitions granted 09-25; appeal 1 upheld 10-20, appeal 2 reversed 10-27."""
    lgu = kit.lgu()
    with on("2026-09-01"):
        bank = kit.funded_account(day="2026-09-01", service_area=5, unrestricted=20_000)
        before = kit.available_by_lot(bank["id"])
    plan = noticed_decision(kit, lgu)
    pid = plan["id"]
    with on("2026-09-08"):
        used = kit.reserve(bank["id"], pid, bank["unrestricted_class"], 18_000)
        held = kit.reserve(bank["id"], pid, bank["unrestricted_class"], 1_000)
        withdrawal = ok(
            kit.api.post(
                f"/plans/{pid}/withdrawals", {"reservation_ids": [used["id"]]}, token=lgu["token"]
            )
        )
        assert withdrawal["withdrawn_sqft"] == 18_000
    first = ok(
        petition(
            kit, plan, kind="owner", residents=None, postmarked="2026-09-10", received="2026-09-11"
        )
    )
    second = ok(petition(kit, plan, postmarked="2026-09-14", received="2026-09-15"))
    ok(grant(kit, first, "2026-09-25"))
    ok(grant(kit, second, "2026-09-25"))

    ok(rule(kit, first, "2026-10-20", "plan_upheld"))
    with on("2026-10-20"):
        waiting = kit.get_plan(pid)
    assert waiting["status"] == "appealed"  # appeal 2 still awaits its decision
    assert waiting["impact_may_proceed"] is False

    ok(rule(kit, second, "2026-10-27", "plan_reversed"))
    with on("2026-10-27"):
        shown = kit.get_plan(pid)
        after = kit.available_by_lot(bank["id"])
        voided = ok(kit.api.get(f"/reservations/{held['id']}"), 200)
    assert shown["status"] == "final"
    assert shown["outcome"] == "denied" and shown["reversed_on_appeal"] is True
    assert shown["impact_may_proceed"] is False
    assert "reversed_on_appeal" in [b["code"] for b in shown["impact_blockers"]]
    assert shown["withdrawals"][0]["reversal_transaction_id"] is not None
    # the withdrawal is reversed and the pending reservation voided: every credit is back
    assert voided["status"] == "voided"
    assert after == before
    # the withdrawn reservation stays posted in the ledger's terms, and says its credits came back
    with on("2026-10-27"):
        returned = ok(kit.api.get(f"/reservations/{used['id']}"), 200)
    assert (returned["status"], returned["reversed_on_appeal"]) == ("posted", True)
    assert voided["reversed_on_appeal"] is False
    listed = {r["id"]: r for r in shown["reservations"]}
    assert listed[used["id"]]["reversed_on_appeal"] is True

    # from now on, reservations and withdrawals for the plan are conflict
    with on("2026-10-28"):
        body = {
            "plan_id": pid,
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": 1_000,
            "expires_on": "2027-12-31",
        }
        problem(kit.api.post(f"/accounts/{bank['id']}/reservations", body), 409, "conflict")
        path = f"/plans/{pid}/withdrawals"
        problem(
            kit.api.post(path, {"reservation_ids": [used["id"]]}, token=lgu["token"]),
            409,
            "conflict",
        )
        assert kit.available_by_lot(bank["id"]) == before


def test_an_appeal_reversed_then_another_upheld_leaves_the_plan_reversed(kit):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    first = ok(petition(kit, plan, postmarked="2026-09-10", received="2026-09-11"))
    second = ok(petition(kit, plan, postmarked="2026-09-14", received="2026-09-15"))
    ok(grant(kit, first, "2026-09-25"))
    ok(grant(kit, second, "2026-09-25"))
    ok(rule(kit, first, "2026-10-20", "plan_reversed"))
    ok(rule(kit, second, "2026-10-27", "plan_upheld"))
    with on("2026-10-27"):
        shown = kit.get_plan(plan["id"])
    assert shown["outcome"] == "denied" and shown["reversed_on_appeal"] is True
    assert shown["status"] == "final" and shown["impact_may_proceed"] is False


# --- the plan page --------------------------------------------------------------------------


def page(app: Flask, token: str, plan_id: str) -> Element:
    response = signed_in(app.test_client(), token).get(f"/plans/{plan_id}")
    assert response.status_code == 200
    return parse(response.get_data(as_text=True))


def test_the_plan_page_shows_each_appeals_petitioner_grounds_service_and_review_deadline(
    app: Flask, kit
):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)
    denied = ok(
        petition(
            kit,
            plan,
            kind="owner",
            residents=None,
            name="Ann Owner",
            address="1 Lake Rd, Buffalo",
            postmarked="2026-09-08",
            received="2026-09-09",
        )
    )
    ok(grant(kit, denied, "2026-09-10", granted=False, grounds=["trivial", "solely_for_delay"]))
    heard = ok(petition(kit, plan, name="Wright County residents"))
    ok(grant(kit, heard, "2026-10-06"))
    ok(rule(kit, heard, "2026-10-27", "plan_upheld", served_on="2026-10-27"))
    with on("2026-10-28"):
        document = page(app, lgu["token"], plan["id"])

    row = document.one("table", id="appeals").one("tr", data_appeal_id=denied["id"])
    assert "Ann Owner" in row.text and "1 Lake Rd, Buffalo" in row.text
    assert "trivial" in row.text and "solely for delay" in row.text
    row = document.one("table", id="appeals").one("tr", data_appeal_id=heard["id"])
    assert "Wright County residents" in row.text
    assert row.one("td", data_field="served-on").text == "2026-10-27"
    assert row.one("td", data_field="judicial-review-ends").text == "2026-11-30"
    states = {
        r.one("th").text: r.attrs["data-state"]
        for r in document.one("table", id="timeline").one("tbody").all("tr")
    }
    assert states["Appeal 2: judicial review period ends"] == "running"


@pytest.mark.parametrize("day", ["2026-09-21", "2026-09-22"])
def test_the_plan_page_never_shows_a_running_appeal_window_on_a_final_plan(app: Flask, kit, day):
    lgu = kit.lgu()
    plan = noticed_decision(kit, lgu)  # window to Monday 2026-09-21
    early = ok(petition(kit, plan, postmarked="2026-09-05", received="2026-09-07"))
    ok(grant(kit, early, "2026-09-07", granted=False))
    with on(day):
        shown = kit.get_plan(plan["id"], token=lgu["token"])
        document = page(app, lgu["token"], plan["id"])
    status = document.one("dd", id="plan-status").text
    window = [
        r.attrs["data-state"]
        for r in document.one("table", id="timeline").one("tbody").all("tr")
        if r.one("th").text.startswith("Appeal window ends")
    ]
    if day == "2026-09-21":
        # the window's last day: a denied petition does not close it
        assert shown["status"] == "approved" and status.startswith("approved")
        assert window == ["running"]
    else:
        assert shown["status"] == "final" and status.startswith("final")
        assert window == ["ended"]
