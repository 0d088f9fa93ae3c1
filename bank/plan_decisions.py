"""The LGU's decision on a plan's application and its record.

Subd. 4 and Minn. Stat. 15.99: approve or deny within the deadline, once the application's
notice is recorded (below 10,000 sq ft the Subd. 6 (b) summary, which could not be recorded
after the decision) and, from 10,000 sq ft, after the comment period
(``bank.rules.timeline.check_decision``).  The record the statute asks for:

* Subd. 1 (b): an approval is made "by a resolution of the governing body": its number and the
  day it was adopted (on or before ``decided_on``, not before the application was received).
  The resolution is the approval (or the denial, when one is given), so the rules that hold the
  decision back hold it back too: not inside the Subd. 8 comment period and not before the
  panel's inspection (``_check_adoption``);
* Minn. Stat. 15.99 subd. 2: a denial states its reasons in writing;
* Subd. 2: once questions went to the technical evaluation panel, the decision includes its
  determination (``bank.plan_panel``);
* Subd. 1 (a): approving a plan for peatland considers the impact on carbon balance and includes
  the planting of trees or shrubs (``not_eligible`` otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bank import plan_panel, plans
from bank.errors import CommentPeriodOpen, NotEligible, ValidationFailed
from bank.plan_record_tables import ApplicationRecord, PlanPanel
from bank.plan_tables import Plan, PlanRevision
from bank.rules import timeline
from ledger import clock


@dataclass(frozen=True)
class Resolution:
    number: str
    adopted_on: date


@dataclass(frozen=True)
class PeatlandRecord:
    carbon_balance_considered: bool
    trees_or_shrubs: str | None = None


@dataclass(frozen=True)
class DecisionRequest:
    """``POST /plans/{id}/decision``"""

    outcome: str
    decided_on: date
    resolution: Resolution | None = None
    reasons: str | None = None
    tep_recommendation: str | None = None
    peatland: PeatlandRecord | None = None


def record_decision(session: Session, plan: Plan, request: DecisionRequest) -> None:
    """Approve or deny the plan's current application, with its record."""
    adopted_on = request.resolution.adopted_on if request.resolution else None
    check_decidable(session, plan, request.outcome, request.decided_on, adopted_on)
    _check_record(plan, request)
    _check_after_revisions(session, plan, request)
    plan_panel.check_decision_includes(session, plan, request.decided_on)
    if request.resolution is not None:
        _check_adoption(session, plan, request.resolution.adopted_on)
    _check_peatland(plan, request)
    plan.decision_outcome, plan.decided_on = request.outcome, request.decided_on
    resolution, peatland = request.resolution, request.peatland
    plan.decision_resolution_number = resolution.number.strip() if resolution else None
    plan.decision_resolution_adopted_on = resolution.adopted_on if resolution else None
    plan.decision_reasons = request.reasons.strip() if request.reasons else None
    plan.tep_recommendation = request.tep_recommendation
    if peatland is None:
        plan.decision_carbon_balance_considered = plan.decision_trees_or_shrubs = None
    else:
        plan.decision_carbon_balance_considered = peatland.carbon_balance_considered
        plan.decision_trees_or_shrubs = (peatland.trees_or_shrubs or "").strip() or None
    session.flush()


def check_decidable(
    session: Session, plan: Plan, outcome: str, decided_on: date, adopted_on: date | None = None
) -> None:
    """Refuse a decision ``outcome`` dated ``decided_on`` (made by a resolution ``adopted_on``,
    if given) for the plan's state, before its record is looked at: after the deadline, twice,
    inside the comment period (``timeline.check_decision``)."""
    plans._check_not_future(decided_on, "decided_on")
    c = plans.clocks(session, plan)
    timeline.check_decision(
        c.ruleset,
        c.lgu,
        c.board,
        plans.facts(session, plan),
        outcome,
        decided_on,
        clock.today(),
        plans.approval_acts(session, plan),
        adopted_on,
    )


def _check_record(plan: Plan, request: DecisionRequest) -> None:
    """Subd. 1 (b): an approval's resolution; 15.99 subd. 2: a denial's written reasons."""
    resolution = request.resolution
    if request.outcome == "approved" and resolution is None:
        raise ValidationFailed(
            "Subd. 1 (b): a replacement plan is approved by a resolution of the governing body",
            {"resolution": ["required for an approval: its number and adopted_on"]},
        )
    if request.outcome == "denied" and not (request.reasons or "").strip():
        raise ValidationFailed(
            "Minn. Stat. 15.99 subd. 2: a denial states its reasons in writing",
            {"reasons": ["required for a denial"]},
        )
    if resolution is None:
        return
    if not resolution.number.strip():
        raise ValidationFailed("the resolution has a number", {"resolution": {"number": ["blank"]}})
    if resolution.adopted_on > request.decided_on:
        raise ValidationFailed(
            "the resolution is the decision: it was adopted on or before decided_on",
            {"resolution": {"adopted_on": [f"after decided_on {request.decided_on.isoformat()}"]}},
        )
    if resolution.adopted_on < plan.received_on:
        raise ValidationFailed(
            "a resolution adopted before the application was received did not decide it",
            {"resolution": {"adopted_on": [f"before received_on {plan.received_on.isoformat()}"]}},
        )


