"""Revised applications (Subd. 6 (c)), before a decision and after an approval.

"Application" includes a revised application and "an application for a revision to an approved
replacement plan" when the area to be drained or filled is at least 10% larger than under the
original, or lies more than 500 feet from it.  Such a revision is a new application: the plan's
current application is kept as it stood (``plan_applications``) and the revision starts its own
timeline (notice, comment period, decision, notice of decision, appeal window) recorded through
the plan's same endpoints, so a second decision is accepted for it.  Any other revision updates
the impact's area, and with it the credits required; it keeps the application's decision, so
once the LGU has decided it may not take the area where that decision could not have been made
on its day (from 10,000 sq ft, inside the Subd. 8 comment period:
``timeline.check_decision_keeps``), and a decision is made no earlier than the revisions it
decides (``plan_decisions``).

After a decision only an approval is revised, and not while a petition awaits the board; a
revision counting as new waits until the approval is final **(choice)**, so that it cannot cut
short anyone's appeal of the approval it supersedes.  Credits already withdrawn stay withdrawn
and count toward the revised requirement; the impact may proceed again once the new decision is
final (``bank.plan_report``).

"Final" is read from today's date, the day after the 15 days of Subd. 9; but those days run from
the notice's postmark to the petition's *mailing*, so a petition postmarked on the window's last
day may reach the board after the revision was recorded.  It is timely: it appeals the
application the revision superseded (``plans.appealed_application``; ``appeals.file``), checked
with that application's facts as they stood.  While it awaits the board the plan is ``appealed``
and no further revision is recorded.  Upheld, nothing changes.  Reversed, the superseded
approval is no longer the approval that stands if the revision is denied (``plans.standing_row``:
the approval before it, if any, is), and what was withdrawn under it, from the revision that
made it the plan's application to the one that superseded it, is reversed
(``plans.withdrawn_under``); the revision's own record, decision, withdrawals and reservations
are left as they are.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from bank import plans
from bank.errors import Conflict, ValidationFailed
from bank.ids import new_id
from bank.plan_decisions import Decision, decision_record
from bank.plan_facts import add_fact
from bank.plan_record_tables import APPLICATION_RECORD, PlanApplication
from bank.plan_tables import Appeal, Plan, PlanRevision
from bank.rules import replacement_rules, timeline
from bank.rules.ruleset import ruleset_by_id

APPROVALS = frozenset({"approved", "deemed_approved"})


@dataclass(frozen=True)
class RevisionView:
    """A revision as recorded, and the application it leaves the plan with."""

    id: str
    counts_as_new_application: bool
    area_sqft: int
    previous_area_sqft: int
    displacement_ft: int
    received_on: date
    plan_received_on: date
    application_number: int


def record_revision(
    session: Session, plan: Plan, area_sqft: int, displacement_ft: int, received_on: date
) -> RevisionView:
    """Subd. 6 (c): a revision ≥ 10% larger or > 500 ft away is a new application."""
    plans._check_not_future(received_on, "received_on")
    plans._check_not_before_receipt(plan, received_on, "received_on")
    ruleset = ruleset_by_id(plan.ruleset)
    # compared with the application as last received as new (docs/domain.md §4), so that
    # revisions of under 10% each cannot add up to a larger impact without new notice and clocks
    current = plans.state(session, plan)
    # after a denied revision, the approval standing is what a further revision revises
    baseline = (
        current.area_sqft if current.revision_denied else _area_last_received_as_new(session, plan)
    )
    counts = replacement_rules.revision_counts_as_new(ruleset, baseline, area_sqft, displacement_ft)
    check_revision(current, counts)
    if current.outcome is not None:
        _check_received_after_approval(plan, current, counts, received_on)
        if not counts:  # changed in place, the approval keeps its decision (Subd. 8)
            c = plans.clocks(session, plan)
            timeline.check_decision_keeps(c.ruleset, c.lgu, plans.facts(session, plan), area_sqft)
    revision = add_fact(
        session,
        PlanRevision,
        "rev",
        plan.id,
        area_sqft=area_sqft,
        previous_area_sqft=baseline,
        displacement_ft=displacement_ft,
        received_on=received_on,
        counts_as_new_application=counts,
    )
    if counts:  # the application superseded keeps its own outcome (a denied revision's too)
        _supersede(
            session, plan, "denied" if current.revision_denied else current.outcome, revision
        )
    plan.impact_area_sqft = area_sqft
    session.flush()
    return RevisionView(
        id=revision.id,
        counts_as_new_application=counts,
        area_sqft=area_sqft,
        previous_area_sqft=revision.previous_area_sqft,
        displacement_ft=displacement_ft,
        received_on=received_on,
        plan_received_on=plan.received_on,
        application_number=plan.application_number,
    )


def check_revision(current: plans.PlanState, counts: bool) -> None:
    """Refuse a revision (``counts``: one counting as a new application) for the plan's state
    ``current``, whatever its area and day."""
    if current.outcome is not None:
        _check_revisable(current, counts)
    elif current.status == "appealed":  # an appeal of the application the revision superseded
        raise Conflict("a petition awaits the board: the plan cannot be revised meanwhile")
    if current.revision_denied and not counts:
        # the approval standing is an earlier application's, kept as it stood: a change that
        # does not count as new cannot be made to it in place (choice)
        raise Conflict(
            "Subd. 6 (c): the plan stands on the approval its denied revision applied to revise; "
            "a revision of it that does not count as a new application cannot be recorded"
        )


def _check_revisable(current: plans.PlanState, counts: bool) -> None:
    """After a decision: an approval, nothing awaiting the board, final if it counts as new."""
    if current.outcome not in APPROVALS:
        raise Conflict(
            f"Subd. 6 (c): an approved plan is revised; this one is {current.outcome}",
            status=current.status,
        )
    if current.status == "appealed":
        raise Conflict("a petition awaits the board: the plan cannot be revised meanwhile")
    if counts and current.status != "final":
        raise Conflict(
            "Subd. 6 (c), 9: a revision counting as a new application supersedes the approval, "
            f"so it waits until the approval is final; the plan is {current.status}",
            status=current.status,
        )


def _check_received_after_approval(
    plan: Plan, current: plans.PlanState, counts: bool, received_on: date
) -> None:
    """A revision of an approved plan is received once it is approved (on the decision's day,
    its resolution's where one carries it, or after a deemed approval's last day to decide);
    one counting as new, once the approval is final (after its appeal window).  Dated earlier,
    it would stand in the record before what it revises, and a new application's clocks would
    have run out before it was made."""
    made = plans.decision_made_on(plan)
    if made is not None:
        approved_on = made
    else:  # deemed approved the day after the last day to decide
        approved_on = current.deadlines.decision_due + timedelta(days=1)
    earliest, what = approved_on, f"the approval it revises ({approved_on.isoformat()})"
    window_ends = current.deadlines.appeal_window_ends
    if counts and window_ends is not None and window_ends >= earliest:
        earliest = window_ends + timedelta(days=1)
        what = f"the approval it supersedes became final ({earliest.isoformat()})"
    if received_on < earliest:
        raise ValidationFailed(
            f"Subd. 6 (c): the revision is received on or after {what}",
            {"received_on": [f"before {earliest.isoformat()}"]},
        )


def _supersede(session: Session, plan: Plan, outcome: str | None, revision: PlanRevision) -> None:
    """Keep the current application as it stood; the revision becomes the plan's application,
    with none of the old one's notices, extensions, panel or decision."""
    session.add(
        PlanApplication(
            id=new_id("app"),
            plan_id=plan.id,
            number=plan.application_number,
            received_on=plan.received_on,
            impact_area_sqft=plan.impact_area_sqft,
            outcome=outcome,
            revision_id=revision.id,
            superseded_on=revision.received_on,
            appeal_security_required_cents=plan.appeal_security_required_cents,
            **{name: getattr(plan, name) for name in APPLICATION_RECORD},
        )
    )
    plan.application_number += 1
    plan.received_on = revision.received_on
    for name in APPLICATION_RECORD:
        setattr(plan, name, None)


