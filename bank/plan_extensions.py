"""Extensions of a plan's decision deadline (Minn. Stat. 15.99 subd. 3 (f), (g)).

The LGU may extend the 60 days once, by at most 60 days, by written notice sent before the
deadline (f); any further or longer extension needs the applicant's written approval or request
(g).  ``decision_due`` is then the receipt plus 60 days plus every extension's days, counted as
one period (``bank.rules.timeline.decision_due``).  Extensions belong to the application
they extend: a revision counting as a new application starts without any.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from sqlalchemy.orm import Session

from bank import plans
from bank.plan_facts import add_fact
from bank.plan_record_tables import PlanExtension
from bank.plan_tables import Plan
from bank.rules import timeline
from ledger import clock


@dataclass(frozen=True)
class Extension:
    """An extension as asked for (``POST /plans/{id}/extensions``) and as recorded: the LGU's
    own (f) unless ``applicant_agreed`` (g)."""

    notified_on: date
    days: int
    reason: str
    applicant_agreed: bool = False


#: what ``POST /plans/{id}/extensions`` asks for
ExtensionRequest = Extension


@dataclass(frozen=True)
class ExtensionView(Extension):
    """An extension as recorded, with the decision deadline it sets."""

    decision_due: date = field(kw_only=True)


def check_extension(session: Session, plan: Plan, asked: timeline.ExtensionFacts) -> None:
    """Refuse the extension ``asked`` for the plan's state (``timeline.check_extension``)."""
    plans._check_not_future(asked.notified_on, "notified_on")
    plans._check_not_before_receipt(plan, asked.notified_on, "notified_on")
    c = plans.clocks(session, plan)
    timeline.check_extension(
        c.ruleset,
        c.lgu,
        c.board,
        plans.facts(session, plan),
        asked,
        clock.today(),
        plans.approval_acts(session, plan),
    )


def record_extension(session: Session, plan: Plan, request: ExtensionRequest) -> ExtensionView:
    """Record an extension sent on ``notified_on``; answer it with the new ``decision_due``."""
    asked = timeline.ExtensionFacts(request.notified_on, request.days, request.applicant_agreed)
    check_extension(session, plan, asked)
    row = add_fact(
        session,
        PlanExtension,
        "ext",
        plan.id,
        application_number=plan.application_number,
        notified_on=request.notified_on,
        days=request.days,
        reason=request.reason,
        applicant_agreed=request.applicant_agreed,
    )
    due = plans.state(session, plan).deadlines.decision_due
    return ExtensionView(
        row.notified_on, row.days, row.reason, row.applicant_agreed, decision_due=due
    )
