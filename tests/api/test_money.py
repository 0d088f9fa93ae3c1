"""docs/http.md "Money and security instruments" (docs/domain.md §5–6): every payment kind and its
refusals, refunds and the return of appeal security as compensating transactions, security
instruments and their life cycle, and Subd. 3's "replacement guaranteed" as a plan reads it on
either side of an expiry date."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest
from flask import Flask
from freezegun import freeze_time
from sqlalchemy.exc import IntegrityError

from bank import money
from bank.ids import new_id
from bank.money_tables import Payment
from tests.api.conftest import Api
from tests.api.kit import Kit, decision_body, mailing, ok, on, problem

FEE = 20_000  # Subd. 9: the $200 filing fee
SECURITY_CAP = 50_000  # Subd. 9: security of at most $500


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


# --- helpers -----------------------------------------------------------------------------------


def next_day(day: str, n: int = 1) -> str:
    return (date.fromisoformat(day) + timedelta(days=n)).isoformat()


def impact(*, agricultural: bool, area_sqft: int = 9_000) -> dict[str, Any]:
    return {
        "area_sqft": area_sqft,
        "wetland_type": "2",
        "service_area": 5,
        "county": "Lyon",
        "on_agricultural_land": agricultural,
    }


def approved(
    kit: Kit,
    lgu: dict[str, str],
    day: str,
    *,
    method: str = "bank_credits",
    agricultural: bool = False,
    due_cents: int | None = None,
    security_required: int | None = None,
) -> dict[str, Any]:
    """A 9,000 sq ft plan (no comment period) received and approved on ``day`` (its LGU
    requiring ``security_required`` of appeal security of a petitioner, if given)."""
    extra: dict[str, Any] = {"impact": impact(agricultural=agricultural)}
    if due_cents is not None:
        extra["in_lieu_amount_due_cents"] = due_cents
    if security_required is not None:
        extra["appeal_security_required_cents"] = security_required
    with on(day):
        return kit.approved_plan(lgu, day, method=method, **extra)


def made_final(kit: Kit, lgu: dict[str, str], plan: dict[str, Any], day: str) -> str:
    """Mail the decision notice on ``day``; returns the first day the plan is final."""
    with on(day):
        path = f"/plans/{plan['id']}/decision-notice"
        ok(kit.api.post(path, mailing(day, plan=plan), token=lgu["token"]))
        window_ends = kit.get_plan(plan["id"])["deadlines"]["appeal_window_ends"]
    final_on = next_day(window_ends)
    with on(final_on):
        assert kit.get_plan(plan["id"])["status"] == "final"
    return final_on


def pay(
    api: Api,
    kind: str,
    amount: int,
    day: str,
    *,
    plan_id: str | None = None,
    appeal_id: str | None = None,
    token: str | None = None,
    payer: str = "A. Payer",
    postmarked_on: str | None = None,
) -> Any:
    body: dict[str, Any] = {
        "kind": kind,
        "amount_cents": amount,
        "payer": payer,
        "received_on": day,
    }
    if postmarked_on is not None:
        body["postmarked_on"] = postmarked_on
    if plan_id is not None:
        body["plan_id"] = plan_id
    if appeal_id is not None:
        body["appeal_id"] = appeal_id
    with on(day):
        return api.post("/payments", body, token=token)


def appealed(
    kit: Kit, lgu: dict[str, str], *, security: int | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A plan approved on 2026-09-01, its decision notice mailed 2026-09-04, and the owner's
    petition postmarked 2026-09-10 and received by the board 2026-09-11; with ``security``, the
    LGU requires that much appeal security and the petition says it posts it (Subd. 9)."""
    plan = approved(kit, lgu, "2026-09-01", security_required=security)
    with on("2026-09-04"):
        path = f"/plans/{plan['id']}/decision-notice"
        ok(kit.api.post(path, mailing("2026-09-04", plan=plan), token=lgu["token"]))
    body: dict[str, Any] = {
        "petitioner_kind": "owner",
        "petitioner_name": "Ann Owner",
        "petitioner_address": "1 Lake Rd, Buffalo, MN",
        "postmarked_on": "2026-09-10",
        "received_on": "2026-09-11",
        "filing_fee_cents": FEE,
    }
    if security is not None:
        body["security_cents"] = security
    with on("2026-09-11"):
        appeal = ok(kit.api.post(f"/plans/{plan['id']}/appeals", body))
    return plan, appeal


def decide_petition(kit: Kit, appeal: dict[str, Any], day: str, granted: bool) -> Any:
    body: dict[str, Any] = {"granted": granted, "decided_on": day, "reason": "for the test"}
    if not granted:
        body["grounds"] = ["meritless"]
    with on(day):
        return ok(kit.api.post(f"/appeals/{appeal['id']}/petition", body))


def security_body(
    *,
    kind: str = "letter_of_credit",
    amount: int = 2_500_000,
    irrevocable: bool = True,
    issued_on: str = "2026-06-01",
    expires_on: str = "2027-06-01",
) -> dict[str, Any]:
    return {
        "kind": kind,
        "issuer": "First State Bank",
        "amount_cents": amount,
        "irrevocable": irrevocable,
        "issued_on": issued_on,
        "expires_on": expires_on,
    }


def hold(kit: Kit, plan: dict[str, Any], token: str | None = None, **kw: Any) -> Any:
    body = security_body(**kw)
    with on(body["issued_on"]):
        return kit.api.post(f"/plans/{plan['id']}/securities", body, token=token)


def payments_of(api: Api, plan_id: str, token: str | None = None) -> list[dict[str, Any]]:
    return list(ok(api.get(f"/payments?plan_id={plan_id}", token=token), 200)["items"])


def journal(api: Api, **params: str) -> list[dict[str, Any]]:
    """Every page of the journal with these filters."""
    items: list[dict[str, Any]] = []
    query = {**params, "limit": "500"}
    while True:
        body = ok(api.get("/audit/journal", query_string=query), 200)
        items += body["items"]
        if not body["next_cursor"]:
            return items
        query["cursor"] = body["next_cursor"]


def blocker_codes(plan: dict[str, Any]) -> list[str]:
    return [b["code"] for b in plan["impact_blockers"]]


# --- in-lieu payments (Subd. 1) ----------------------------------------------------------------


def test_an_in_lieu_payment_is_booked_for_a_monetary_plan_on_agricultural_land(kit):
    lgu = kit.lgu()
    plan = approved(
        kit, lgu, "2026-06-01", method="monetary_payment", agricultural=True, due_cents=500_000
    )
    body = ok(
        pay(kit.api, "in_lieu", 200_000, "2026-06-02", plan_id=plan["id"], token=lgu["token"])
    )
    assert body["kind"] == "in_lieu"
    assert body["amount_cents"] == 200_000
    assert body["plan_id"] == plan["id"]
    assert body["appeal_id"] is None
    assert body["status"] == "received"
    assert body["received_on"] == "2026-06-02"
    assert body["transaction_id"]
    with on("2026-06-02"):
        assert ok(kit.api.get(f"/payments/{body['id']}", token=lgu["token"]), 200) == body
        assert payments_of(kit.api, plan["id"]) == [body]


def test_in_lieu_payments_received_in_full_satisfy_a_monetary_plans_blocker(kit):
    lgu = kit.lgu()
    plan = approved(
        kit, lgu, "2026-06-01", method="monetary_payment", agricultural=True, due_cents=500_000
    )
    # an in-lieu payment may arrive before the decision is final
    ok(pay(kit.api, "in_lieu", 200_000, "2026-06-03", plan_id=plan["id"], token=lgu["token"]))
    final_on = made_final(kit, lgu, plan, "2026-06-03")

    with on(final_on):
        short = kit.get_plan(plan["id"])
    assert short["impact_may_proceed"] is False
    assert blocker_codes(short) == ["in_lieu_payment_due"]

    last = ok(pay(kit.api, "in_lieu", 300_000, final_on, plan_id=plan["id"], token=lgu["token"]))
    with on(final_on):
        paid = kit.get_plan(plan["id"])
    assert paid["impact_may_proceed"] is True
    assert paid["impact_blockers"] == []

    # a refunded payment no longer counts toward the amount due
    with on(final_on):
        ok(kit.api.post(f"/payments/{last['id']}/refund", token=lgu["token"]))
        refunded = kit.get_plan(plan["id"])
    assert refunded["impact_may_proceed"] is False
    assert blocker_codes(refunded) == ["in_lieu_payment_due"]


@pytest.mark.parametrize(
    ("agricultural", "method"),
    [
        (False, "monetary_payment"),
        (True, "bank_credits"),
        (True, "project_specific"),
    ],
)
def test_in_lieu_is_refused_unless_agricultural_land_and_monetary_payment(
    kit, agricultural, method
):
    lgu = kit.lgu()
    due = 500_000 if method == "monetary_payment" else None
    plan = approved(kit, lgu, "2026-06-01", method=method, agricultural=agricultural, due_cents=due)
    response = pay(kit.api, "in_lieu", 100_000, "2026-06-02", plan_id=plan["id"])
    problem(response, 422, "not_eligible")
    with on("2026-06-02"):
        assert payments_of(kit.api, plan["id"]) == []


