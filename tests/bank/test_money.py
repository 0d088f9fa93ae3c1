"""The money use cases (``bank.money``, ``bank.securities``, ``bank.guarantees``) on both
databases: an in-lieu payment into the program fund and its refusal unless the plan is a
monetary-payment plan on agricultural land, the LGU's processing fee, the $200 appeal filing fee
(board only, never refunded: Subd. 9), a refund made once and then refused, and a letter of
credit recorded, released, drawn on, and read on both sides of its expiry.  A refused act
writes nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any

import pytest
from freezegun import freeze_time
from sqlalchemy import func, select

import ledger
from bank import appeals, guarantees, money, parties, plan_cases, securities
from bank.access import SYSTEM, Actor
from bank.errors import Conflict, Forbidden, InvalidFee, NotEligible, NotFound, ValidationFailed
from bank.money import PaymentRequest, PaymentView
from bank.money_tables import Payment, Security, SecurityDraw
from bank.named_accounts import (
    board_fee_account,
    lgu_fee_account,
    program_fund_account,
    securities_held_account,
)
from bank.plan_report import PlanReport
from bank.plans import PlanRequest
from bank.rules.ruleset import ruleset_for
from bank.securities import SecurityRequest, SecurityView
from ledger.db import Database
from ledger.schema import LedgerTransaction

DAY = date(2026, 6, 17)
RULESET = ruleset_for(DAY)
FEE = RULESET.appeal_filing_fee_cents


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with freeze_time(f"{DAY.isoformat()} 12:00:00"):
        yield


def at(day: date) -> Any:
    """The service's clock at noon UTC (morning in Minnesota) of ``day``."""
    return freeze_time(f"{day.isoformat()} 12:00:00")


def unique(prefix: str) -> str:
    return f"{prefix} {uuid.uuid4().hex[:10]}"


def lgu_of(db: Database) -> Actor:
    lgu = parties.create_lgu(db, SYSTEM, name=unique("County"), kind="county")
    return Actor(token_id=f"tok_{lgu.id}", role="lgu", name="clerk", lgu_id=lgu.id)


def plan_of(db: Database, lgu: Actor, method: str = "bank_credits", **kw: Any) -> PlanReport:
    """1,000 sq ft at 2:1 (no comment period), received on ``DAY``."""
    request = PlanRequest(
        lgu_id=lgu.lgu_id,
        applicant="Road Co",
        project=unique("County road 12"),
        received_on=DAY,
        area_sqft=1_000,
        wetland_type="2",
        service_area=5,
        county="Lyon",
        on_agricultural_land=kw.pop("on_agricultural_land", False),
        replacement_ratio="2",
        method=method,
        location="Sec. 12, T110N, R41W",
        **kw,
    )
    return plan_cases.record(db, lgu, RULESET, request)


def monetary_plan(db: Database, lgu: Actor, *, agricultural: bool = True) -> PlanReport:
    return plan_of(
        db,
        lgu,
        "monetary_payment",
        on_agricultural_land=agricultural,
        in_lieu_amount_due_cents=500_000,
    )


def project_plan(db: Database, lgu: Actor) -> PlanReport:
    return plan_of(db, lgu, "project_specific", security_required_cents=2_500_000)


def payment(kind: str, amount: int, **kw: Any) -> PaymentRequest:
    return PaymentRequest(kind=kind, amount_cents=amount, payer="A. Payer", received_on=DAY, **kw)


def letter_of_credit(
    amount: int = 2_500_000, expires_on: date = DAY + timedelta(days=365), **kw: Any
) -> SecurityRequest:
    return SecurityRequest(
        kind=kw.pop("kind", "letter_of_credit"),
        issuer="First Bank of Lyon",
        amount_cents=amount,
        irrevocable=kw.pop("irrevocable", True),
        issued_on=DAY,
        expires_on=expires_on,
        **kw,
    )


def count(db: Database, table: Any, *where: Any) -> int:
    with db.transaction() as session:
        return int(session.scalar(select(func.count()).select_from(table).where(*where)) or 0)


def posted(db: Database, account: Any) -> ledger.Balance:
    with db.transaction() as session:
        account_id = account(session)
        return ledger.balances(session, [account_id])[account_id]


def refused(error: type[Exception], code: str, act: Any) -> None:
    with pytest.raises(error) as raised:
        act()
    assert getattr(raised.value, "code", None) == code


# --- payments ---------------------------------------------------------------------------------


