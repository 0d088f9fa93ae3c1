"""In-lieu payments (Subd. 1; docs/domain.md §5, §6): money paid to the wetland banking program
fund in lieu of replacing a wetland on agricultural land, by a monetary-payment plan.

Who may pay is the plan's to say: its method and land (``not_eligible``), and its decision,
which must leave an impact to replace.  The money may arrive before the decision; once the plan
is denied (by the LGU, or an approval reversed on appeal) it replaces nothing, so no more is
taken, and what was received is refundable (``standing``, shown on the plan's page).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from bank import credit_needs, plans
from bank.errors import Conflict, NotEligible
from bank.plan_tables import Plan

#: the method an in-lieu payment replaces the impact by (``plans.METHODS``)
MONETARY_PAYMENT = "monetary_payment"


def check_payable(session: Session, plan: Plan) -> None:
    """Refuse an in-lieu payment for ``plan``: Subd. 1 takes money in lieu only for agricultural
    wetlands, by a monetary-payment plan (``not_eligible``), and only while its decision may
    still permit the impact: none once it is denied, whatever its status (``conflict``, the
    plan's ``current_status`` named), as nothing more is reserved for it (``credit_needs``)."""
    if not plan.on_agricultural_land or plan.method != MONETARY_PAYMENT:
        raise NotEligible(
            "an in-lieu payment is only for a monetary-payment plan on agricultural land",
            on_agricultural_land=plan.on_agricultural_land,
            method=plan.method,
        )
    state = plans.state(session, plan)
    if state.outcome in credit_needs.CLOSED_OUTCOMES:
        denied = (
            "the plan's approval was reversed on appeal"
            if state.reversed_on_appeal
            else "the plan was denied"
        )
        now = "" if state.status == "denied" else f" (it is {state.status})"
        raise Conflict(
            f"{denied}{now}: it permits no impact for an in-lieu payment to replace",
            current_status=state.status,
            outcome=state.outcome,
        )


@dataclass(frozen=True)
class Standing:
    """What a plan's in-lieu payments came to, against what is due."""

    due_cents: int | None
    #: received and not refunded
    received_cents: int
    #: received beyond what is due (0 when nothing is due but nothing was received either)
    excess_cents: int
    #: still to pay (0 once paid in full, or when nothing is due)
    short_cents: int
    #: the plan was denied (or its approval reversed on appeal): everything received replaces
    #: nothing and is refundable, payment by payment
    refundable: bool


def standing(due_cents: int | None, received_cents: int, outcome: str | None) -> Standing | None:
    """The in-lieu payments of a plan with ``due_cents`` due and ``outcome`` (its decision as of
    today), of which ``received_cents`` were received and not refunded; ``None`` for a plan
    that owes none and received none."""
    if due_cents is None and received_cents == 0:
        return None
    due = due_cents or 0
    return Standing(
        due_cents=due_cents,
        received_cents=received_cents,
        excess_cents=max(received_cents - due, 0),
        short_cents=max(due - received_cents, 0),
        refundable=received_cents > 0 and outcome in credit_needs.CLOSED_OUTCOMES,
    )