def monetary_plan(kit: Kit, lgu: dict[str, str], due_cents: int = 100_000) -> dict[str, Any]:
    """A 9,000 sq ft monetary-payment plan on agricultural land received 2026-09-01, its summary
    mailed that day, undecided."""
    with on("2026-09-01"):
        plan = kit.plan(
            lgu,
            received_on="2026-09-01",
            area_sqft=9_000,
            method="monetary_payment",
            impact=impact(agricultural=True),
            in_lieu_amount_due_cents=due_cents,
        )
        kit.mail_summary(lgu, plan, "2026-09-01")
    return plan


def decided(kit: Kit, lgu: dict[str, str], plan: dict[str, Any], outcome: str) -> None:
    with on("2026-09-01"):
        path = f"/plans/{plan['id']}/decision"
        ok(kit.api.post(path, decision_body(outcome, "2026-09-01"), token=lgu["token"]))


def reversed_on_appeal(kit: Kit, lgu: dict[str, str], plan: dict[str, Any]) -> None:
    """The approval of 2026-09-01 (its notice mailed 09-04) reversed by the board on 09-20, on
    the owner's petition postmarked 09-10, received with its fee 09-11 and granted 09-15."""
    decided(kit, lgu, plan, "approved")
    with on("2026-09-04"):
        path = f"/plans/{plan['id']}/decision-notice"
        ok(kit.api.post(path, mailing("2026-09-04", plan=plan), token=lgu["token"]))
    body = {
        "petitioner_kind": "owner",
        "petitioner_name": "Ann Owner",
        "petitioner_address": "1 Lake Rd, Buffalo, MN",
        "postmarked_on": "2026-09-10",
        "received_on": "2026-09-11",
        "filing_fee_cents": FEE,
    }
    with on("2026-09-11"):
        appeal = ok(kit.api.post(f"/plans/{plan['id']}/appeals", body))
    ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
    decide_petition(kit, appeal, "2026-09-15", granted=True)
    with on("2026-09-20"):
        ruling = {"outcome": "plan_reversed", "decided_on": "2026-09-20"}
        ok(kit.api.post(f"/appeals/{appeal['id']}/decision", ruling))


@pytest.mark.parametrize(
    ("decision", "status", "current_status"),
    [
        ("undecided", 201, None),
        ("approved", 201, None),
        ("denied", 409, "denied"),
        ("reversed_on_appeal", 409, "denied"),
    ],
)
def test_an_in_lieu_payment_for_a_plan_permitting_no_impact_is_refused_booking_nothing(
    kit, decision, status, current_status
):
    """In-lieu money may arrive before the decision, and after an approval; once the plan is
    denied, by its LGU or on appeal, there is no impact for it to replace: ``conflict`` naming
    the plan's status, nothing booked (the $700 received 09-02, before the reversal, stays)."""
    lgu = kit.lgu()
    plan = monetary_plan(kit, lgu)
    ok(pay(kit.api, "in_lieu", 70_000, "2026-09-02", plan_id=plan["id"], token=lgu["token"]))
    if decision == "reversed_on_appeal":
        reversed_on_appeal(kit, lgu, plan)
    elif decision != "undecided":
        decided(kit, lgu, plan, decision)
    with on("2026-09-21"):
        before = payments_of(kit.api, plan["id"])
    response = pay(kit.api, "in_lieu", 30_000, "2026-09-21", plan_id=plan["id"], token=lgu["token"])
    with on("2026-09-21"):
        after = payments_of(kit.api, plan["id"])
    if status == 201:
        assert ok(response)["status"] == "received"
        return
    refused = problem(response, 409, "conflict")
    assert refused["current_status"] == current_status
    assert "permits no impact" in refused["detail"]
    assert after == before
    assert [(p["kind"], p["status"]) for p in after if p["kind"] == "in_lieu"] == [
        ("in_lieu", "received")
    ]


def test_a_monetary_plan_on_land_that_is_not_agricultural_shows_the_blocker(kit):
    lgu = kit.lgu()
    plan = approved(
        kit, lgu, "2026-06-01", method="monetary_payment", agricultural=False, due_cents=500_000
    )
    final_on = made_final(kit, lgu, plan, "2026-06-01")
    with on(final_on):
        body = kit.get_plan(plan["id"])
    assert body["impact_may_proceed"] is False
    assert blocker_codes(body) == ["not_agricultural_land"]


# --- processing fees and who may record payments ----------------------------------------------


def test_the_plans_lgu_records_its_processing_fee_as_charged(kit):
    lgu = kit.lgu()
    plan = approved(kit, lgu, "2026-06-01")
    fee = ok(
        pay(kit.api, "processing_fee", 37_513, "2026-06-01", plan_id=plan["id"], token=lgu["token"])
    )
    assert (fee["kind"], fee["amount_cents"], fee["status"]) == (
        "processing_fee",
        37_513,
        "received",
    )
    with on("2026-06-01"):
        assert payments_of(kit.api, plan["id"], token=lgu["token"]) == [fee]


@pytest.mark.parametrize("kind", ["in_lieu", "processing_fee"])
def test_an_lgu_may_not_record_payments_for_another_lgus_plan(kit, kind):
    owner, other = kit.lgu(), kit.lgu()
    plan = approved(
        kit, owner, "2026-06-01", method="monetary_payment", agricultural=True, due_cents=1_000
    )
    refused = pay(kit.api, kind, 1_000, "2026-06-02", plan_id=plan["id"], token=other["token"])
    assert refused.status_code in (403, 404, 422), refused.json
    # the refusal does not reveal that the plan exists
    missing = pay(kit.api, kind, 1_000, "2026-06-02", plan_id="pln_nope", token=other["token"])
    assert (refused.status_code, refused.json["code"]) == (
        missing.status_code,
        missing.json["code"],
    )
    with on("2026-06-02"):
        assert payments_of(kit.api, plan["id"]) == []
        assert kit.api.get(f"/payments?plan_id={plan['id']}", token=other["token"]).status_code in (
            403,
            404,
        )
    # the owner's payment is invisible to the other LGU
    mine = ok(pay(kit.api, kind, 1_000, "2026-06-02", plan_id=plan["id"], token=owner["token"]))
    with on("2026-06-02"):
        assert kit.api.get(f"/payments/{mine['id']}", token=other["token"]).status_code == 404
        refund = kit.api.post(f"/payments/{mine['id']}/refund", token=other["token"])
        assert refund.status_code == 404
        assert ok(kit.api.get(f"/payments/{mine['id']}"), 200)["status"] == "received"


@pytest.mark.parametrize("kind", ["appeal_filing_fee", "appeal_security"])
def test_only_the_board_records_appeal_payments(kit, kind):
    lgu = kit.lgu()
    _plan, appeal = appealed(kit, lgu, security=10_000)
    amount = FEE if kind == "appeal_filing_fee" else 10_000
    response = pay(kit.api, kind, amount, "2026-09-11", appeal_id=appeal["id"], token=lgu["token"])
    problem(response, 403, "forbidden")
    # nor may the LGU refund what the board booked (the filing fee is the board's income)
    booked = ok(pay(kit.api, kind, amount, "2026-09-11", appeal_id=appeal["id"]))
    with on("2026-09-12"):
        refund = kit.api.post(f"/payments/{booked['id']}/refund", token=lgu["token"])
        problem(refund, 403, "forbidden")
        assert ok(kit.api.get(f"/payments/{booked['id']}"), 200)["status"] == "received"
        by_board = kit.api.post(f"/payments/{booked['id']}/refund")
        if kind == "appeal_filing_fee":
            # Subd. 9: the filing fee "shall be retained by the board"
            problem(by_board, 422, "not_eligible")
        else:
            assert ok(by_board)["status"] == "refunded"


def test_a_holder_may_not_record_payments(kit):
    lgu, holder = kit.lgu(), kit.holder()
    plan = approved(kit, lgu, "2026-06-01")
    response = pay(
        kit.api, "processing_fee", 1_000, "2026-06-01", plan_id=plan["id"], token=holder["token"]
    )
    problem(response, 403, "forbidden")


def test_a_payment_received_in_the_future_is_a_validation_error(kit):
    lgu = kit.lgu()
    plan = approved(kit, lgu, "2026-06-01")
    with on("2026-06-01"):
        body = {
            "kind": "processing_fee",
            "amount_cents": 1_000,
            "payer": "Early",
            "received_on": "2026-06-02",
            "plan_id": plan["id"],
        }
        problem(kit.api.post("/payments", body), 422, "validation_error")
        assert payments_of(kit.api, plan["id"]) == []