def _check_after_revisions(session: Session, plan: Plan, request: DecisionRequest) -> None:
    """The decision approves or denies the application as revised (Subd. 6 (c)): it is made (its
    resolution adopted, where one carries it) no earlier than the last revision of the current
    application was received.  Made before, it decided the application as it stood that day,
    whose area the rules held it to (a 12,000 sq ft plan revised to 9,999 sq ft on 06-10 cannot
    be approved on 06-03 inside its comment period); the revision's day is the earliest on
    which the record shows the application it decides."""
    since = plans.application_started_at(session, plan)
    revised = select(func.max(PlanRevision.received_on)).where(PlanRevision.plan_id == plan.id)
    if since is not None:  # revisions of the earlier applications decided those
        revised = revised.where(PlanRevision.recorded_at >= since)
    revised_on = session.execute(revised).scalar_one_or_none()
    if revised_on is None:
        return
    day = f"before the revision of {revised_on.isoformat()}"
    detail = (
        "the decision approves or denies the application as revised, so it is made no earlier "
        f"than the revision received {revised_on.isoformat()}"
    )
    resolution = request.resolution
    if resolution is not None and resolution.adopted_on < revised_on:
        raise ValidationFailed(
            f"{detail}: the resolution (resolution.adopted_on) is the decision",
            {"resolution": {"adopted_on": [day]}},
        )
    if request.decided_on < revised_on:
        raise ValidationFailed(detail, {"decided_on": [day]})


def _check_adoption(session: Session, plan: Plan, adopted_on: date) -> None:
    """Subd. 1 (b): the plan "must be approved by a resolution of the governing body", so the
    day the resolution was adopted is the day of the approval (or denial): Subd. 8's comment
    period runs "before approval or denial", and Subd. 2's determination is considered and
    included "in their approval or denial".  ``decided_on`` met both (``record_decision``)."""
    c = plans.clocks(session, plan)
    ends = timeline.comment_period_ends(c.ruleset, c.lgu, plans.facts(session, plan))
    if ends is not None and adopted_on <= ends:
        raise CommentPeriodOpen(
            f"Subd. 8: the comment period runs to {ends.isoformat()}; the resolution "
            "(resolution.adopted_on) approves or denies the plan, so it is adopted after it",
            deadline="comment_period_ends",
            ends=ends.isoformat(),
            errors={"resolution": {"adopted_on": [f"on or before {ends.isoformat()}"]}},
        )
    panel = plan_panel.panel_of(session, plan)
    inspected_on = None if panel is None else panel.inspected_on
    if inspected_on is not None and adopted_on < inspected_on:
        inspected = inspected_on.isoformat()
        raise ValidationFailed(
            "Subd. 2: the resolution (resolution.adopted_on) includes the panel's determination, "
            f"made after its inspection on {inspected}",
            {"resolution": {"adopted_on": [f"before the panel's inspection {inspected}"]}},
        )


def _check_peatland(plan: Plan, request: DecisionRequest) -> None:
    """Subd. 1 (a): a peatland plan's approval considers carbon and includes planting."""
    peatland = request.peatland
    if not plan.impact_peatland:
        if peatland is not None:
            raise ValidationFailed(
                "the impact is not on peatland", {"peatland": ["only for a peatland impact"]}
            )
        return
    if request.outcome != "approved":
        return
    if (
        peatland is None
        or not peatland.carbon_balance_considered
        or not (peatland.trees_or_shrubs or "").strip()
    ):
        raise NotEligible(
            "Subd. 1 (a): for peatlands the replacement must consider the impact on carbon "
            "balance and include the planting of trees or shrubs; the approval records both "
            '(peatland: {"carbon_balance_considered": true, "trees_or_shrubs": "..."})'
        )


@dataclass(frozen=True)
class Decision:
    """A decision and its record, as the plan shows an earlier application's."""

    outcome: str | None
    decided_on: date
    resolution: Resolution | None
    reasons: str | None
    tep_recommendation: str | None
    peatland: PeatlandRecord | None


@dataclass(frozen=True)
class PlanDecision(Decision):
    """The current application's decision, with the panel's determination it includes."""

    tep_determination: plan_panel.Determination | None


def decision_of(session: Session, plan: Plan) -> PlanDecision | None:
    """The current application's decision and its record, as the plan shows it."""
    if decision_record(plan) is None:
        return None
    return decision_with(plan, plan_panel.panel_of(session, plan))


def decision_with(plan: Plan, panel: PlanPanel | None) -> PlanDecision | None:
    """``decision_of`` given the current application's panel (None if it was not referred)."""
    decided = decision_record(plan)
    if decided is None:
        return None
    determination = plan_panel.determination_of(panel)
    return PlanDecision(**vars(decided), tep_determination=determination)


def decision_record(row: ApplicationRecord) -> Decision | None:
    """The decision of a plan's current application or an earlier one (``PlanApplication``):
    both carry its record (``ApplicationRecord``); None before it is decided."""
    if row.decided_on is None:
        return None
    resolution = None
    number, adopted_on = row.decision_resolution_number, row.decision_resolution_adopted_on
    if number is not None and adopted_on is not None:
        resolution = Resolution(number, adopted_on)
    peatland = None
    if row.decision_carbon_balance_considered is not None:
        peatland = PeatlandRecord(
            row.decision_carbon_balance_considered, row.decision_trees_or_shrubs
        )
    return Decision(
        outcome=row.decision_outcome,
        decided_on=row.decided_on,
        resolution=resolution,
        reasons=row.decision_reasons,
        tep_recommendation=row.tep_recommendation,
        peatland=peatland,
    )
