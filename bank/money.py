"""Money received (Subd. 1, 9; docs/domain.md §5–6): in-lieu payments, fees and appeal security.

A USD ledger on the same engine, in integer cents, between named accounts
(``bank.named_accounts``): external payers, each LGU's fee income, the board's fee income, the
wetland banking program fund and appeal security held for each LGU.  Every payment, refund and
return is one balanced transaction; a refund or return is a compensating transaction, never an
edit.  The appeal filing fee is never refunded (Subd. 9); one recorded in error (on the wrong
appeal) is reversed by the board, with its reason, the same way.  Security instruments, the other
half of the USD ledger, are in ``bank.securities``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

import ledger
from bank import in_lieu, keyset, plans, policy
from bank.access import Actor
from bank.errors import BankError, Conflict, InvalidFee, NotEligible, NotFound, ValidationFailed
from bank.ids import new_id
from bank.money_tables import PAYMENT_KINDS, Payment
from bank.named_accounts import (
    appeal_security_account,
    board_fee_account,
    lgu_fee_account,
    payers_account,
    program_fund_account,
    usd_meta,
)
from bank.plan_tables import Appeal, Plan
from bank.rules import timeline
from bank.rules.ruleset import Ruleset, ruleset_by_id
from bank.wording import dollars
from ledger import clock
from ledger.db import Database
from ledger.schema import LedgerTransaction
from ledger.slices import grouped, slices

#: what only board staff do with money (Subd. 9: the appeal fee and security are the board's)
APPEAL_PAYMENTS = "record or refund appeal payments"
#: the board's correction of a filing fee booked in error (``reverse_in_error``)
REVERSALS = "reverse a filing fee recorded in error"
APPEAL_KINDS = ("appeal_filing_fee", "appeal_security")
#: why a second live payment of an appeal kind is refused (``_check_filing_fee``,
#: ``_check_security``, and the database's index beside them)
_ALREADY_PAID = {
    "appeal_filing_fee": "the filing fee for this appeal was already paid",
    "appeal_security": "security for this appeal was already posted",
}
#: the index holding one live payment of each appeal kind, as PostgreSQL names it and as
#: SQLite names its columns (migration 0021)
_ONE_LIVE = ("uq_payments_live_appeal_kind", "payments.appeal_id, payments.kind")


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
    #: the filing fee's postmark; omitted, the petition's, if received with the petition (the
    #: fee came in its envelope), otherwise required
    postmarked_on: date | None = None


@dataclass(frozen=True)
class PaymentView:
    """A payment as the API shows it (``PaymentOut``)."""

    id: str
    kind: str
    amount_cents: int
    payer: str
    received_on: date
    #: a filing fee's postmark (Subd. 9: mailed within the appeal window); null for any other
    #: payment, and for a fee booked before postmarks were recorded
    postmarked_on: date | None
    plan_id: str | None
    appeal_id: str | None
    transaction_id: str
    status: str
    compensation_transaction_id: str | None
    #: why the board reversed it as recorded in error (``reversed`` only; otherwise null)
    reversal_reason: str | None
    ruleset: str
    created_at: datetime
    external_refs: dict[str, str]

    @classmethod
    def of(cls, payment: Payment) -> PaymentView:
        compensation = payment.compensation_transaction_id
        return cls(
            id=payment.id,
            kind=payment.kind,
            amount_cents=payment.amount_cents,
            payer=payment.payer,
            received_on=payment.received_on,
            postmarked_on=payment.postmarked_on,
            plan_id=payment.plan_id,
            appeal_id=payment.appeal_id,
            transaction_id=str(payment.transaction_id),
            status=payment.status,
            compensation_transaction_id=str(compensation) if compensation else None,
            reversal_reason=payment.reversal_reason,
            ruleset=payment.ruleset,
            created_at=clock.as_utc(payment.created_at),
            external_refs=dict(payment.external_refs or {}),
        )


# --- receiving --------------------------------------------------------------------------------


def receive_payment(
    db: Database, ruleset: Ruleset, actor: Actor, request: PaymentRequest, request_id: str | None
) -> PaymentView:
    """Book a payment as one balanced USD transaction into the account its kind goes to.  An
    LGU books its own plans' in-lieu payments and processing fees; the board books any, and it
    alone the appeal filing fee and appeal security (``forbidden``)."""
    if request.kind not in PAYMENT_KINDS:
        raise ValidationFailed("unknown kind", {"kind": [f"one of {', '.join(PAYMENT_KINDS)}"]})
    if request.received_on > clock.today():
        raise ValidationFailed("this date is in the future", {"received_on": ["in the future"]})
    with db.transaction() as session:
        plan, appeal = _targets(session, actor, request)
        if appeal is not None:  # the fee and the cap the petition was filed under (Subd. 9)
            ruleset = ruleset_by_id(appeal.ruleset)
        _check_received_after(request, plan, appeal)
        postmarked_on = _fee_postmark(session, request, plan, appeal)
        credit_account, lgu_id = _destination(session, ruleset, request, plan, appeal)
        payment_id = new_id("pay")
        posted = ledger.transfer(
            session,
            f"payment_{request.kind}",
            [ledger.Leg(payers_account(session), credit_account, request.amount_cents)],
            usd_meta(
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
            postmarked_on=postmarked_on,
            plan_id=plan.id,
            appeal_id=appeal.id if appeal is not None else None,
            lgu_id=lgu_id,
            transaction_id=posted.transaction_id,
            status="received",
            ruleset=ruleset.id,
            created_at=clock.utcnow(),
            actor=actor.label,
            external_refs=dict(request.external_refs),
        )
        session.add(payment)
        try:
            session.flush()
        except IntegrityError as error:
            # a second live fee or security for the appeal, past the checks under the plan's lock
            if any(marker in str(error.orig) for marker in _ONE_LIVE):
                raise Conflict(_ALREADY_PAID[request.kind]) from error
            raise
        return PaymentView.of(payment)


def _check_received_after(request: PaymentRequest, plan: Plan, appeal: Appeal | None) -> None:
    """A payment is received no earlier than what it pays for: an appeal's fee and security
    with or after the petition's mailing (Subd. 9: "mailing a petition and payment of a filing
    fee"), a plan's fee or in-lieu payment once its first application was received."""
    if appeal is not None:
        earliest, what = appeal.postmarked_on, "the petition's postmark"
    else:
        earliest, what = plan.first_received_on, "the plan's first application"
    if request.received_on < earliest:
        raise ValidationFailed(
            f"received before {what} ({earliest.isoformat()})",
            {"received_on": [f"before {earliest.isoformat()}"]},
        )