# --- appeal fee and security (Subd. 9) ----------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "status"), [(FEE - 1, 422), (FEE, 201), (FEE + 1, 422)], ids=str
)
def test_the_appeal_filing_fee_is_exactly_200_dollars(kit, amount, status):
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu)
    response = pay(kit.api, "appeal_filing_fee", amount, "2026-09-11", appeal_id=appeal["id"])
    if status == 201:
        body = ok(response)
        assert body["appeal_id"] == appeal["id"]
        assert body["status"] == "received"
    else:
        problem(response, 422, "invalid_fee")
    with on("2026-09-11"):
        assert len(payments_of(kit.api, plan["id"])) == (1 if status == 201 else 0)


#: ``appealed``'s notice was mailed on Friday 2026-09-04: the window's 15th day is Saturday
#: 09-19, so it ends Monday 09-21 (645.15, the board's calendar)
WINDOW_ENDS = "2026-09-21"


@pytest.mark.parametrize(
    ("postmarked_on", "status", "code"),
    [(WINDOW_ENDS, 201, None), (next_day(WINDOW_ENDS), 422, "appeal_window_closed")],
    ids=["last-day", "day-after"],
)
def test_a_filing_fee_postmarked_after_the_appeal_window_is_refused_as_a_late_petition(
    kit, postmarked_on, status, code
):
    """Subd. 9: "mailing a petition and payment of a filing fee ... within 15 days": a fee mailed
    after the window is ``appeal_window_closed``, as the petition would be, and books nothing;
    the petition stays unpaid, so its grant is refused."""
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu)
    received = "2026-09-23"
    response = pay(
        kit.api,
        "appeal_filing_fee",
        FEE,
        received,
        appeal_id=appeal["id"],
        postmarked_on=postmarked_on,
    )
    with on(received):
        shown = ok(kit.api.get(f"/appeals/{appeal['id']}"), 200)
        payments = payments_of(kit.api, plan["id"])
    if status == 201:
        assert ok(response)["postmarked_on"] == postmarked_on
        assert shown["filing_fee_received_on"] == received
        assert shown["filing_fee_postmarked_on"] == postmarked_on
        decide_petition(kit, appeal, "2026-09-24", granted=True)
        return
    refused = problem(response, 422, "appeal_window_closed")
    assert refused["detail"] == f"Subd. 9: the filing fee had to be mailed by {WINDOW_ENDS}"
    assert (refused["deadline"], refused["ends"]) == ("appeal_window_ends", WINDOW_ENDS)
    assert payments == []
    assert (shown["filing_fee_received_on"], shown["filing_fee_postmarked_on"]) == (None, None)
    with on("2026-09-24"):
        body = {"granted": True, "decided_on": "2026-09-24", "reason": "for the test"}
        problem(kit.api.post(f"/appeals/{appeal['id']}/petition", body), 422, "invalid_fee")


@pytest.mark.parametrize(
    ("postmarked_on", "status"),
    [("2026-09-03", 422), ("2026-08-01", 422), ("1900-01-01", 422), ("2026-09-04", 201)],
    ids=["day-before-notice", "before-decision", "first-date", "notice-day"],
)
def test_a_filing_fee_postmarked_before_the_notice_of_decision_is_refused(
    kit, postmarked_on, status
):
    """The window opens with the notice of decision's mailing (``appealed``'s: 2026-09-04), as
    for the petition: a fee postmarked before it paid for no appeal of this decision and books
    nothing; one mailed that day is in time."""
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu)
    response = pay(
        kit.api,
        "appeal_filing_fee",
        FEE,
        "2026-09-11",
        appeal_id=appeal["id"],
        postmarked_on=postmarked_on,
    )
    with on("2026-09-11"):
        payments = payments_of(kit.api, plan["id"])
    if status == 201:
        assert ok(response)["postmarked_on"] == postmarked_on
        return
    refused = problem(response, 422, "validation_error")
    assert refused["errors"] == {"postmarked_on": ["before the appeal window opened"]}
    assert payments == []


def test_a_fee_in_the_envelope_of_a_petition_of_a_deemed_approval_stays_in_time(kit):
    """A deemed approval with no notice takes a petition postmarked after ``decision_due``
    (08-07); a notice of the deemed approval mailed since (08-20) opens a window that begins
    after the petition, but the fee mailed with it is as timely as the petition was judged.
    A fee mailed before the petition, before the deemed approval began, is still refused."""
    from tests.api.test_appeals import petition, post_as

    lgu = kit.lgu()
    with on("2026-06-08"):
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000)
    owner = {"kind": "owner", "residents": None, "fee": FEE}
    appeal = ok(petition(kit, plan, postmarked="2026-08-10", received="2026-08-11", **owner))
    path = f"/plans/{plan['id']}/decision-notice"
    ok(post_as(kit, path, mailing("2026-08-20", plan=plan), "2026-08-20", lgu["token"]))
    early = pay(
        kit.api,
        "appeal_filing_fee",
        FEE,
        "2026-08-21",
        appeal_id=appeal["id"],
        postmarked_on="2026-08-06",
    )
    assert problem(early, 422, "validation_error")["errors"] == {
        "postmarked_on": ["before the appeal window opened"]
    }
    # received with the petition on 08-11, booked after the notice was mailed
    body = {
        "kind": "appeal_filing_fee",
        "amount_cents": FEE,
        "payer": "A. Payer",
        "received_on": "2026-08-11",
        "appeal_id": appeal["id"],
    }
    with on("2026-08-21"):
        fee = ok(kit.api.post("/payments", body))
    assert fee["postmarked_on"] == "2026-08-10"


def test_a_filing_fee_without_a_postmark_came_in_the_petitions_envelope(kit):
    """A fee received the day its petition was (09-11) and booked without its postmark came in
    the petition's envelope and takes its postmark, shown on the payment and on the appeal
    beside the day it was received; booked after the window (09-23), it is still in time."""
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu)
    body = {
        "kind": "appeal_filing_fee",
        "amount_cents": FEE,
        "payer": "A. Payer",
        "received_on": appeal["received_on"],
        "appeal_id": appeal["id"],
    }
    with on("2026-09-23"):
        fee = ok(kit.api.post("/payments", body))
        shown = ok(kit.api.get(f"/appeals/{appeal['id']}"), 200)
        (listed,) = kit.get_plan(plan["id"])["appeals"]
    assert fee["postmarked_on"] == appeal["postmarked_on"] == "2026-09-10"
    assert (shown["filing_fee_received_on"], shown["filing_fee_postmarked_on"]) == (
        "2026-09-11",
        "2026-09-10",
    )
    assert listed == shown


def test_a_fee_received_after_its_petition_without_a_postmark_is_refused_and_reopens_nothing(
    kit,
):
    """The petition postmarked 09-10 and received 09-11, the window ending 09-21 with no fee
    recorded: on 10-20 the plan is final and the appeal obtained none.  A fee received that day
    did not come in the petition's envelope, so the petition's postmark says nothing of when it
    was mailed: without its own it is ``validation_error`` on ``postmarked_on`` and books
    nothing; the plan stays final.  With its own postmark, after the window, it is late."""
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu)
    late = {
        "kind": "appeal_filing_fee",
        "amount_cents": FEE,
        "payer": "Late Payer",
        "received_on": "2026-10-20",
        "appeal_id": appeal["id"],
    }
    with on("2026-10-20"):
        unmarked = kit.api.post("/payments", late)
        marked = kit.api.post("/payments", late | {"postmarked_on": "2026-10-19"})
        shown = kit.get_plan(plan["id"])
        payments = payments_of(kit.api, plan["id"])
    refused = problem(unmarked, 422, "validation_error")
    assert refused["errors"] == {
        "postmarked_on": ["required: the petition was received on 2026-09-11"]
    }
    problem(marked, 422, "appeal_window_closed")
    assert payments == []
    assert shown["status"] == "final"
    assert [(a["status"], a["filing_fee_received_on"]) for a in shown["appeals"]] == [
        ("no_fee_in_window", None)
    ]


def test_a_postmark_after_receipt_or_on_another_payment_is_refused_booking_nothing(kit):
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu, security=10_000)
    fee = {"kind": "appeal_filing_fee", "amount_cents": FEE, "appeal_id": appeal["id"]}
    security = {"kind": "appeal_security", "amount_cents": 10_000, "appeal_id": appeal["id"]}
    mailed = {"payer": "A. Payer", "received_on": "2026-09-12", "postmarked_on": "2026-09-13"}
    with on("2026-09-14"):
        late = kit.api.post("/payments", fee | mailed)
        posted = kit.api.post("/payments", security | mailed | {"postmarked_on": "2026-09-11"})
        assert payments_of(kit.api, plan["id"]) == []
    assert problem(late, 422, "validation_error")["errors"] == {
        "postmarked_on": ["after received_on"]
    }
    assert problem(posted, 422, "validation_error")["errors"] == {
        "postmarked_on": ["only on an appeal_filing_fee payment"]
    }