def test_an_in_lieu_payment_goes_into_the_program_fund(db: Database) -> None:
    lgu = lgu_of(db)
    plan = monetary_plan(db, lgu)
    fund_before = posted(db, program_fund_account).posted

    paid = money.receive_payment(
        db, RULESET, lgu, payment("in_lieu", 500_000, plan_id=plan.id), "req-1"
    )

    assert isinstance(paid, PaymentView)
    assert (paid.kind, paid.amount_cents, paid.status) == ("in_lieu", 500_000, "received")
    assert (paid.plan_id, paid.appeal_id, paid.compensation_transaction_id) == (
        plan.id,
        None,
        None,
    )
    assert paid.transaction_id.isdigit() and paid.ruleset == RULESET.id
    assert posted(db, program_fund_account).posted - fund_before == 500_000
    assert money.get_payment(db, lgu, paid.id) == paid
    assert money.list_payments(db, lgu, plan.id) == [paid]
    with db.transaction() as session:
        assert money.in_lieu_received_cents(session, plan.id) == 500_000


@pytest.mark.parametrize("agricultural, method", [(False, "monetary_payment"), (True, None)])
def test_in_lieu_is_refused_unless_a_monetary_plan_on_agricultural_land(
    db: Database, agricultural: bool, method: str | None
) -> None:
    lgu = lgu_of(db)
    if method is None:
        plan = plan_of(db, lgu, on_agricultural_land=agricultural)
    else:
        plan = monetary_plan(db, lgu, agricultural=agricultural)
    request = payment("in_lieu", 500_000, plan_id=plan.id)

    refused(
        NotEligible, "not_eligible", lambda: money.receive_payment(db, RULESET, lgu, request, None)
    )

    assert count(db, Payment, Payment.plan_id == plan.id) == 0
    assert money.list_payments(db, lgu, plan.id) == []


def test_the_plans_lgu_books_its_processing_fee_as_its_own_income(db: Database) -> None:
    lgu, other = lgu_of(db), lgu_of(db)
    plan = plan_of(db, lgu)
    request = payment("processing_fee", 15_000, plan_id=plan.id)

    refused(
        ValidationFailed,
        "validation_error",
        lambda: money.receive_payment(db, RULESET, other, request, None),
    )
    assert count(db, Payment, Payment.plan_id == plan.id) == 0

    fee = money.receive_payment(db, RULESET, lgu, request, None)
    assert posted(db, lambda s: lgu_fee_account(s, lgu.lgu_id or "")).posted == 15_000
    assert money.get_payment(db, SYSTEM, fee.id) == fee
    refused(NotFound, "not_found", lambda: money.get_payment(db, other, fee.id))
    assert fee.id not in [p.id for p in money.list_payments(db, other)]
    assert fee.id in [p.id for p in money.list_payments(db, lgu)]
    refused(NotFound, "not_found", lambda: money.list_payments(db, other, plan.id))


def test_a_payment_received_in_the_future_is_refused(db: Database) -> None:
    lgu = lgu_of(db)
    plan = plan_of(db, lgu)
    request = PaymentRequest("processing_fee", 15_000, "A. Payer", DAY + timedelta(days=1), plan.id)

    refused(
        ValidationFailed,
        "validation_error",
        lambda: money.receive_payment(db, RULESET, lgu, request, None),
    )
    assert count(db, Payment, Payment.plan_id == plan.id) == 0


def appealed(db: Database, lgu: Actor) -> tuple[PlanReport, str, date]:
    """A plan deemed approved (no decision by its deadline) and a petition against it filed the
    day after; returns the plan, the appeal's id and that day."""
    plan = plan_of(db, lgu)
    day = plan.deadlines.decision_due + timedelta(days=1)
    with at(day):
        petition = appeals.PetitionRequest(
            petitioner_kind="owner",
            petitioner_name="Pat Owner",
            petitioner_address="1 Elm St, Buffalo",
            postmarked_on=day,
            received_on=day,
            filing_fee_cents=FEE,
        )
        return plan, appeals.file(db, SYSTEM, plan.id, petition).id, day


def test_the_appeal_filing_fee_is_200_dollars_booked_by_the_board_and_never_refunded(
    db: Database,
) -> None:
    lgu = lgu_of(db)
    plan, appeal_id, day = appealed(db, lgu)
    with at(day):
        fee = PaymentRequest("appeal_filing_fee", FEE, "Pat Owner", day, appeal_id=appeal_id)
        short = PaymentRequest("appeal_filing_fee", FEE - 1, "Pat Owner", day, appeal_id=appeal_id)

        refused(Forbidden, "forbidden", lambda: money.receive_payment(db, RULESET, lgu, fee, None))
        refused(
            InvalidFee,
            "invalid_fee",
            lambda: money.receive_payment(db, RULESET, SYSTEM, short, None),
        )
        assert count(db, Payment, Payment.appeal_id == appeal_id) == 0

        paid = money.receive_payment(db, RULESET, SYSTEM, fee, None)
        assert (paid.appeal_id, paid.plan_id, paid.amount_cents) == (appeal_id, plan.id, FEE)
        refused(Conflict, "conflict", lambda: money.receive_payment(db, RULESET, SYSTEM, fee, None))
        with db.transaction() as session:
            assert money.filing_fee_received_on(session, RULESET, appeal_id) == day

        refused(Forbidden, "forbidden", lambda: money.refund(db, lgu, paid.id, None))
        refused(NotEligible, "not_eligible", lambda: money.refund(db, SYSTEM, paid.id, None))
        assert money.get_payment(db, SYSTEM, paid.id) == paid
        assert [p.id for p in money.list_payments(db, lgu, plan.id)] == [paid.id]