def _fee_postmark(
    session: Session, request: PaymentRequest, plan: Plan, appeal: Appeal | None
) -> date | None:
    """The filing fee's postmark: the one given, else the petition's if the fee was received the
    day the petition was (it came in the petition's envelope; ``_envelope_postmark``), on or
    before the fee's receipt and within the appeal window the
    petition was checked against (Subd. 9: "mailing a petition and payment of a filing fee ...
    within 15 days"): not before the window opened (``timeline.noticed_by``, as for the
    petition; ``validation_error``), nor after it closed (``appeal_window_closed``, as a late
    petition).  No other payment has one."""
    if request.kind != "appeal_filing_fee" or appeal is None:
        if request.postmarked_on is not None:
            raise ValidationFailed(
                "only the appeal filing fee records its postmark",
                {"postmarked_on": ["only on an appeal_filing_fee payment"]},
            )
        return None
    postmarked_on = request.postmarked_on or _envelope_postmark(request, appeal)
    if postmarked_on > request.received_on:
        raise ValidationFailed(
            "received before it was mailed", {"postmarked_on": ["after received_on"]}
        )
    c = plans.clocks(session, plan)
    facts = plans.appealed_facts(session, plan, appeal.application_number)
    if postmarked_on < appeal.postmarked_on and not timeline.noticed_by(
        c.ruleset, c.lgu, facts, postmarked_on
    ):
        # mailed before the window opened: it paid for no appeal of this decision.  From the
        # petition's own postmark on it is as timely as the petition was judged when filed (a
        # notice of a deemed approval mailed since moves no window back)
        raise ValidationFailed(
            "Subd. 9: the filing fee is mailed with the petition, after the notice of decision",
            {"postmarked_on": ["before the appeal window opened"]},
        )
    timeline.check_mailed_in_window(c.ruleset, c.board, facts, postmarked_on, "the filing fee")
    return postmarked_on


