"""Money and security instruments (Subd. 1, 3, 5, 9; DOMAIN.md §5–6).

A USD ledger on the same engine, in integer cents, between named accounts: external payers, each
LGU's fee income, the board's fee income, the wetland banking program fund, appeal security held
for each LGU, and security instruments.  Every payment, refund and return is one balanced
transaction; a refund or return is a compensating transaction, never an edit.

A security instrument is a pending transfer from its issuer to "securities held for the LGU" that
expires at the end of its expiry date: the memo balance the audit sees, with exact expiry and no
job.  Drawing on it and releasing it are in ``bank.guarantees``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ColumnElement,
    Date,
    DateTime,
    ForeignKey,
    String,
    Text,
    func,
    select,
    text,
)
from sqlalchemy.orm import Mapped, Session, mapped_column

import ledger
from bank import policy
from bank.access import Actor
from bank.errors import Conflict, InvalidFee, NotEligible, NotFound, ValidationFailed
from bank.ids import new_id
from bank.named_accounts import ensure_account
from bank.plan_tables import Appeal, Plan
from bank.ruleset import Ruleset
from ledger import clock
from ledger.schema import Base

USD = "USD"
PAYMENT_KINDS = ("in_lieu", "processing_fee", "appeal_filing_fee", "appeal_security")
SECURITY_KINDS = ("letter_of_credit", "cashiers_check", "cash", "other")


class Payment(Base):
    """Money received; ``status`` becomes refunded or returned by a compensating transaction."""

    __tablename__ = "payments"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    kind: Mapped[str] = mapped_column(String(30))
    amount_cents: Mapped[int] = mapped_column(BigInteger)
    payer: Mapped[str] = mapped_column(String(300))
    received_on: Mapped[date] = mapped_column(Date)
    plan_id: Mapped[str | None] = mapped_column(ForeignKey("plans.id"), index=True)
    appeal_id: Mapped[str | None] = mapped_column(ForeignKey("appeals.id"), index=True)
    lgu_id: Mapped[str | None] = mapped_column(ForeignKey("lgus.id"))
    transaction_id: Mapped[int] = mapped_column(ForeignKey("ledger_transactions.id"))
    status: Mapped[str] = mapped_column(String(10))
    compensation_transaction_id: Mapped[int | None] = mapped_column(
        ForeignKey("ledger_transactions.id")
    )
    ruleset: Mapped[str] = mapped_column(String(60))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    actor: Mapped[str] = mapped_column(String(300))
    #: the integrator's own references (``bank.external_refs``); not sealed
    external_refs: Mapped[dict[str, str]] = mapped_column(
        JSON, default=dict, server_default=text("'{}'")
    )


class Security(Base):
    """A security instrument given to the LGU to guarantee a replacement (Subd. 3)."""

    __tablename__ = "securities"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    plan_id: Mapped[str] = mapped_column(ForeignKey("plans.id"), index=True)
    kind: Mapped[str] = mapped_column(String(20))
    issuer: Mapped[str] = mapped_column(String(300))
    amount_cents: Mapped[int] = mapped_column(BigInteger)
    irrevocable: Mapped[bool] = mapped_column(Boolean)
    issued_on: Mapped[date] = mapped_column(Date)
    expires_on: Mapped[date] = mapped_column(Date, index=True)
    pending_transaction_id: Mapped[int] = mapped_column(ForeignKey("ledger_transactions.id"))
    released_on: Mapped[date | None] = mapped_column(Date)
    release_reason: Mapped[str | None] = mapped_column(Text)
    drawn_on: Mapped[date | None] = mapped_column(Date)
    drawn_cents: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: the integrator's own references (``bank.external_refs``); not sealed
    external_refs: Mapped[dict[str, str]] = mapped_column(
        JSON, default=dict, server_default=text("'{}'")
    )


# --- accounts ---------------------------------------------------------------------------------


def _account(session: Session, code: str, name: str) -> int:
    return ensure_account(session, f"usd:{code}", USD, name)


def payers_account(session: Session) -> int:
    """Money from outside the bank: payers, and the issuers of security instruments."""
    return _account(session, "external", "External payers and issuers")


def lgu_fee_account(session: Session, lgu_id: str) -> int:
    return _account(session, f"lgu-fees:{lgu_id}", f"Fee income of LGU {lgu_id}")


def board_fee_account(session: Session) -> int:
    return _account(session, "board-fees", "Board fee income")


def program_fund_account(session: Session) -> int:
    return _account(session, "program-fund", "Wetland banking program fund")


def appeal_security_account(session: Session, lgu_id: str) -> int:
    return _account(session, f"appeal-security:{lgu_id}", f"Appeal security held for {lgu_id}")


def securities_held_account(session: Session, lgu_id: str) -> int:
    return _account(session, f"securities-held:{lgu_id}", f"Securities held by {lgu_id}")


# --- payments ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PaymentRequest:
    """``POST /payments``"""

    kind: str
    amount_cents: int
    payer: str
    received_on: date
    plan_id: str | None = None
    appeal_id: str | None = None
    external_refs: dict[str, str] = field(default_factory=dict)


def receive_payment(
    session: Session,
    ruleset: Ruleset,
    actor: Actor,
    request: PaymentRequest,
    request_id: str | None,
) -> Payment:
    """Book a payment as one balanced USD transaction into the account its kind goes to."""
    if request.received_on > clock.today():
        raise ValidationFailed("this date is in the future", {"received_on": ["in the future"]})
    plan, appeal = _targets(session, actor, request)
    credit_account, lgu_id = _destination(session, ruleset, request, plan, appeal)
    payment_id = new_id("pay")
    posted = ledger.transfer(
        session,
        f"payment_{request.kind}",
        [ledger.Leg(payers_account(session), credit_account, request.amount_cents)],
        _meta(
            f"payment:{payment_id}",
            request.received_on,
            f"{request.kind} from {request.payer}",
            actor,
            request_id,
        ),
    )
    payment = Payment(
        id=payment_id,
        kind=request.kind,
        amount_cents=request.amount_cents,
        payer=request.payer,
        received_on=request.received_on,
        plan_id=plan.id if plan else None,
        appeal_id=appeal.id if appeal else None,
        lgu_id=lgu_id,
        transaction_id=posted.transaction_id,
        status="received",
        ruleset=ruleset.id,
        created_at=clock.utcnow(),
        actor=actor.label,
        external_refs=dict(request.external_refs),
    )
    session.add(payment)
    session.flush()
    return payment


def _targets(
    session: Session, actor: Actor, request: PaymentRequest
) -> tuple[Plan | None, Appeal | None]:
    appeal = None
    if request.kind in ("appeal_filing_fee", "appeal_security"):
        policy.require_board(actor, APPEAL_PAYMENTS)
        if not request.appeal_id:
            raise ValidationFailed(
                "an appeal payment names its appeal", {"appeal_id": ["required"]}
            )
        appeal = session.get(Appeal, request.appeal_id)
        if appeal is None:
            raise ValidationFailed("no such appeal", {"appeal_id": ["no such appeal"]})
        plan = session.get(Plan, appeal.plan_id)
        return plan, appeal
    if not request.plan_id:
        raise ValidationFailed("this payment names its plan", {"plan_id": ["required"]})
    plan = session.get(Plan, request.plan_id)
    if plan is None or not policy.sees_plan(actor, plan.lgu_id):
        raise ValidationFailed("no such plan", {"plan_id": ["no such plan"]})
    return plan, None


#: what only board staff do with money (Subd. 9: the appeal fee and security are the board's)
APPEAL_PAYMENTS = "record or refund appeal payments"


def _destination(
    session: Session,
    ruleset: Ruleset,
    request: PaymentRequest,
    plan: Plan | None,
    appeal: Appeal | None,
) -> tuple[int, str | None]:
    assert plan is not None
    if request.kind == "in_lieu":
        _check_in_lieu(plan)
        return program_fund_account(session), None
    if request.kind == "processing_fee":
        return lgu_fee_account(session, plan.lgu_id), plan.lgu_id
    assert appeal is not None
    if request.kind == "appeal_filing_fee":
        _check_filing_fee(session, ruleset, request.amount_cents, appeal)
        return board_fee_account(session), None
    _check_security(session, ruleset, request.amount_cents, appeal)
    return appeal_security_account(session, plan.lgu_id), plan.lgu_id


def _check_in_lieu(plan: Plan) -> None:
    """Subd. 1: money in lieu only for agricultural wetlands, by a monetary-payment plan."""
    if not plan.on_agricultural_land or plan.method != "monetary_payment":
        raise NotEligible(
            "an in-lieu payment is only for a monetary-payment plan on agricultural land",
            on_agricultural_land=plan.on_agricultural_land,
            method=plan.method,
        )


def _check_filing_fee(session: Session, ruleset: Ruleset, amount: int, appeal: Appeal) -> None:
    """Subd. 9: a filing fee of exactly $200, retained by the board."""
    if amount != ruleset.appeal_filing_fee_cents:
        raise InvalidFee(
            f"the appeal filing fee is {ruleset.appeal_filing_fee_cents} cents",
            fee_cents=ruleset.appeal_filing_fee_cents,
            amount_cents=amount,
        )
    if _live_payment(session, appeal.id, "appeal_filing_fee"):
        raise Conflict("the filing fee for this appeal was already paid")


def _check_security(session: Session, ruleset: Ruleset, amount: int, appeal: Appeal) -> None:
    """Subd. 9: security of at most $500, returned if the petition is accepted."""
    if amount > ruleset.appeal_security_max_cents:
        raise InvalidFee(
            f"appeal security may not exceed {ruleset.appeal_security_max_cents} cents",
            max_cents=ruleset.appeal_security_max_cents,
            amount_cents=amount,
        )
    if appeal.petition_granted is not None:
        raise Conflict("the petition was already decided: security is posted before that")
    if _live_payment(session, appeal.id, "appeal_security"):
        raise Conflict("security for this appeal was already posted")


def filing_fee_paid(session: Session, ruleset: Ruleset, appeal_id: str) -> bool:
    """Whether the appeal's $200 filing fee is recorded (Subd. 9: "mailing a petition and
    payment of a filing fee of $200")."""
    fee = _live_payment(session, appeal_id, "appeal_filing_fee")
    return fee is not None and fee.amount_cents == ruleset.appeal_filing_fee_cents