def _area_last_received_as_new(session: Session, plan: Plan) -> int:
    """The impact area of the application as last received as new (Subd. 6 (c)): the last
    revision that counted as new, else the area the last revision was compared with, else the
    plan's own area (each revision stores the area it was compared with)."""
    last = session.execute(
        select(PlanRevision)
        .where(PlanRevision.plan_id == plan.id)
        .order_by(PlanRevision.recorded_at.desc())
        .limit(1)
    ).scalar_one_or_none()
    if last is None:
        return plan.impact_area_sqft
    return last.area_sqft if last.counts_as_new_application else last.previous_area_sqft


@dataclass(frozen=True)
class ApplicationView:
    """An earlier application as the plan shows it."""

    number: int
    received_on: date
    area_sqft: int
    notice_mailed_on: date | None
    #: as it stood when superseded, and after every appeal of it since (a petition mailed within
    #: its window may reach the board after the revision, Subd. 9)
    outcome: str | None
    decision: Decision | None
    decision_notice_mailed_on: date | None
    superseded_on: date
    revision_id: str


def application_view(row: PlanApplication, appeals: Iterable[Appeal]) -> ApplicationView:
    """An earlier application as the plan shows it, given the plan's ``appeals``."""
    return ApplicationView(
        number=row.number,
        received_on=row.received_on,
        area_sqft=row.impact_area_sqft,
        notice_mailed_on=row.notice_mailed_on,
        outcome=plans.outcome_now(row, appeals),
        decision=decision_record(row),
        decision_notice_mailed_on=row.decision_notice_mailed_on,
        superseded_on=row.superseded_on,
        revision_id=row.revision_id,
    )