@pytest.mark.parametrize(
    ("amount", "status"),
    [(1, 201), (SECURITY_CAP, 201), (SECURITY_CAP + 1, 422)],
    ids=str,
)
def test_appeal_security_is_at_most_500_dollars(kit, amount, status):
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu, security=SECURITY_CAP)
    response = pay(kit.api, "appeal_security", amount, "2026-09-11", appeal_id=appeal["id"])
    if status == 201:
        assert ok(response)["status"] == "received"
    else:
        problem(response, 422, "invalid_fee")
    with on("2026-09-11"):
        assert len(payments_of(kit.api, plan["id"])) == (1 if status == 201 else 0)


def test_appeal_security_where_the_lgu_required_none_is_refused_booking_nothing(kit):
    """Subd. 9: the LGU "may require" security; with none required there is nothing to post (it
    would be kept on a denial, money nobody required): ``invalid_fee``, nothing booked, and the
    petition is granted on its fee alone."""
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu)
    assert plan["appeal_security_required_cents"] is None
    response = pay(kit.api, "appeal_security", SECURITY_CAP, "2026-09-11", appeal_id=appeal["id"])
    refused = problem(response, 422, "invalid_fee")
    assert refused["detail"] == (
        "Subd. 9: the LGU required no appeal security of this petitioner, so none is posted"
    )
    assert refused["amount_cents"] == SECURITY_CAP
    with on("2026-09-11"):
        assert payments_of(kit.api, plan["id"]) == []
        assert ok(kit.api.get(f"/appeals/{appeal['id']}"), 200)["security_held_cents"] == 0
    ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
    assert decide_petition(kit, appeal, "2026-09-14", granted=True)["status"] == "granted"


@pytest.mark.parametrize(
    ("amount", "status"), [(29_999, 201), (30_000, 201), (30_001, 422), (SECURITY_CAP, 422)]
)
def test_appeal_security_above_the_amount_the_lgu_required_is_refused(kit, amount, status):
    """The LGU requires $300 (within the statute's $500): up to that is posted (less, and the
    grant waits for the rest), more is ``invalid_fee`` naming what is required."""
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu, security=30_000)
    response = pay(kit.api, "appeal_security", amount, "2026-09-11", appeal_id=appeal["id"])
    with on("2026-09-11"):
        held = ok(kit.api.get(f"/appeals/{appeal['id']}"), 200)["security_held_cents"]
        booked = payments_of(kit.api, plan["id"])
    if status == 201:
        assert ok(response)["amount_cents"] == amount
        assert held == amount and len(booked) == 1
        return
    refused = problem(response, 422, "invalid_fee")
    assert refused["detail"] == (
        f"Subd. 9: the LGU requires $300.00 of appeal security, not ${amount / 100:,.2f}"
    )
    assert (refused["required_cents"], refused["amount_cents"]) == (30_000, amount)
    assert (held, booked) == (0, [])


def test_security_booked_where_none_was_required_is_refunded_after_a_denial(kit, monkeypatch):
    """Security the service booked before it refused it where the LGU required none (here: its
    check switched off to write such a payment) was never owed, so a denial does not keep it:
    the board refunds it."""
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu)
    monkeypatch.setattr(money, "_check_security", lambda *_args: None)
    posted = ok(pay(kit.api, "appeal_security", SECURITY_CAP, "2026-09-11", appeal_id=appeal["id"]))
    monkeypatch.undo()
    denied = decide_petition(kit, appeal, "2026-09-14", granted=False)
    assert denied["status"] == "petition_denied" and denied["security_held_cents"] == SECURITY_CAP
    with on("2026-09-15"):
        refunded = ok(kit.api.post(f"/payments/{posted['id']}/refund"))
        shown = ok(kit.api.get(f"/appeals/{appeal['id']}"), 200)
        statuses = [p["status"] for p in payments_of(kit.api, plan["id"])]
    assert refunded["status"] == "refunded" and refunded["compensation_transaction_id"]
    assert shown["security_held_cents"] == 0 and statuses == ["refunded"]


def test_a_plans_payments_include_its_appeals(kit):
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu, security=SECURITY_CAP)
    other, _ = appealed(kit, lgu)
    fee = ok(
        pay(kit.api, "processing_fee", 5_000, "2026-09-11", plan_id=plan["id"], token=lgu["token"])
    )
    filing = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
    security = ok(
        pay(kit.api, "appeal_security", SECURITY_CAP, "2026-09-11", appeal_id=appeal["id"])
    )
    ok(pay(kit.api, "processing_fee", 7_000, "2026-09-11", plan_id=other["id"]))
    with on("2026-09-11"):
        listed = payments_of(kit.api, plan["id"])
        assert {p["id"] for p in listed} == {fee["id"], filing["id"], security["id"]}
        assert payments_of(kit.api, plan["id"], token=lgu["token"]) == listed
        # the LGU sees the appeal payments of its own plan
        assert ok(kit.api.get(f"/payments/{filing['id']}", token=lgu["token"]), 200) == filing


def test_an_appeal_payment_naming_another_plan_is_refused_and_books_nothing(kit):
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu)
    other, _ = appealed(kit, lgu)
    response = pay(
        kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"], plan_id=other["id"]
    )
    assert "plan_id" in problem(response, 422, "validation_error")["errors"]
    with on("2026-09-11"):
        assert payments_of(kit.api, plan["id"]) == []
        assert payments_of(kit.api, other["id"]) == []
    # naming the appealed plan itself is the same payment as naming none
    named = pay(
        kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"], plan_id=plan["id"]
    )
    assert ok(named)["plan_id"] == plan["id"]


def test_a_plan_payment_naming_an_appeal_is_refused_and_books_nothing(kit):
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu)
    response = pay(
        kit.api, "processing_fee", 5_000, "2026-09-11", plan_id=plan["id"], appeal_id=appeal["id"]
    )
    assert "appeal_id" in problem(response, 422, "validation_error")["errors"]
    with on("2026-09-11"):
        assert payments_of(kit.api, plan["id"]) == []


@pytest.mark.parametrize(
    ("kind", "field"),
    [("in_lieu", "appeal_id"), ("appeal_filing_fee", "plan_id")],
)
def test_an_empty_id_is_refused_as_a_named_one_is_and_books_nothing(kit, kind, field):
    """``"appeal_id": ""`` on an in-lieu payment names no appeal, and ``"plan_id": ""`` on an
    appeal's fee no plan: each is ``validation_error`` on its field, as a non-empty one is,
    never dropped silently."""
    lgu = kit.lgu()
    plan = approved(
        kit, lgu, "2026-09-01", method="monetary_payment", agricultural=True, due_cents=100_000
    )
    _, appeal = appealed(kit, lgu)
    if kind == "in_lieu":
        response = pay(kit.api, kind, 1_000, "2026-09-11", plan_id=plan["id"], appeal_id="")
        paid_for = plan["id"]
    else:
        response = pay(kit.api, kind, FEE, "2026-09-11", appeal_id=appeal["id"], plan_id="")
        paid_for = appeal["plan_id"]
    assert field in problem(response, 422, "validation_error")["errors"]
    with on("2026-09-11"):
        assert payments_of(kit.api, paid_for) == []


def test_another_lgus_plan_is_not_found_by_its_securities_as_by_its_payments(kit):
    """``?plan_id=`` of a plan the caller may not see (another LGU's, or none) is 404 on
    ``/securities`` as on ``/payments``, JSON and CSV: not an empty list reading "none held"."""
    lgu, other = kit.lgu(), kit.lgu()
    plan = project_plan(kit, lgu)
    held = ok(hold(kit, plan, token=lgu["token"]))
    with on("2026-06-02"):
        for path in ("/payments", "/securities"):
            for query in (f"plan_id={plan['id']}", f"plan_id={plan['id']}&format=csv"):
                refused = kit.api.get(f"{path}?{query}", token=other["token"])
                problem(refused, 404, "not_found")
            problem(kit.api.get(f"{path}?plan_id=pln_nope"), 404, "not_found")
        mine = ok(kit.api.get(f"/securities?plan_id={plan['id']}", token=lgu["token"]), 200)
    assert [s["id"] for s in mine["items"]] == [held["id"]]