def _envelope_postmark(request: PaymentRequest, appeal: Appeal) -> date:
    """The postmark of a filing fee booked without one: the petition's, for a fee received the
    day the petition was (it came in the petition's envelope).  A fee received another day came
    in an envelope of its own, whose postmark alone says whether it was mailed within the
    window: the petition's would make a fee mailed after it look timely (``validation_error``)."""
    if request.received_on != appeal.received_on:
        petition_received = appeal.received_on.isoformat()
        raise ValidationFailed(
            "a filing fee received on another day than its petition names its postmark",
            {"postmarked_on": [f"required: the petition was received on {petition_received}"]},
        )
    return appeal.postmarked_on


def _targets(session: Session, actor: Actor, request: PaymentRequest) -> tuple[Plan, Appeal | None]:
    """The plan the payment is for and, for an appeal payment, the appeal."""
    if request.kind in APPEAL_KINDS:
        policy.require_board(actor, APPEAL_PAYMENTS)
        if not request.appeal_id:
            raise ValidationFailed(
                "an appeal payment names its appeal", {"appeal_id": ["required"]}
            )
        appeal = session.get(Appeal, request.appeal_id)
        if appeal is None:
            raise ValidationFailed("no such appeal", {"appeal_id": ["no such appeal"]})
        if request.plan_id is not None and request.plan_id != appeal.plan_id:
            # the payment is booked against the appealed plan: another plan named is a mistake
            raise ValidationFailed(
                "the appeal is of another plan",
                {"plan_id": ["not the appealed plan; leave it out or name the appealed plan"]},
            )
        # the plan locked as the board's decisions on the appeal lock it, then the appeal read
        # again: two payments of one kind at once, or a payment beside a decision, take turns
        appealed = plans.visible_plan(session, actor, appeal.plan_id, lock=True)
        return appealed, session.get(Appeal, appeal.id, populate_existing=True) or appeal
    if request.appeal_id is not None:
        # only the appeal's fee and security belong to an appeal: never dropped silently, nor
        # an empty one
        raise ValidationFailed(
            f"a {request.kind} payment is not an appeal's",
            {"appeal_id": [f"not allowed on a {request.kind} payment"]},
        )
    if not request.plan_id:
        raise ValidationFailed("this payment names its plan", {"plan_id": ["required"]})
    plan = session.get(Plan, request.plan_id)
    if plan is None or not policy.sees_plan(actor, plan.lgu_id):
        raise ValidationFailed("no such plan", {"plan_id": ["no such plan"]})
    return plan, None


def _destination(
    session: Session,
    ruleset: Ruleset,
    request: PaymentRequest,
    plan: Plan,
    appeal: Appeal | None,
) -> tuple[int, str | None]:
    """The account credited and the LGU the money is held for, if any."""
    if appeal is not None:
        if request.kind == "appeal_filing_fee":
            _check_filing_fee(session, ruleset, request.amount_cents, appeal)
            return board_fee_account(session), None
        _check_security(session, ruleset, request.amount_cents, plan, appeal)
        return appeal_security_account(session, plan.lgu_id), plan.lgu_id
    if request.kind == "in_lieu":
        in_lieu.check_payable(session, plan)
        return program_fund_account(session), None
    return lgu_fee_account(session, plan.lgu_id), plan.lgu_id


def _check_filing_fee(session: Session, ruleset: Ruleset, amount: int, appeal: Appeal) -> None:
    """Subd. 9: a filing fee of exactly $200, retained by the board."""
    if amount != ruleset.appeal_filing_fee_cents:
        raise InvalidFee(
            f"the appeal filing fee is {dollars(ruleset.appeal_filing_fee_cents)}",
            fee_cents=ruleset.appeal_filing_fee_cents,
            amount_cents=amount,
        )
    if _live_payment(session, appeal.id, "appeal_filing_fee"):
        raise Conflict(_ALREADY_PAID["appeal_filing_fee"])