def appeal_security_posted_cents(session: Session, appeal_id: str) -> int:
    """The appeal security posted for the appeal and still held (0 if none)."""
    security = _live_payment(session, appeal_id, "appeal_security")
    return security.amount_cents if security is not None else 0


def _live_payment(session: Session, appeal_id: str, kind: str) -> Payment | None:
    return session.execute(
        select(Payment).where(
            Payment.appeal_id == appeal_id, Payment.kind == kind, Payment.status == "received"
        )
    ).scalar_one_or_none()


def refund(session: Session, actor: Actor, payment_id: str, request_id: str | None) -> Payment:
    """Refund a payment with a compensating transaction; at most once (``conflict``).

    The appeal filing fee and security are the board's to book (Subd. 9), so the board's alone to
    refund: an LGU may refund only its plans' in-lieu payments and processing fees.  The filing
    fee "shall be retained by the board" (Subd. 9): it is never refunded (``not_eligible``)."""
    payment = visible_payment(session, actor, payment_id, lock=True)
    if payment.kind in ("appeal_filing_fee", "appeal_security"):
        policy.require_board(actor, APPEAL_PAYMENTS)
    if payment.kind == "appeal_filing_fee":
        raise NotEligible(
            "Subd. 9: the $200 filing fee is retained by the board and is not refunded",
            kind=payment.kind,
        )
    return _compensate(session, actor, payment, "refunded", clock.today(), request_id)


