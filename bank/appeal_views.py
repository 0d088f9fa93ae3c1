"""An appeal as the API shows it: its deadlines on the board's calendar, whether the board's
decisions were late, what the board has received for it, and where it stands."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from sqlalchemy.orm import Session

from bank import money, plans
from bank.errors import NotFound
from bank.money_tables import Payment
from bank.plan_tables import Appeal, Plan
from bank.rules import timeline
from ledger import clock


@dataclass(frozen=True)
class PetitionView:
    """The board's decision whether to grant the petition."""

    granted: bool
    decided_on: date | None
    reason: str | None
    late: bool


@dataclass(frozen=True)
class AppealDecisionView:
    """The board's decision on the merits."""

    outcome: str
    decided_on: date | None
    late: bool


@dataclass(frozen=True)
class AppealView:
    """``GET /appeals/{id}``"""

    id: str
    plan_id: str
    #: the plan's application whose decision it appeals (a revision may start another)
    application_number: int
    petitioner_kind: str
    petitioner_name: str | None
    petitioner_address: str | None
    resident_count: int | None
    postmarked_on: date
    received_on: date
    #: what the petition says it pays and posts (Subd. 9: $200, security of at most $500)
    filing_fee_cents: int
    security_cents: int | None
    security_required_cents: int | None
    #: the day the board received the appeal's live filing fee (``POST /payments``); null while
    #: none is recorded: a grant needs it (``invalid_fee``)
    filing_fee_received_on: date | None
    #: that fee's postmark, within the appeal window (Subd. 9): the petition's when the fee came
    #: in its envelope; null while no fee is recorded, or for a fee booked before postmarks were
    filing_fee_postmarked_on: date | None
    #: the appeal security posted and still held: not refunded, and not yet returned on the
    #: petition's grant (0 if none)
    security_held_cents: int
    ruleset: str
    grant_decision_due: date
    petition: PetitionView | None
    grounds: list[str]
    factors_considered: str | None
    decision_due: date | None
    decision: AppealDecisionView | None
    served_on: date | None
    judicial_review_ends: date | None
    #: ``petition_received``, ``no_fee_in_window`` (undecided, and its window closed with no
    #: filing fee recorded: it obtained no appeal, Subd. 9), ``petition_denied``, ``granted``,
    #: ``decided``
    status: str


def view(session: Session, appeal: Appeal) -> AppealView:
    """An appeal with its deadlines (board's calendar) and whether decisions were late."""
    plan = session.get(Plan, appeal.plan_id)
    if plan is None:  # a foreign key: an appeal's plan exists
        raise NotFound(f"no plan {appeal.plan_id}")
    required = plans.security_required_cents(session, plan, appeal.application_number)
    live = money.live_appeal_payments(session, [appeal.id])[appeal.id]
    today = clock.today()
    closed = plans.appeal_window_closed(
        plan, plans.state(session, plan, today), appeal.application_number, today
    )
    return view_with(appeal, plan, plans.clocks(session, plan), required, live, closed)


def view_with(
    appeal: Appeal,
    plan: Plan,
    c: plans.Clocks,
    security_required_cents: int | None,
    live: Iterable[Payment],
    window_closed: bool,
) -> AppealView:
    """``view`` given the appeal's plan, that plan's clocks, the security required of its
    petitioner (``plans.security_required_of``), its live payments
    (``money.live_appeal_payments``) and whether the window of the application it appeals has
    closed (``plans.appeal_window_closed``)."""
    paid = {payment.kind: payment for payment in live}
    fee, security = paid.get("appeal_filing_fee"), paid.get("appeal_security")
    facts = plans.appeal_facts(appeal, {appeal.id} if fee is not None else ())
    grant_due = timeline.grant_decision_due(c.board, c.ruleset, appeal.received_on)
    decision_due = (
        timeline.appeal_decision_due(c.board, c.ruleset, appeal.received_on)
        if appeal.petition_granted
        else None
    )
    return AppealView(
        id=appeal.id,
        plan_id=appeal.plan_id,
        application_number=appeal.application_number,
        petitioner_kind=appeal.petitioner_kind,
        petitioner_name=appeal.petitioner_name,
        petitioner_address=appeal.petitioner_address,
        resident_count=appeal.resident_count,
        postmarked_on=appeal.postmarked_on,
        received_on=appeal.received_on,
        filing_fee_cents=appeal.filing_fee_cents,
        security_cents=appeal.security_cents,
        security_required_cents=security_required_cents,
        filing_fee_received_on=fee.received_on if fee is not None else None,
        filing_fee_postmarked_on=fee.postmarked_on if fee is not None else None,
        security_held_cents=security.amount_cents if security is not None else 0,
        ruleset=appeal.ruleset,
        grant_decision_due=grant_due,
        petition=_petition(appeal, grant_due),
        grounds=appeal.petition_grounds.split(",") if appeal.petition_grounds else [],
        factors_considered=appeal.factors_considered,
        decision_due=decision_due,
        decision=_decision(appeal, decision_due),
        served_on=appeal.served_on,
        judicial_review_ends=(
            timeline.judicial_review_ends(c.board, c.ruleset, appeal.served_on)
            if appeal.served_on
            else None
        ),
        status=_status(appeal, timeline.obtained_no_appeal(facts, window_closed)),
    )


def _petition(appeal: Appeal, grant_due: date) -> PetitionView | None:
    if appeal.petition_granted is None:
        return None
    decided_on = appeal.petition_decided_on
    return PetitionView(
        granted=appeal.petition_granted,
        decided_on=decided_on,
        reason=appeal.petition_reason,
        late=bool(decided_on and decided_on > grant_due),
    )


def _decision(appeal: Appeal, due: date | None) -> AppealDecisionView | None:
    if appeal.outcome is None:
        return None
    decided_on = appeal.decided_on
    return AppealDecisionView(
        outcome=appeal.outcome,
        decided_on=decided_on,
        late=bool(due and decided_on and decided_on > due),
    )


def _status(appeal: Appeal, obtained_none: bool) -> str:
    if appeal.petition_granted is None:
        return "no_fee_in_window" if obtained_none else "petition_received"
    if not appeal.petition_granted:
        return "petition_denied"
    return "decided" if appeal.outcome else "granted"