def _check_security(
    session: Session, ruleset: Ruleset, amount: int, plan: Plan, appeal: Appeal
) -> None:
    """Subd. 9: "The local government unit may require the petitioner to post a letter of
    credit, cashier's check, or cash in an amount not to exceed $500", returned if the petition
    is accepted and kept if it is denied: security is posted only where the LGU required it, up
    to the amount it required (``invalid_fee``).  Anything more would be money nobody required,
    kept on a denial.  Less may be posted (a grant then waits for the rest:
    ``security_required``)."""
    if amount > ruleset.appeal_security_max_cents:
        raise InvalidFee(
            f"appeal security may not exceed {dollars(ruleset.appeal_security_max_cents)}",
            max_cents=ruleset.appeal_security_max_cents,
            amount_cents=amount,
        )
    if appeal.petition_granted is not None:
        raise Conflict("the petition was already decided: security is posted before that")
    # fixed once a petition on the application is filed (``plans.require_appeal_security``)
    required = plans.security_required_cents(session, plan, appeal.application_number)
    if required is None:
        raise InvalidFee(
            "Subd. 9: the LGU required no appeal security of this petitioner, so none is posted",
            required_cents=None,
            amount_cents=amount,
        )
    if amount > required:
        raise InvalidFee(
            f"Subd. 9: the LGU requires {dollars(required)} of appeal security, not "
            f"{dollars(amount)}",
            required_cents=required,
            amount_cents=amount,
        )
    if _live_payment(session, appeal.id, "appeal_security"):
        raise Conflict(_ALREADY_PAID["appeal_security"])


# --- what an appeal or a plan has received ------------------------------------------------------


def filing_fee_received_on(session: Session, ruleset: Ruleset, appeal_id: str) -> date | None:
    """When the appeal's $200 filing fee was received, if it is recorded (Subd. 9: "mailing a
    petition and payment of a filing fee of $200")."""
    fee = _live_payment(session, appeal_id, "appeal_filing_fee")
    if fee is None or fee.amount_cents != ruleset.appeal_filing_fee_cents:
        return None
    return fee.received_on


def appeal_security_posted_cents(session: Session, appeal_id: str, as_of: date) -> int:
    """The appeal security posted for the appeal by ``as_of`` (a decision's date) and still
    held (0 if none)."""
    security = _live_payment(session, appeal_id, "appeal_security")
    return security.amount_cents if security is not None and security.received_on <= as_of else 0


def live_appeal_payments(
    session: Session, appeal_ids: Sequence[str]
) -> defaultdict[str, list[Payment]]:
    """The live payments (received, not refunded, returned or reversed) of each of
    ``appeal_ids``, by appeal id: its filing fee and its security, at most one of each (an
    appeal with none reads as empty)."""
    live = Payment.status == "received"
    found: defaultdict[str, list[Payment]] = defaultdict(list)
    for appeal_id, paid in grouped(
        session, Payment.appeal_id, appeal_ids, Payment.kind, where=[live]
    ).items():
        if appeal_id is not None:
            found[appeal_id] = paid
    return found


def _live_payment(session: Session, appeal_id: str, kind: str) -> Payment | None:
    return session.execute(
        select(Payment).where(
            Payment.appeal_id == appeal_id, Payment.kind == kind, Payment.status == "received"
        )
    ).scalar_one_or_none()


def in_lieu_received_cents(session: Session, plan_id: str) -> int:
    """In-lieu payments received for the plan and not refunded."""
    return in_lieu_received_of(session, [plan_id]).get(plan_id, 0)


def in_lieu_received_of(session: Session, plan_ids: Sequence[str]) -> dict[str, int]:
    """``in_lieu_received_cents`` of each of ``plan_ids`` that received any, by plan id."""
    found: dict[str, int] = {}
    for ids in slices(plan_ids):
        rows = session.execute(
            select(Payment.plan_id, func.sum(Payment.amount_cents))
            .where(
                Payment.plan_id.in_(ids), Payment.kind == "in_lieu", Payment.status == "received"
            )
            .group_by(Payment.plan_id)
        )
        found.update({str(plan_id): int(total) for plan_id, total in rows})
    return found


# --- refunds and returns ----------------------------------------------------------------------