def test_a_filing_fee_recorded_in_error_is_reversed_once_by_the_board_with_its_reason(
    db: Database,
) -> None:
    """The board's fee income gives the $200 back to the payers' account by one compensating
    transaction that names the reason; the appeal then has no live fee and takes another."""
    lgu = lgu_of(db)
    _plan, appeal_id, day = appealed(db, lgu)
    with at(day):
        fee = PaymentRequest("appeal_filing_fee", FEE, "Pat Owner", day, appeal_id=appeal_id)
        paid = money.receive_payment(db, RULESET, SYSTEM, fee, None)
        before = posted(db, board_fee_account).posted
        reason = "  the check was for another petition "
        refused(
            Forbidden, "forbidden", lambda: money.reverse_in_error(db, lgu, paid.id, reason, None)
        )

        reversed_ = money.reverse_in_error(db, SYSTEM, paid.id, reason, "req-reverse")

        assert (reversed_.status, reversed_.reversal_reason) == (
            "reversed",
            "the check was for another petition",
        )
        assert posted(db, board_fee_account).posted == before - FEE
        with db.transaction() as session:
            assert reversed_.compensation_transaction_id is not None
            tx = session.get(LedgerTransaction, int(reversed_.compensation_transaction_id))
            assert tx is not None
            assert (tx.kind, tx.reverses_id, tx.request_id) == (
                "payment_reversed",
                int(paid.transaction_id),
                "req-reverse",
            )
            assert tx.memo == f"payment {paid.id} reversed: the check was for another petition"
            assert money.filing_fee_received_on(session, RULESET, appeal_id) is None
        refused(
            Conflict, "conflict", lambda: money.reverse_in_error(db, SYSTEM, paid.id, "again", None)
        )
        assert money.get_payment(db, SYSTEM, paid.id) == reversed_
        again = money.receive_payment(db, RULESET, SYSTEM, fee, None)
        assert again.status == "received"
        assert posted(db, board_fee_account).posted == before


def test_a_refund_is_one_compensating_transaction_and_a_second_is_a_conflict(
    db: Database,
) -> None:
    lgu = lgu_of(db)
    plan = plan_of(db, lgu)
    fee = money.receive_payment(
        db, RULESET, lgu, payment("processing_fee", 15_000, plan_id=plan.id), None
    )

    refunded = money.refund(db, lgu, fee.id, "req-refund")

    assert refunded.status == "refunded"
    assert refunded.compensation_transaction_id is not None
    assert int(refunded.compensation_transaction_id) > int(fee.transaction_id)
    assert posted(db, lambda s: lgu_fee_account(s, lgu.lgu_id or "")).posted == 0
    refused(Conflict, "conflict", lambda: money.refund(db, lgu, fee.id, None))
    refused(NotFound, "not_found", lambda: money.refund(db, lgu_of(db), fee.id, None))
    refused(NotFound, "not_found", lambda: money.refund(db, lgu, "pay_0", None))
    assert money.get_payment(db, lgu, fee.id) == refunded
    assert posted(db, lambda s: lgu_fee_account(s, lgu.lgu_id or "")).posted == 0
    kept = money.list_payments(db, lgu, plan.id)
    assert kept == [refunded]


# --- securities -------------------------------------------------------------------------------


def held_for(db: Database, lgu: Actor) -> ledger.Balance:
    return posted(db, lambda s: securities_held_account(s, lgu.lgu_id or ""))


def test_a_letter_of_credit_must_be_irrevocable_and_is_recorded_for_the_plans_lgu(
    db: Database,
) -> None:
    lgu, other = lgu_of(db), lgu_of(db)
    plan = project_plan(db, lgu)
    revocable = letter_of_credit(irrevocable=False)
    backwards = letter_of_credit(expires_on=DAY)

    for request in (revocable, backwards):
        refused(
            ValidationFailed,
            "validation_error",
            lambda r=request: securities.hold_security(db, lgu, plan.id, r, None),
        )
    refused(
        NotFound,
        "not_found",
        lambda: securities.hold_security(db, other, plan.id, letter_of_credit(), None),
    )
    assert count(db, Security, Security.plan_id == plan.id) == 0

    held = securities.hold_security(db, lgu, plan.id, letter_of_credit(), "req-sec")

    assert isinstance(held, SecurityView)
    assert (held.status, held.undrawn_cents, held.draws) == ("held", 2_500_000, ())
    assert (held.released_on, held.drawn_on, held.drawn_cents) == (None, None, None)
    assert held_for(db, lgu).reserved_credits == 2_500_000
    assert securities.get_security(db, lgu, held.id) == held
    assert securities.list_securities(db, lgu, "held") == [held]
    refused(NotFound, "not_found", lambda: securities.get_security(db, other, held.id))
    assert securities.list_securities(db, other) == []
    with db.transaction() as session:
        assert guarantees.guaranteeing_cents(session, plan.id) == 2_500_000