def return_appeal_security(
    session: Session, actor: Actor, appeal: Appeal, on: date, request_id: str | None
) -> None:
    """The petition was granted: return the security posted for it (once, automatically)."""
    payment = _live_payment(session, appeal.id, "appeal_security")
    if payment is not None:
        _compensate(session, actor, payment, "returned", on, request_id)


def _compensate(
    session: Session, actor: Actor, payment: Payment, status: str, on: date, request_id: str | None
) -> Payment:
    if payment.status != "received":
        raise Conflict(f"the payment was already {payment.status}", status=payment.status)
    reversal = ledger.reverse(
        session,
        payment.transaction_id,
        _meta(
            f"payment-{status}:{payment.id}",
            on,
            f"payment {payment.id} {status}",
            actor,
            request_id,
        ),
        kind=f"payment_{status}",
    )
    payment.status = status
    payment.compensation_transaction_id = reversal.transaction_id
    session.flush()
    return payment


def visible_payment(
    session: Session, actor: Actor, payment_id: str, *, lock: bool = False
) -> Payment:
    """A payment the caller may see: the board, or the LGU of its plan."""
    payment = session.get(Payment, payment_id, with_for_update=lock)
    if payment is None or not policy.sees_plan(actor, _lgu_of(session, payment)):
        raise NotFound(f"no payment {payment_id}")
    return payment