def test_appeal_security_is_returned_exactly_once_when_the_petition_is_granted(kit):
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu, security=SECURITY_CAP)
    filing = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
    security = ok(
        pay(kit.api, "appeal_security", SECURITY_CAP, "2026-09-11", appeal_id=appeal["id"])
    )
    granted = decide_petition(kit, appeal, "2026-09-21", granted=True)
    assert granted["status"] == "granted"

    with on("2026-09-21"):
        returned = ok(kit.api.get(f"/payments/{security['id']}"), 200)
        assert returned["status"] == "returned"
        assert returned["compensation_transaction_id"] not in (None, security["transaction_id"])
        # the filing fee is retained by the board
        assert ok(kit.api.get(f"/payments/{filing['id']}"), 200)["status"] == "received"
        # returned once: neither a refund nor a second petition decision returns it again
        problem(kit.api.post(f"/payments/{security['id']}/refund"), 409, "conflict")
        again = {"granted": True, "decided_on": "2026-09-21", "reason": "again"}
        problem(kit.api.post(f"/appeals/{appeal['id']}/petition", again), 409, "conflict")
        assert ok(kit.api.get(f"/payments/{security['id']}"), 200) == returned
        compensations = [
            tx
            for tx in journal(kit.api, kind="payment_returned")
            if tx["reverses_id"] == security["transaction_id"]
        ]
    assert [tx["transaction_id"] for tx in compensations] == [
        returned["compensation_transaction_id"]
    ]
    (tx,) = compensations
    assert tx["effective_on"] == "2026-09-21"
    assert sum(e["amount"] for e in tx["entries"]) == 0
    assert sorted(abs(e["amount"]) for e in tx["entries"]) == [SECURITY_CAP, SECURITY_CAP]
    with on("2026-09-21"):
        statuses = {p["id"]: p["status"] for p in payments_of(kit.api, plan["id"])}
    assert statuses == {filing["id"]: "received", security["id"]: "returned"}


def test_appeal_security_is_kept_when_the_petition_is_denied(kit):
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu, security=SECURITY_CAP)
    ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
    security = ok(
        pay(kit.api, "appeal_security", SECURITY_CAP, "2026-09-11", appeal_id=appeal["id"])
    )
    denied = decide_petition(kit, appeal, "2026-09-21", granted=False)
    assert denied["status"] == "petition_denied"
    with on("2026-09-21"):
        kept = ok(kit.api.get(f"/payments/{security['id']}"), 200)
        assert kept["status"] == "received"
        assert kept["compensation_transaction_id"] is None
        # a denied petition does not shorten the window (to 09-21): approved, not yet final
        assert kit.get_plan(plan["id"])["status"] == "approved"
        assert not [
            tx
            for tx in journal(kit.api, kind="payment_returned")
            if tx["reverses_id"] == security["transaction_id"]
        ]


def write_live_copy(app: Flask, payment_id: str) -> None:
    """A second live payment like ``payment_id``, written with the ORM past the bank's checks
    and the plan's lock."""
    with app.extensions["wetbank.db"].transaction() as session:
        paid = session.get(Payment, payment_id)
        assert paid is not None
        columns = Payment.__table__.columns.keys()
        copy = {name: getattr(paid, name) for name in columns}
        copy.update(id=new_id("pay"), status="received", compensation_transaction_id=None)
        session.add(Payment(**copy))


def test_the_database_refuses_a_second_live_fee_or_security_and_takes_one_after_a_refund(kit):
    """Migration 0021: whatever writes the row, an appeal has one live filing fee and one live
    security; a refunded security leaves room for the next."""
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu, security=SECURITY_CAP)
    fee = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
    security = ok(
        pay(kit.api, "appeal_security", SECURITY_CAP, "2026-09-11", appeal_id=appeal["id"])
    )
    with on("2026-09-11"):
        before = payments_of(kit.api, plan["id"])
    for live in (fee, security):
        with pytest.raises(IntegrityError):
            write_live_copy(kit.app, live["id"])
    with on("2026-09-12"):
        assert payments_of(kit.api, plan["id"]) == before
        refunded = ok(kit.api.post(f"/payments/{security['id']}/refund"))
    assert refunded["status"] == "refunded"
    again = ok(pay(kit.api, "appeal_security", SECURITY_CAP, "2026-09-12", appeal_id=appeal["id"]))
    with pytest.raises(IntegrityError):
        write_live_copy(kit.app, again["id"])
    with on("2026-09-12"):
        statuses = {p["id"]: p["status"] for p in payments_of(kit.api, plan["id"])}
    assert statuses == {fee["id"]: "received", security["id"]: "refunded", again["id"]: "received"}


@pytest.mark.parametrize(
    ("kind", "amount"), [("appeal_filing_fee", FEE), ("appeal_security", SECURITY_CAP)]
)
def test_a_second_live_appeal_payment_past_the_plans_lock_is_a_conflict_booking_nothing(
    kit, monkeypatch, kind, amount
):
    """Were the check under the plan's lock ever passed (it reads no live payment), the
    database's index still refuses the second payment: ``conflict``, nothing booked."""
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu, security=SECURITY_CAP)
    first = ok(pay(kit.api, kind, amount, "2026-09-11", appeal_id=appeal["id"]))
    with on("2026-09-11"):
        before = payments_of(kit.api, plan["id"])
        booked = journal(kit.api, kind=f"payment_{kind}", **{"from": "2026-09-11"})
    monkeypatch.setattr(money, "_live_payment", lambda *_args: None)
    second = pay(kit.api, kind, amount, "2026-09-11", appeal_id=appeal["id"])
    monkeypatch.undo()
    assert "already" in problem(second, 409, "conflict")["detail"]
    with on("2026-09-11"):
        assert payments_of(kit.api, plan["id"]) == before == [first]
        assert journal(kit.api, kind=f"payment_{kind}", **{"from": "2026-09-11"}) == booked


# --- refunds ----------------------------------------------------------------------------------


def test_a_refund_is_one_compensating_transaction_and_a_second_is_a_conflict(kit):
    lgu = kit.lgu()
    plan = approved(kit, lgu, "2026-06-01")
    fee = ok(
        pay(kit.api, "processing_fee", 12_000, "2026-06-01", plan_id=plan["id"], token=lgu["token"])
    )
    with on("2026-06-05"):
        refunded = ok(kit.api.post(f"/payments/{fee['id']}/refund", token=lgu["token"]))
        assert refunded["id"] == fee["id"]
        assert refunded["status"] == "refunded"
        assert refunded["transaction_id"] == fee["transaction_id"]  # the original is not edited
        assert refunded["compensation_transaction_id"] not in (None, fee["transaction_id"])
        problem(kit.api.post(f"/payments/{fee['id']}/refund"), 409, "conflict")
        problem(kit.api.post(f"/payments/{fee['id']}/refund", token=lgu["token"]), 409, "conflict")
        assert ok(kit.api.get(f"/payments/{fee['id']}"), 200) == refunded
        (tx,) = [
            tx
            for tx in journal(kit.api, kind="payment_refunded", **{"from": "2026-06-05"})
            if tx["reverses_id"] == fee["transaction_id"]
        ]
    assert tx["transaction_id"] == refunded["compensation_transaction_id"]
    assert sorted(e["amount"] for e in tx["entries"]) == [-12_000, 12_000]


def test_refunding_an_unknown_payment_is_not_found(kit):
    with on("2026-06-01"):
        problem(kit.api.post("/payments/pay_nope/refund"), 404, "not_found")


# --- a filing fee recorded on the wrong appeal --------------------------------------------------

WRONG = "booked on the wrong appeal: the check names the other petition"


def reverse(api: Api, payment_id: str, day: str, reason: str | None = WRONG, token=None) -> Any:
    body = {} if reason is None else {"reason": reason}
    with on(day):
        return api.post(f"/payments/{payment_id}/reverse", body, token=token)


def board_fees(api: Api, day: str) -> int:
    """What the board's fee income account holds on ``day``, summed from the journal."""
    with on(day):
        found = journal(api, account_id="usd:board-fees")
    return sum(
        entry["amount"]
        for tx in found
        for entry in tx["entries"]
        if entry["account"] == "usd:board-fees"
    )


def test_a_filing_fee_booked_on_the_wrong_appeal_is_reversed_and_the_right_appeal_paid(kit):
    """The $200 is never refunded (Subd. 9), but a fee recorded against the wrong petition is
    not that petition's fee: the board reverses the booking, with its reason, by a compensating
    transaction, and books the fee on the right appeal; the board holds $200, not $400."""
    lgu = kit.lgu()
    _plan, wrong = appealed(kit, lgu)
    _plan, right = appealed(kit, lgu)
    before = board_fees(kit.api, "2026-09-11")
    fee = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=wrong["id"]))
    reversed_ = ok(reverse(kit.api, fee["id"], "2026-09-12"), 201)
    assert reversed_["id"] == fee["id"]
    assert reversed_["status"] == "reversed"
    assert reversed_["reversal_reason"] == WRONG
    assert reversed_["transaction_id"] == fee["transaction_id"]  # the original is not edited
    assert reversed_["compensation_transaction_id"] not in (None, fee["transaction_id"])
    with on("2026-09-12"):
        assert ok(kit.api.get(f"/payments/{fee['id']}"), 200) == reversed_
        reversed_only = ok(kit.api.get("/payments?status=reversed"), 200)["items"]
        # other tests on the shared database reverse fees too
        assert fee["id"] in [p["id"] for p in reversed_only]
        assert {p["status"] for p in reversed_only} == {"reversed"}
        (tx,) = [
            tx
            for tx in journal(kit.api, kind="payment_reversed", **{"from": "2026-09-12"})
            if tx["reverses_id"] == fee["transaction_id"]
        ]
        assert ok(kit.api.get(f"/appeals/{wrong['id']}"), 200)["filing_fee_received_on"] is None
    assert tx["transaction_id"] == reversed_["compensation_transaction_id"]
    assert WRONG in tx["memo"]
    assert sorted(e["amount"] for e in tx["entries"]) == [-FEE, FEE]
    right_fee = pay(
        kit.api,
        "appeal_filing_fee",
        FEE,
        "2026-09-12",
        appeal_id=right["id"],
        postmarked_on="2026-09-10",
    )
    ok(right_fee)
    assert board_fees(kit.api, "2026-09-12") - before == FEE
    # the wrong appeal has no fee now: its grant is refused until its own fee is paid
    with on("2026-09-14"):
        body = {"granted": True, "decided_on": "2026-09-14", "reason": "for the test"}
        refused = kit.api.post(f"/appeals/{wrong['id']}/petition", body)
    detail = problem(refused, 422, "invalid_fee")["detail"]
    assert detail == "the $200.00 filing fee has not been paid"
    decide_petition(kit, right, "2026-09-14", granted=True)