def refund(db: Database, actor: Actor, payment_id: str, request_id: str | None) -> PaymentView:
    """Refund a payment with a compensating transaction, once ``check_refundable`` allows it."""
    with db.transaction() as session:
        payment = visible_payment(session, actor, payment_id)
        if payment.kind in APPEAL_KINDS:
            policy.require_board(actor, APPEAL_PAYMENTS)  # before anything is locked
            # the plan first, in the order a decision on the appeal locks it and then its
            # security: a refund beside a decision waits, and sees it
            if payment.plan_id is not None:  # an appeal's payment names the appealed plan
                plans.visible_plan(session, actor, payment.plan_id, lock=True)
        payment = visible_payment(session, actor, payment_id, lock=True)
        check_refundable(session, actor, payment)
        _compensate(session, actor, payment, "refunded", clock.today(), request_id)
        return PaymentView.of(payment)


def check_refundable(session: Session, actor: Actor, payment: Payment) -> None:
    """Refuse refunding ``payment`` now, as ``refund`` does: at most once (``conflict``).

    The appeal filing fee and security are the board's to book (Subd. 9), so the board's alone to
    refund: an LGU may refund only its plans' in-lieu payments and processing fees.  The filing
    fee "shall be retained by the board" (Subd. 9): it is never refunded (``not_eligible``), and
    security the LGU required is not returned once its petition was denied (``not_eligible``).
    Security posted where the LGU required none (booked before ``_check_security`` refused it)
    was never owed, so nothing keeps it: it is refunded, denied petition or not."""
    if payment.kind in APPEAL_KINDS:
        policy.require_board(actor, APPEAL_PAYMENTS)
    if payment.kind == "appeal_filing_fee":
        raise NotEligible(
            f"Subd. 9: the {dollars(payment.amount_cents)} filing fee is retained by the "
            "board and is not refunded",
            kind=payment.kind,
        )
    if payment.kind == "appeal_security" and _kept_on_denial(session, payment):
        raise NotEligible(
            "Subd. 9: security is returned only if the petition is accepted; this one was "
            "denied, and the security is kept",
            kind=payment.kind,
        )
    _check_live(payment)


def _kept_on_denial(session: Session, payment: Payment) -> bool:
    """Whether ``payment`` (appeal security) is kept: its petition was denied and the LGU
    required security of it (Subd. 9 "may require"; none required, none is kept)."""
    appeal = session.get(Appeal, payment.appeal_id, populate_existing=True)
    if appeal is None or appeal.petition_granted is not False:
        return False
    plan = session.get(Plan, appeal.plan_id)
    if plan is None:  # a foreign key: an appeal's plan exists
        raise NotFound(f"no plan {appeal.plan_id}")
    return plans.security_required_cents(session, plan, appeal.application_number) is not None


def reverse_in_error(
    db: Database, actor: Actor, payment_id: str, reason: str, request_id: str | None
) -> PaymentView:
    """Reverse a filing fee recorded in error (board staff), with ``reason``: one compensating
    transaction (``payment_reversed``), at most once (``conflict``); the payment keeps its row and
    transaction, ``reversed``, and the appeal it was booked on has no live fee: the right appeal
    can be paid, the wrong one paid again if it is owed.

    The fee "shall be retained by the board" (Subd. 9), so ``refund`` refuses it; a fee booked
    against the wrong petition is not that petition's fee, and this corrects the books without
    paying anything back.  Only the filing fee: any other payment booked in error is refunded
    (``not_eligible``).  Refused (``conflict``) once relied on: the petition it was booked on was
    granted, the one act that checks the fee (``appeals.decide_petition``: no grant without a live
    fee received by the grant's date); its live fee then is this one, as nothing removes a fee
    after a grant.  A denial checks no fee, so a denied petition's fee may be reversed."""
    policy.require_board(actor, REVERSALS)
    with db.transaction() as session:
        payment = visible_payment(session, actor, payment_id)
        # the plan first, as ``refund`` and a decision on the appeal lock it: a reversal beside a
        # grant waits, and sees it
        if payment.plan_id is not None:
            plans.visible_plan(session, actor, payment.plan_id, lock=True)
        payment = visible_payment(session, actor, payment_id, lock=True)
        check_reversible(session, actor, payment)
        _compensate(session, actor, payment, "reversed", clock.today(), request_id, reason.strip())
        return PaymentView.of(payment)