def _lgu_of(session: Session, payment: Payment) -> str | None:
    plan = session.get(Plan, payment.plan_id) if payment.plan_id else None
    return plan.lgu_id if plan else None


def payments_of_plan(
    session: Session, plan_id: str, where: Iterable[ColumnElement[bool]] = ()
) -> list[Payment]:
    """A plan's payments, its appeals' included, oldest first, that meet every condition of
    ``where`` (``bank.listing_filters``)."""
    appeal_ids = select(Appeal.id).where(Appeal.plan_id == plan_id)
    return list(
        session.execute(
            select(Payment)
            .where((Payment.plan_id == plan_id) | Payment.appeal_id.in_(appeal_ids))
            .where(*where)
            .order_by(Payment.created_at, Payment.id)
        ).scalars()
    )


def list_payments(
    session: Session, actor: Actor, where: Iterable[ColumnElement[bool]] = ()
) -> list[Payment]:
    """The payments the caller may see (board: all; LGU: its plans', their appeals' included),
    oldest first, that meet every condition of ``where``."""
    query = (
        select(Payment)
        .join(Plan, Plan.id == Payment.plan_id)
        .where(*where)
        .order_by(Payment.created_at, Payment.id)
    )
    if not actor.is_board:
        query = query.where(Plan.lgu_id == actor.lgu_id)
    return list(session.execute(query).scalars())


def in_lieu_received_cents(session: Session, plan_id: str) -> int:
    """In-lieu payments received for the plan and not refunded."""
    total = session.execute(
        select(func.sum(Payment.amount_cents)).where(
            Payment.plan_id == plan_id, Payment.kind == "in_lieu", Payment.status == "received"
        )
    ).scalar()
    return int(total or 0)


def payment_dict(payment: Payment) -> dict[str, Any]:
    """A payment as the API shows it."""
    return {
        "id": payment.id,
        "kind": payment.kind,
        "amount_cents": payment.amount_cents,
        "payer": payment.payer,
        "received_on": payment.received_on,
        "plan_id": payment.plan_id,
        "appeal_id": payment.appeal_id,
        "transaction_id": str(payment.transaction_id),
        "status": payment.status,
        "compensation_transaction_id": (
            str(payment.compensation_transaction_id)
            if payment.compensation_transaction_id
            else None
        ),
        "ruleset": payment.ruleset,
        "created_at": payment.created_at,
        "external_refs": payment.external_refs or {},
    }


def _meta(key: str, on: date, memo: str, actor: Actor, request_id: str | None) -> ledger.Meta:
    return ledger.Meta(key, on, memo=memo, actor=actor.label, request_id=request_id)


# --- security instruments ---------------------------------------------------------------------


@dataclass(frozen=True)
class SecurityRequest:
    """``POST /plans/{id}/securities``"""

    kind: str
    issuer: str
    amount_cents: int
    irrevocable: bool
    issued_on: date
    expires_on: date
    external_refs: dict[str, str] = field(default_factory=dict)