def test_a_fee_a_granted_petition_relied_on_is_not_reversed(kit):
    """A grant is the act that checks the fee (``invalid_fee`` without it): once the petition
    was granted with the fee, reversing it is ``conflict`` and nothing is written."""
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu)
    fee = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
    decide_petition(kit, appeal, "2026-09-14", granted=True)
    with on("2026-09-15"):
        payments = payments_of(kit.api, plan["id"])
        booked = journal(kit.api, **{"from": "2026-09-01"})
    refused = problem(reverse(kit.api, fee["id"], "2026-09-15"), 409, "conflict")
    assert "granted on 2026-09-14" in refused["detail"]
    assert refused["relied_on"] == [f"the grant of petition {appeal['id']} on 2026-09-14"]
    with on("2026-09-15"):
        assert payments_of(kit.api, plan["id"]) == payments
        assert journal(kit.api, **{"from": "2026-09-01"}) == booked


def test_a_fee_on_a_denied_petition_was_not_relied_on_and_is_reversed(kit):
    """A denial does not check the fee: a fee booked on a petition the board then denied may
    still be reversed as recorded in error, and a second reversal is ``conflict``."""
    lgu = kit.lgu()
    _plan, appeal = appealed(kit, lgu)
    fee = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
    decide_petition(kit, appeal, "2026-09-14", granted=False)
    assert ok(reverse(kit.api, fee["id"], "2026-09-15"), 201)["status"] == "reversed"
    again = problem(reverse(kit.api, fee["id"], "2026-09-16"), 409, "conflict")
    assert again["detail"] == "the payment was already reversed"


def test_only_the_board_reverses_a_fee_and_only_with_a_reason(kit):
    lgu = kit.lgu()
    holder = kit.holder()
    plan, appeal = appealed(kit, lgu)
    fee = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
    problem(reverse(kit.api, fee["id"], "2026-09-12", token=lgu["token"]), 403, "forbidden")
    problem(reverse(kit.api, fee["id"], "2026-09-12", token=holder["token"]), 403, "forbidden")
    for reason in (None, "   "):
        refused = reverse(kit.api, fee["id"], "2026-09-12", reason)
        assert list(problem(refused, 422, "validation_error")["errors"]) == ["reason"]
    problem(reverse(kit.api, "pay_nope", "2026-09-12"), 404, "not_found")
    with on("2026-09-12"):
        assert [p["status"] for p in payments_of(kit.api, plan["id"])] == ["received"]
        reversals = journal(kit.api, kind="payment_reversed")
    assert [tx for tx in reversals if tx["reverses_id"] == fee["transaction_id"]] == []


@pytest.mark.parametrize("kind", ["in_lieu", "processing_fee", "appeal_security"])
def test_payments_that_may_be_refunded_are_refunded_not_reversed(kit, kind):
    """Only the filing fee, which is never refunded, is reversed as recorded in error: any
    other payment booked in error is refunded (``not_eligible``, naming the refund)."""
    lgu = kit.lgu()
    if kind == "appeal_security":
        _plan, appeal = appealed(kit, lgu, security=SECURITY_CAP)
        paid = ok(pay(kit.api, kind, SECURITY_CAP, "2026-09-11", appeal_id=appeal["id"]))
        day = "2026-09-12"
    else:
        plan = approved(
            kit, lgu, "2026-06-01", method="monetary_payment", agricultural=True, due_cents=10_000
        )
        paid = ok(pay(kit.api, kind, 10_000, "2026-06-02", plan_id=plan["id"]))
        day = "2026-06-03"
    refused = problem(reverse(kit.api, paid["id"], day), 422, "not_eligible")
    assert "refund" in refused["detail"]
    with on(day):
        assert ok(kit.api.get(f"/payments/{paid['id']}"), 200)["status"] == "received"


# --- security instruments (Subd. 3) -----------------------------------------------------------


def project_plan(kit: Kit, lgu: dict[str, str], day: str = "2026-06-01") -> dict[str, Any]:
    return approved(kit, lgu, day, method="project_specific")


def test_the_plans_lgu_records_an_irrevocable_letter_of_credit(kit):
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    body = ok(hold(kit, plan, token=lgu["token"]))
    assert body["status"] == "held"
    assert body["plan_id"] == plan["id"]
    assert (body["kind"], body["irrevocable"]) == ("letter_of_credit", True)
    assert (body["issued_on"], body["expires_on"]) == ("2026-06-01", "2027-06-01")
    assert body["amount_cents"] == 2_500_000
    # another LGU neither records nor sees securities for this plan
    other = kit.lgu()
    with on("2026-06-01"):
        assert kit.api.get(f"/securities/{body['id']}", token=other["token"]).status_code == 404
    refused = hold(kit, plan, token=other["token"])
    assert refused.status_code in (403, 404), refused.json


def test_a_letter_of_credit_that_is_not_irrevocable_is_refused(kit):
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    response = hold(kit, plan, token=lgu["token"], irrevocable=False)
    body = problem(response, 422, "validation_error")
    assert "irrevocable" in body["errors"]
    with on("2026-06-01"):
        listed = ok(kit.api.get("/securities", token=lgu["token"]), 200)["items"]
    assert [s for s in listed if s["plan_id"] == plan["id"]] == []


def test_another_security_acceptable_to_the_lgu_need_not_be_irrevocable(kit):
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    body = ok(hold(kit, plan, token=lgu["token"], kind="cashiers_check", irrevocable=False))
    assert body["status"] == "held"
    # it is recorded, but only irrevocable securities guarantee the replacement (Subd. 3)
    final_on = made_final(kit, lgu, plan, "2026-06-01")
    with on(final_on):
        assert blocker_codes(kit.get_plan(plan["id"])) == ["replacement_not_guaranteed"]


@pytest.mark.parametrize(
    ("expires_on", "status"),
    [("2026-05-31", 422), ("2026-06-01", 422), ("2026-06-02", 201)],
)
def test_a_security_must_expire_after_it_is_issued(kit, expires_on, status):
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    response = hold(kit, plan, issued_on="2026-06-01", expires_on=expires_on)
    if status == 201:
        assert ok(response)["status"] == "held"
    else:
        assert "expires_on" in problem(response, 422, "validation_error")["errors"]


@pytest.mark.parametrize(
    ("expires_on", "status"),
    [("2026-06-14", 422), ("2026-06-15", 201), ("2026-06-16", 201)],
)
def test_a_security_already_expired_on_the_day_it_is_recorded_is_refused(kit, expires_on, status):
    """Issued 2026-05-01 and recorded 2026-06-15: one that expired the day before would be
    expired from the start and is refused, booking nothing; one expiring that day is held until
    its end, like any security on its expiry date."""
    lgu = kit.lgu()
    plan = project_plan(kit, lgu, day="2026-05-01")
    body = security_body(issued_on="2026-05-01", expires_on=expires_on)
    issue_day = {"kind": "security_held", "from": "2026-05-01", "to": "2026-05-01"}
    with on("2026-06-15"):
        before = journal(kit.api, **issue_day)
        response = kit.api.post(f"/plans/{plan['id']}/securities", body, token=lgu["token"])
        listed = ok(kit.api.get("/securities", query_string={"plan_id": plan["id"]}), 200)
        after = journal(kit.api, **issue_day)
    if status == 422:
        refused = problem(response, 422, "validation_error")
        assert list(refused["errors"]) == ["expires_on"]
        # the refusal says what to do: check the date, or record the instrument in force
        assert (
            "expired on 2026-06-14, before the day it is recorded (2026-06-15)"
            in (refused["detail"])
        )
        assert "record the one in force with its own expiry date" in refused["detail"]
        assert refused["errors"]["expires_on"] == [
            "before 2026-06-15: give the expiry of the instrument in force"
        ]
        assert listed["items"] == []
        assert after == before
        return
    held = ok(response)
    assert held["status"] == "held"
    assert [s["id"] for s in listed["items"]] == [held["id"]]
    assert len(after) == len(before) + 1
    with on(expires_on):
        assert ok(kit.api.get(f"/securities/{held['id']}"), 200)["status"] == "held"
    with on(next_day(expires_on)):
        assert ok(kit.api.get(f"/securities/{held['id']}"), 200)["status"] == "expired"