def check_reversible(session: Session, actor: Actor, payment: Payment) -> None:
    """Refuse reversing ``payment`` as recorded in error now, as ``reverse_in_error`` does: board
    staff only (``forbidden``), the filing fee only (``not_eligible``), at most once and not once
    relied on (``conflict``)."""
    policy.require_board(actor, REVERSALS)
    if payment.kind != "appeal_filing_fee":
        raise NotEligible(
            "only the appeal filing fee, which is never refunded, is reversed as recorded in "
            f"error: refund this payment instead (POST /payments/{payment.id}/refund)",
            kind=payment.kind,
        )
    _check_live(payment)
    _check_unrelied(session, payment)


def _check_unrelied(session: Session, payment: Payment) -> None:
    """Refuse (``conflict``) reversing a filing fee the grant of its petition relied on."""
    appeal = session.get(Appeal, payment.appeal_id, populate_existing=True)
    if appeal is not None and appeal.petition_granted:
        granted_on = appeal.petition_decided_on.isoformat() if appeal.petition_decided_on else ""
        raise Conflict(
            f"Subd. 9: petition {appeal.id} was granted on {granted_on} with this filing fee "
            "paid: the grant relied on it, so it is not reversed",
            relied_on=[f"the grant of petition {appeal.id} on {granted_on}"],
        )


def return_appeal_security(
    session: Session, actor: Actor, appeal: Appeal, on: date, request_id: str | None
) -> None:
    """The petition was granted on ``on``: return the security posted for it (once,
    automatically), dated no earlier than it was received."""
    payment = _live_payment(session, appeal.id, "appeal_security")
    if payment is not None:
        _compensate(session, actor, payment, "returned", max(on, payment.received_on), request_id)


def _check_live(payment: Payment) -> None:
    """Refuse (``conflict``) compensating a payment already refunded, returned or reversed."""
    if payment.status != "received":
        raise Conflict(f"the payment was already {payment.status}", status=payment.status)


def _compensate(
    session: Session,
    actor: Actor,
    payment: Payment,
    status: str,
    on: date,
    request_id: str | None,
    reason: str | None = None,
) -> None:
    """Book ``payment``'s transaction back (``payment_{status}``), dated ``on``; its memo gives
    ``reason`` when there is one, and a reversal keeps it as ``reversal_reason``, written with
    the status and the link in one statement (the database ties the reason to the memo: 0026)."""
    _check_live(payment)
    memo = f"payment {payment.id} {status}" + (f": {reason}" if reason else "")
    reversal = ledger.reverse(
        session,
        payment.transaction_id,
        usd_meta(f"payment-{status}:{payment.id}", on, memo, actor, request_id),
        kind=f"payment_{status}",
    )
    payment.status = status
    payment.compensation_transaction_id = reversal.transaction_id
    if status == "reversed":
        payment.reversal_reason = reason
    session.flush()


# --- reading ----------------------------------------------------------------------------------


def get_payment(db: Database, actor: Actor, payment_id: str) -> PaymentView:
    """A payment the caller may see: the board, or the LGU of its plan (``not_found``)."""
    with db.transaction() as session:
        return PaymentView.of(visible_payment(session, actor, payment_id))


def visible_payment(
    session: Session, actor: Actor, payment_id: str, *, lock: bool = False
) -> Payment:
    """The payment, if the caller may see it (``get_payment``); locked with ``lock``."""
    payment = session.get(Payment, payment_id, with_for_update=lock, populate_existing=lock)
    if payment is None or not policy.sees_plan(actor, _lgu_of(session, payment)):
        raise NotFound(f"no payment {payment_id}")
    return payment


def _lgu_of(session: Session, payment: Payment) -> str | None:
    plan = session.get(Plan, payment.plan_id) if payment.plan_id else None
    return plan.lgu_id if plan else None


#: the acts on a payment ``open_acts`` weighs, by the name the payment's page gives its forms
WEIGHED = ("refund", "reverse")


def open_acts(session: Session, actor: Actor, payment: Payment) -> frozenset[str]:
    """The acts of ``WEIGHED`` the caller may record on ``payment`` now, each weighed by the
    check its use case makes before writing (``check_refundable``, ``check_reversible``): a form
    offered is then refused only if the payment changed meanwhile."""
    checks = {"refund": check_refundable, "reverse": check_reversible}
    open_now = set()
    for act, check in checks.items():
        try:
            check(session, actor, payment)
        except BankError:
            continue
        open_now.add(act)
    return frozenset(open_now)