def hold_security(
    session: Session, actor: Actor, plan: Plan, request: SecurityRequest, request_id: str | None
) -> Security:
    """Record a security given to the LGU; a letter of credit must be irrevocable (Subd. 3)."""
    if request.kind not in SECURITY_KINDS:
        raise ValidationFailed("unknown kind", {"kind": [f"one of {', '.join(SECURITY_KINDS)}"]})
    if request.kind == "letter_of_credit" and not request.irrevocable:
        raise ValidationFailed(
            "Subd. 3 requires an irrevocable letter of credit",
            {"irrevocable": ["a letter of credit must be irrevocable"]},
        )
    if request.expires_on <= request.issued_on:
        raise ValidationFailed(
            "a security must expire after it is issued", {"expires_on": ["not after issued_on"]}
        )
    if request.issued_on > clock.today():
        raise ValidationFailed("this date is in the future", {"issued_on": ["in the future"]})
    security_id = new_id("sec")
    held = ledger.reserve(
        session,
        "security_held",
        [
            ledger.Leg(
                payers_account(session),
                securities_held_account(session, plan.lgu_id),
                request.amount_cents,
            )
        ],
        _meta(
            f"security:{security_id}",
            request.issued_on,
            f"{request.kind} from {request.issuer}",
            actor,
            request_id,
        ),
        expires_at=clock.end_of_day(request.expires_on),
    )
    security = Security(
        id=security_id,
        plan_id=plan.id,
        kind=request.kind,
        issuer=request.issuer,
        amount_cents=request.amount_cents,
        irrevocable=request.irrevocable,
        issued_on=request.issued_on,
        expires_on=request.expires_on,
        pending_transaction_id=held.transaction_id,
        created_at=clock.utcnow(),
        external_refs=dict(request.external_refs),
    )
    session.add(security)
    session.flush()
    return security


def security_status(security: Security, today: date | None = None) -> str:
    """held, released, drawn (all of it), or expired (after the end of its expiry date, with no
    job); a security drawn in part is still held (``bank.guarantees``)."""
    if security.released_on is not None:
        return "released"
    if security.drawn_cents is not None and security.drawn_cents >= security.amount_cents:
        return "drawn"
    if (today or clock.today()) > security.expires_on:
        return "expired"
    return "held"


def visible_security(
    session: Session, actor: Actor, security_id: str, *, lock: bool = False
) -> Security:
    """A security the caller may see: the board, or its plan's LGU."""
    security = session.get(Security, security_id, with_for_update=lock)
    if security is None:
        raise NotFound(f"no security {security_id}")
    plan = session.get(Plan, security.plan_id)
    if plan is None or not policy.sees_plan(actor, plan.lgu_id):
        raise NotFound(f"no security {security_id}")
    return security


def list_securities(
    session: Session,
    actor: Actor,
    status: str | None,
    expiring_before: date | None,
    where: Iterable[ColumnElement[bool]] = (),
) -> list[Security]:
    """Securities the caller may see, soonest expiry first (for LGUs chasing renewals), that
    meet every condition of ``where`` (``bank.listing_filters``)."""
    query = (
        select(Security)
        .join(Plan, Plan.id == Security.plan_id)
        .where(*where)
        .order_by(Security.expires_on, Security.id)
    )
    if not actor.is_board:
        query = query.where(Plan.lgu_id == actor.lgu_id)
    if expiring_before is not None:
        query = query.where(Security.expires_on < expiring_before)
    rows = list(session.execute(query).scalars())
    return [row for row in rows if status is None or security_status(row) == status]


def held_securities(session: Session, plan_id: str) -> list[Security]:
    """The plan's securities still held today."""
    rows = session.execute(select(Security).where(Security.plan_id == plan_id)).scalars()
    return [row for row in rows if security_status(row) == "held"]


def security_dict(security: Security) -> dict[str, Any]:
    """A security as the API shows it."""
    return {
        "id": security.id,
        "plan_id": security.plan_id,
        "kind": security.kind,
        "issuer": security.issuer,
        "amount_cents": security.amount_cents,
        "irrevocable": security.irrevocable,
        "issued_on": security.issued_on,
        "expires_on": security.expires_on,
        "status": security_status(security),
        "released_on": security.released_on,
        "release_reason": security.release_reason,
        "drawn_on": security.drawn_on,
        "drawn_cents": security.drawn_cents,
        "transaction_id": str(security.pending_transaction_id),
        "external_refs": security.external_refs or {},
    }