def release(kit: Kit, security: dict[str, Any], day: str, token: str | None = None) -> Any:
    with on(day):
        path = f"/securities/{security['id']}/release"
        return kit.api.post(path, {"released_on": day, "reason": "replaced"}, token=token)


def draw(
    kit: Kit, security: dict[str, Any], day: str, amount: int, token: str | None = None
) -> Any:
    with on(day):
        path = f"/securities/{security['id']}/draw"
        return kit.api.post(path, {"drawn_on": day, "amount_cents": amount}, token=token)


def test_a_released_security_is_neither_released_nor_drawn_again(kit):
    lgu = kit.lgu()
    security = ok(hold(kit, project_plan(kit, lgu), token=lgu["token"]))
    released = ok(release(kit, security, "2026-07-01", token=lgu["token"]))
    assert released["status"] == "released"
    assert released["released_on"] == "2026-07-01"
    assert released["release_reason"] == "replaced"
    problem(release(kit, security, "2026-07-02"), 409, "conflict")
    problem(draw(kit, security, "2026-07-02", 1_000), 409, "conflict")
    with on("2026-07-02"):
        assert ok(kit.api.get(f"/securities/{security['id']}"), 200) == released


def test_a_drawn_security_is_neither_drawn_nor_released_again(kit):
    lgu = kit.lgu()
    security = ok(hold(kit, project_plan(kit, lgu), token=lgu["token"]))
    drawn = ok(draw(kit, security, "2026-07-01", 2_500_000, token=lgu["token"]))
    assert drawn["status"] == "drawn"
    assert (drawn["drawn_on"], drawn["drawn_cents"]) == ("2026-07-01", 2_500_000)
    problem(draw(kit, security, "2026-07-02", 1_000), 409, "conflict")
    problem(release(kit, security, "2026-07-02"), 409, "conflict")


def test_an_expired_security_is_neither_released_nor_drawn(kit):
    lgu = kit.lgu()
    security = ok(
        hold(kit, project_plan(kit, lgu), issued_on="2026-06-01", expires_on="2026-06-30")
    )
    # on its expiry date it is still held
    with on("2026-06-30"):
        assert ok(kit.api.get(f"/securities/{security['id']}"), 200)["status"] == "held"
    problem(release(kit, security, "2026-07-01"), 409, "conflict")
    problem(draw(kit, security, "2026-07-01", 1_000), 409, "conflict")
    with on("2026-07-01"):
        assert ok(kit.api.get(f"/securities/{security['id']}"), 200)["status"] == "expired"


def test_a_draw_over_the_amount_of_the_security_is_refused(kit):
    lgu = kit.lgu()
    security = ok(hold(kit, project_plan(kit, lgu), amount=2_500_000))
    problem(draw(kit, security, "2026-07-01", 2_500_001), 422, "validation_error")
    with on("2026-07-01"):
        assert ok(kit.api.get(f"/securities/{security['id']}"), 200)["status"] == "held"
    drawn = ok(draw(kit, security, "2026-07-01", 2_500_000))
    assert (drawn["status"], drawn["drawn_cents"]) == ("drawn", 2_500_000)


def test_securities_are_listed_by_status_and_expiry(kit):
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    soon = ok(hold(kit, plan, token=lgu["token"], expires_on="2026-08-15"))
    later = ok(hold(kit, plan, token=lgu["token"], expires_on="2026-12-31"))
    gone = ok(hold(kit, plan, token=lgu["token"], expires_on="2026-08-01"))
    ok(release(kit, gone, "2026-06-10", token=lgu["token"]))
    other_lgu = kit.lgu()
    theirs = ok(hold(kit, project_plan(kit, other_lgu), expires_on="2026-08-10"))

    def ids(query: str, token: str | None = None) -> list[str]:
        with on("2026-06-15"):
            items = ok(kit.api.get(f"/securities?{query}", token=token), 200)["items"]
        return [s["id"] for s in items if s["id"] in {soon["id"], later["id"], gone["id"]}]

    assert ids("status=held&expiring_before=2026-09-01", lgu["token"]) == [soon["id"]]
    assert ids("status=held&expiring_before=2026-09-01") == [soon["id"]]
    assert ids("status=held", lgu["token"]) == [soon["id"], later["id"]]
    assert ids("status=released", lgu["token"]) == [gone["id"]]
    assert ids("expiring_before=2026-09-01", lgu["token"]) == [gone["id"], soon["id"]]
    with on("2026-06-15"):
        mine = ok(kit.api.get("/securities", token=lgu["token"]), 200)["items"]
        all_held = ok(kit.api.get("/securities?status=held"), 200)["items"]
    assert theirs["id"] not in {s["id"] for s in mine}
    assert theirs["id"] in {s["id"] for s in all_held}
    assert all(s["status"] == "held" for s in all_held)
    # once past their expiry date, securities are listed as expired
    with on("2026-08-16"):
        expired = ok(kit.api.get("/securities?status=expired", token=lgu["token"]), 200)["items"]
    assert [s["id"] for s in expired] == [soon["id"]]
    with on("2026-06-15"):
        problem(kit.api.get("/securities?status=lost"), 422, "validation_error")


@pytest.mark.parametrize("kind", ["released", "drawn"])
def test_a_released_or_drawn_security_no_longer_guarantees_the_replacement(kit, kind):
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    security = ok(hold(kit, plan, token=lgu["token"]))
    final_on = made_final(kit, lgu, plan, "2026-06-01")
    with on(final_on):
        assert kit.get_plan(plan["id"])["impact_may_proceed"] is True
    if kind == "released":
        ok(release(kit, security, final_on))
    else:
        ok(draw(kit, security, final_on, 1_000))
    with on(final_on):
        body = kit.get_plan(plan["id"])
    assert body["impact_may_proceed"] is False
    assert blocker_codes(body) == ["replacement_not_guaranteed"]


def test_a_security_stops_guaranteeing_the_replacement_the_day_after_it_expires(kit):
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    ok(hold(kit, plan, token=lgu["token"], issued_on="2026-06-01", expires_on="2026-07-15"))
    final_on = made_final(kit, lgu, plan, "2026-06-01")
    assert final_on < "2026-07-15"

    def read_at(instant: str) -> dict[str, Any]:
        with freeze_time(instant, tz_offset=0):
            return kit.get_plan(plan["id"])

    # the day of expiry, and its last second in Minnesota (CDT, UTC-5)
    for instant in ("2026-07-15 12:00:00", "2026-07-16 04:59:59"):
        body = read_at(instant)
        assert body["status"] == "final"
        assert body["impact_may_proceed"] is True, (instant, body["impact_blockers"])
        assert body["impact_blockers"] == []
    # the first second of the next day, and the next day at noon
    for instant in ("2026-07-16 05:00:00", "2026-07-16 12:00:00"):
        body = read_at(instant)
        assert body["impact_may_proceed"] is False, instant
        assert blocker_codes(body) == ["replacement_not_guaranteed"]


def test_a_replacement_recorded_complete_needs_no_security(kit):
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    final_on = made_final(kit, lgu, plan, "2026-06-01")
    with on(final_on):
        assert blocker_codes(kit.get_plan(plan["id"])) == ["replacement_not_guaranteed"]
        path = f"/plans/{plan['id']}/replacement-completed"
        ok(kit.api.post(path, {"completed_on": final_on}, token=lgu["token"]))
        assert kit.get_plan(plan["id"])["impact_may_proceed"] is True


# --- the USD ledger stays balanced -------------------------------------------------------------