def why_closed(session: Session, actor: Actor, payment: Payment) -> str | None:
    """Why nothing can be recorded on a payment still received: the refusal of the act that
    would take it back (the reversal of a filing fee, which is never refunded; the refund of any
    other), in the use case's words (``None`` when that act is open)."""
    check = check_reversible if payment.kind == "appeal_filing_fee" else check_refundable
    try:
        check(session, actor, payment)
    except BankError as refused:
        return refused.detail
    return None


def compensated_on(session: Session, payment: Payment) -> date | None:
    """The day ``payment`` was refunded, returned or reversed: its compensating transaction's
    effective date (``None`` while it is received)."""
    if payment.compensation_transaction_id is None:
        return None
    booked = session.get(LedgerTransaction, payment.compensation_transaction_id)
    return booked.effective_on if booked is not None else None


def list_payments(
    db: Database,
    actor: Actor,
    plan_id: str | None = None,
    where: Iterable[ColumnElement[bool]] = (),
    cursor: str | None = None,
) -> list[PaymentView]:
    """Every payment the caller may see (board: all; LGU: its plans', their appeals' included),
    oldest first, that meets every condition of ``where`` (``bank.listing_filters``); with
    ``plan_id``, that plan's and its appeals' (``not_found`` unless the caller sees the plan).
    The CSV export, and a plan's own payments on its pages; ``page_of_payments`` pages them.
    A ``cursor`` (a payment's id) is checked as a page checks it, ``UnknownCursor`` unless the
    caller sees that payment (once the plan is one it sees, as a page checks), and moves
    nothing: every payment is listed."""
    with db.transaction() as session:
        query = _payments_query(session, actor, plan_id, where)  # not_found first
        if cursor is not None:
            scope = plans.of_plans(Payment.plan_id, actor)
            keyset.require_listed(session, Payment.id, cursor, *scope)
        return [PaymentView.of(row) for row in session.execute(query).scalars()]


def page_of_payments(
    db: Database,
    actor: Actor,
    limit: int,
    plan_id: str | None = None,
    where: Iterable[ColumnElement[bool]] = (),
    after: str | None = None,
) -> list[PaymentView]:
    """Up to ``limit + 1`` payments of ``list_payments`` (the extra one says there are more),
    after the payment ``after`` in their order (by ``created_at``, then id; an index holds it,
    so a later page reads no more rows than the first).  The cursor's payment is looked up among
    those the caller sees, whatever the filters: one refunded while a client pages through
    ``?status=received`` still marks its place, and one the caller may not see (or none at
    all) is ``UnknownCursor``."""
    with db.transaction() as session:
        query = _payments_query(session, actor, plan_id, where)
        if after is not None:
            scope = plans.of_plans(Payment.plan_id, actor)
            query = query.where(
                keyset.listed_after(session, Payment.created_at, Payment.id, after, *scope)
            )
        rows = session.execute(query.limit(limit + 1)).scalars()
        return [PaymentView.of(row) for row in rows]


def payments_of(
    session: Session,
    actor: Actor,
    plan_id: str | None = None,
    where: Iterable[ColumnElement[bool]] = (),
) -> list[PaymentView]:
    """``list_payments`` in the caller's unit of work."""
    query = _payments_query(session, actor, plan_id, where)
    return [PaymentView.of(row) for row in session.execute(query).scalars()]


def _payments_query(
    session: Session,
    actor: Actor,
    plan_id: str | None,
    where: Iterable[ColumnElement[bool]],
) -> Select[Payment]:
    """The payments ``list_payments`` lists, in its order."""
    query = select(Payment).where(*where).order_by(Payment.created_at, Payment.id)
    if plan_id is not None:
        plan = plans.visible_plan(session, actor, plan_id)
        appeal_ids = select(Appeal.id).where(Appeal.plan_id == plan.id)
        return query.where((Payment.plan_id == plan.id) | Payment.appeal_id.in_(appeal_ids))
    query = query.join(Plan, Plan.id == Payment.plan_id)
    if not actor.is_board:
        query = query.where(Plan.lgu_id == actor.lgu_id)
    return query