def test_a_released_letter_of_credit_is_neither_released_nor_drawn_on_again(
    db: Database,
) -> None:
    lgu = lgu_of(db)
    plan = project_plan(db, lgu)
    held = securities.hold_security(db, lgu, plan.id, letter_of_credit(), None)
    later = DAY + timedelta(days=14)

    with at(later):
        released = guarantees.release(db, lgu, held.id, later, "replaced", None)

        assert (released.status, released.released_on) == ("released", later)
        assert released.release_reason == "replaced"
        assert held_for(db, lgu).reserved_credits == 0
        refused(
            Conflict, "conflict", lambda: guarantees.release(db, lgu, held.id, later, "x", None)
        )
        refused(Conflict, "conflict", lambda: guarantees.draw(db, lgu, held.id, later, 1_000, None))
        assert securities.get_security(db, lgu, held.id) == released
        assert securities.list_securities(db, lgu, "released") == [released]
        assert securities.list_securities(db, lgu, "held") == []


def test_a_letter_of_credit_is_drawn_on_only_for_an_approved_plan_and_in_part(
    db: Database,
) -> None:
    lgu = lgu_of(db)
    plan = project_plan(db, lgu)
    held = securities.hold_security(db, lgu, plan.id, letter_of_credit(), None)
    refused(Conflict, "conflict", lambda: guarantees.draw(db, lgu, held.id, DAY, 1_000, None))
    assert count(db, SecurityDraw, SecurityDraw.security_id == held.id) == 0

    day = plan.deadlines.decision_due + timedelta(days=1)  # deemed approved
    with at(day):
        refused(
            ValidationFailed,
            "validation_error",
            lambda: guarantees.draw(db, lgu, held.id, day, 2_500_001, None),
        )
        part = guarantees.draw(db, lgu, held.id, day, 1_000_000, None)
        assert (part.status, part.drawn_cents, part.undrawn_cents) == ("held", 1_000_000, 1_500_000)
        assert [(d.drawn_on, d.amount_cents) for d in part.draws] == [(day, 1_000_000)]
        assert held_for(db, lgu).reserved_credits == 1_500_000
        assert held_for(db, lgu).posted == 1_000_000

        rest = guarantees.draw(db, lgu, held.id, day, 1_500_000, None)
        assert (rest.status, rest.drawn_cents, rest.undrawn_cents) == ("drawn", 2_500_000, 0)
        assert [d.amount_cents for d in rest.draws] == [1_000_000, 1_500_000]
        assert held_for(db, lgu).reserved_credits == 0
        assert held_for(db, lgu).posted == 2_500_000
        assert securities.get_security(db, lgu, held.id) == rest
        assert securities.list_securities(db, lgu, "drawn") == [rest]
        refused(Conflict, "conflict", lambda: guarantees.release(db, lgu, held.id, day, "x", None))


def test_a_letter_of_credit_is_held_on_its_expiry_date_and_expired_the_day_after(
    db: Database,
) -> None:
    lgu = lgu_of(db)
    plan = project_plan(db, lgu)
    expires_on = DAY + timedelta(days=30)
    held = securities.hold_security(db, lgu, plan.id, letter_of_credit(expires_on=expires_on), None)

    with at(expires_on):
        assert securities.get_security(db, lgu, held.id).status == "held"
        assert [s.id for s in securities.list_securities(db, lgu, "held")] == [held.id]
        assert securities.list_securities(db, lgu, "expired") == []
        assert held_for(db, lgu).reserved_credits == 2_500_000

    after = expires_on + timedelta(days=1)
    with at(after):
        expired = securities.get_security(db, lgu, held.id)
        assert expired.status == "expired"
        assert securities.list_securities(db, lgu, "expired") == [expired]
        assert securities.list_securities(db, lgu, "held") == []
        assert held_for(db, lgu).reserved_credits == 0
        refused(
            Conflict, "conflict", lambda: guarantees.release(db, lgu, held.id, after, "x", None)
        )
        refused(Conflict, "conflict", lambda: guarantees.draw(db, lgu, held.id, after, 1, None))
        assert securities.get_security(db, lgu, held.id) == expired
        assert count(db, SecurityDraw, SecurityDraw.security_id == held.id) == 0