def test_the_usd_trial_balance_is_balanced_after_every_kind_of_payment(fresh):
    kit = fresh
    lgu = kit.lgu()
    # every payment kind, refusals, a refund, and a returned appeal security
    monetary = approved(
        kit, lgu, "2026-06-01", method="monetary_payment", agricultural=True, due_cents=300_000
    )
    ok(pay(kit.api, "in_lieu", 300_000, "2026-06-02", plan_id=monetary["id"], token=lgu["token"]))
    refunded = ok(pay(kit.api, "in_lieu", 1_000, "2026-06-02", plan_id=monetary["id"]))
    with on("2026-06-03"):
        ok(kit.api.post(f"/payments/{refunded['id']}/refund"))
    ok(pay(kit.api, "processing_fee", 45_000, "2026-06-02", plan_id=monetary["id"]))
    problem(
        pay(kit.api, "in_lieu", 5, "2026-06-02", plan_id=approved(kit, lgu, "2026-06-02")["id"]),
        422,
        "not_eligible",
    )
    for granted in (True, False):
        _plan, appeal = appealed(kit, lgu, security=SECURITY_CAP)
        ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
        ok(pay(kit.api, "appeal_security", SECURITY_CAP, "2026-09-11", appeal_id=appeal["id"]))
        problem(
            pay(kit.api, "appeal_filing_fee", FEE + 1, "2026-09-11", appeal_id=appeal["id"]),
            422,
            "invalid_fee",
        )
        decide_petition(kit, appeal, "2026-09-15", granted=granted)
    # securities: held, drawn in part, released, expired
    plan = project_plan(kit, lgu)
    ok(hold(kit, plan, amount=900_000))
    ok(draw(kit, ok(hold(kit, plan, amount=800_000)), "2026-06-20", 300_000))
    ok(release(kit, ok(hold(kit, plan, amount=700_000)), "2026-06-20"))
    ok(hold(kit, plan, amount=600_000, expires_on="2026-06-10"))

    with on("2026-10-01"):
        body = ok(kit.api.get("/audit/trial-balance"), 200)
        verified = ok(kit.api.get("/audit/verify"), 200)
    assert body["as_of"] == "2026-10-01"
    assert body["balanced"] is True
    (usd,) = [row for row in body["assets"] if row["asset"] == "USD"]
    assert usd["balanced"] is True
    # posted money: 300,000 + 1,000 − 1,000 + 45,000 + 2 × (20,000 + 50,000) − 50,000 + 300,000
    assert usd["debits"] == usd["credits"] == 300_000 + 2_000 + 45_000 + 140_000 + 50_000 + 300_000
    assert verified["ok"] is True, verified["first_broken"]
    # before any money moved, there is no USD row (or an empty, balanced one)
    with on("2026-10-01"):
        early = ok(kit.api.get("/audit/trial-balance?as_of=2026-05-01"), 200)
    assert early["balanced"] is True
    assert all(row["debits"] == 0 for row in early["assets"] if row["asset"] == "USD")


# --- dates: a payment is received no earlier than what it pays for -----------------------------


def test_a_grant_needs_the_fee_and_security_received_by_its_own_date(kit):
    """The petition was received 09-11; the fee and the $500 of security arrive 09-20.  A grant
    dated 09-12 would stand on money not yet paid (``invalid_fee``, nothing returned); dated
    09-20 it is granted and the security is returned that day, not before it arrived."""
    lgu = kit.lgu()
    _plan, appeal = appealed(kit, lgu, security=SECURITY_CAP)
    mailed = "2026-09-10"  # with the petition
    ok(
        pay(
            kit.api,
            "appeal_filing_fee",
            FEE,
            "2026-09-20",
            appeal_id=appeal["id"],
            postmarked_on=mailed,
        )
    )
    security = ok(
        pay(kit.api, "appeal_security", SECURITY_CAP, "2026-09-20", appeal_id=appeal["id"])
    )
    early = {"granted": True, "decided_on": "2026-09-12", "reason": "for the test"}
    with on("2026-09-21"):
        refused = problem(
            kit.api.post(f"/appeals/{appeal['id']}/petition", early), 422, "invalid_fee"
        )
        assert "2026-09-20" in refused["detail"]
        assert ok(kit.api.get(f"/payments/{security['id']}"), 200)["status"] == "received"
    granted = decide_petition(kit, appeal, "2026-09-20", granted=True)
    assert granted["status"] == "granted"
    with on("2026-09-21"):
        (tx,) = [
            tx
            for tx in journal(kit.api, kind="payment_returned")
            if tx["reverses_id"] == security["transaction_id"]
        ]
    assert tx["effective_on"] == "2026-09-20"


def test_security_the_lgu_requires_counts_only_once_received_by_the_grants_date(kit):
    """The LGU requires $300; the fee arrives 09-11 and the security 09-20: a grant dated 09-15
    is ``security_required`` (nothing posted by then), one dated 09-20 goes through."""
    lgu = kit.lgu()
    plan = approved(kit, lgu, "2026-09-01")
    with on("2026-09-01"):
        path = f"/plans/{plan['id']}/appeal-security"
        ok(kit.api.post(path, {"amount_cents": 30_000}, token=lgu["token"]))
    with on("2026-09-04"):
        path = f"/plans/{plan['id']}/decision-notice"
        ok(kit.api.post(path, mailing("2026-09-04", plan=plan), token=lgu["token"]))
    body = {
        "petitioner_kind": "owner",
        "petitioner_name": "Ann Owner",
        "petitioner_address": "1 Lake Rd, Buffalo, MN",
        "postmarked_on": "2026-09-10",
        "received_on": "2026-09-11",
        "filing_fee_cents": FEE,
        "security_cents": 30_000,
    }
    with on("2026-09-11"):
        appeal = ok(kit.api.post(f"/plans/{plan['id']}/appeals", body))
    ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
    ok(pay(kit.api, "appeal_security", 30_000, "2026-09-20", appeal_id=appeal["id"]))
    early = {"granted": True, "decided_on": "2026-09-15", "reason": "for the test"}
    with on("2026-09-21"):
        refused = problem(
            kit.api.post(f"/appeals/{appeal['id']}/petition", early), 422, "security_required"
        )
    assert refused["posted_cents"] == 0
    assert decide_petition(kit, appeal, "2026-09-20", granted=True)["status"] == "granted"


@pytest.mark.parametrize(
    ("kind", "day", "status"),
    [
        ("appeal_filing_fee", "2026-09-09", 422),  # the day before the petition's postmark
        ("appeal_filing_fee", "2026-09-10", 201),
        ("appeal_security", "2026-09-09", 422),
        ("appeal_security", "2026-09-10", 201),
    ],
)
def test_an_appeal_payment_is_received_no_earlier_than_the_petitions_postmark(
    kit, kind, day, status
):
    lgu = kit.lgu()
    _plan, appeal = appealed(kit, lgu, security=SECURITY_CAP)
    amount = FEE if kind == "appeal_filing_fee" else SECURITY_CAP
    with on("2026-09-12"):
        body = {
            "kind": kind,
            "amount_cents": amount,
            "payer": "Ann Owner",
            "received_on": day,
            "appeal_id": appeal["id"],
        }
        if kind == "appeal_filing_fee":  # received before the petition: its own postmark
            body["postmarked_on"] = "2026-09-10"
        response = kit.api.post("/payments", body)
    if status == 422:
        refused = problem(response, 422, "validation_error")
        assert refused["errors"] == {"received_on": ["before 2026-09-10"]}
        with on("2026-09-12"):
            assert payments_of(kit.api, appeal["plan_id"]) == []
    else:
        assert ok(response, 201)["received_on"] == day


@pytest.mark.parametrize(("day", "status"), [("2026-08-31", 422), ("2026-09-01", 201)])
def test_a_plans_fee_is_received_no_earlier_than_its_first_application(kit, day, status):
    lgu = kit.lgu()
    plan = approved(kit, lgu, "2026-09-01")
    with on("2026-09-02"):
        body = {
            "kind": "processing_fee",
            "amount_cents": 5_000,
            "payer": "A. Payer",
            "received_on": day,
            "plan_id": plan["id"],
        }
        response = kit.api.post("/payments", body, token=lgu["token"])
    if status == 422:
        refused = problem(response, 422, "validation_error")
        assert refused["errors"] == {"received_on": ["before 2026-09-01"]}
    else:
        assert ok(response, 201)["received_on"] == day


def test_an_appeals_fee_and_security_are_checked_under_the_rules_it_was_filed_under(
    kit, monkeypatch
):
    """Rules amended from 2026-10-01 ($250 fee, $400 cap): the petition received 09-11 was filed
    under the seed's $200 fee and $500 cap, and its payments recorded 10-02 are checked, and
    recorded, under those."""
    import dataclasses

    from bank.rules import ruleset as rules

    amended = dataclasses.replace(
        rules.SEED,
        id="amended 2026-10-01",
        effective_from=date(2026, 10, 1),
        appeal_filing_fee_cents=25_000,
        appeal_security_max_cents=40_000,
    )
    monkeypatch.setattr(rules, "RULESETS", (rules.SEED, amended))
    lgu = kit.lgu()
    _plan, appeal = appealed(kit, lgu, security=SECURITY_CAP)
    with on("2026-10-02"):

        def paid(kind: str, amount: int) -> Any:
            body = {
                "kind": kind,
                "amount_cents": amount,
                "payer": "Ann Owner",
                "received_on": "2026-09-20",
                "appeal_id": appeal["id"],
            }
            if kind == "appeal_filing_fee":  # mailed with the petition
                body["postmarked_on"] = "2026-09-10"
            return kit.api.post("/payments", body)

        problem(paid("appeal_filing_fee", 25_000), 422, "invalid_fee")
        fee = ok(paid("appeal_filing_fee", FEE))
        security = ok(paid("appeal_security", SECURITY_CAP))
    assert fee["ruleset"] == security["ruleset"] == rules.SEED.id
    assert decide_petition(kit, appeal, "2026-10-02", granted=True)["status"] == "granted"
