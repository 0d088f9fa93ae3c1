"""The technical evaluation panel (Subd. 2).

"Questions concerning the public value, location, size, or type of a wetland shall be submitted
to and determined by a technical evaluation panel after an on-site inspection."  The panel is a
technical professional employee of the board, one of the soil and water conservation district,
and a water-resources professional the LGU appoints; it gives its determination to the LGU and
may recommend approval or denial, and the LGU "must consider and include" the determination in
its decision.  So once questions of an application were referred, its decision waits for the
determination (``conflict`` before), and the decision shows it.

The referral and the determination (dated by its inspection, the one day it records) come
before the decision, so by ``decision_due``.  A plan not decided by then is deemed approved, yet
the LGU may have decided in time on a determination recorded later: both may still be recorded
late, then the decision, while nothing relied on the deemed approval
(``timeline.check_panel_act``, the rule a late decision follows).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from sqlalchemy import select
from sqlalchemy.orm import Session

from bank import plans
from bank.errors import Conflict, ValidationFailed
from bank.plan_facts import add_fact
from bank.plan_record_tables import PlanPanel
from bank.plan_tables import Plan
from bank.rules import timeline
from ledger import clock

#: the questions Subd. 2 sends to the panel, in the statute's order
QUESTIONS = ("public_value", "location", "size", "type")
#: who the three members represent: the board, the soil and water conservation district, the LGU
MEMBER_KINDS = ("board", "swcd", "lgu")
RECOMMENDATIONS = ("approve", "deny")


@dataclass(frozen=True)
class PanelMember:
    name: str
    represents: str


@dataclass(frozen=True)
class Determination:
    """``POST /plans/{id}/tep-determination``"""

    inspected_on: date
    members: tuple[PanelMember, ...]
    determination: str
    recommendation: str | None = None


def panel_of(session: Session, plan: Plan) -> PlanPanel | None:
    """The referral (and determination) of the plan's current application, if any."""
    return session.execute(
        select(PlanPanel).where(
            PlanPanel.plan_id == plan.id,
            PlanPanel.application_number == plan.application_number,
        )
    ).scalar_one_or_none()


def refer(session: Session, plan: Plan, referred_on: date, questions: list[str]) -> PlanPanel:
    """Submit questions of the current application to the panel (once, before the decision)."""
    plans._check_not_future(referred_on, "referred_on")
    plans._check_not_before_receipt(plan, referred_on, "referred_on")
    unknown = sorted(set(questions) - set(QUESTIONS))
    if not questions or unknown:
        raise ValidationFailed(
            "Subd. 2 refers questions of public value, location, size or type",
            {"questions": [f"one or more of {', '.join(QUESTIONS)}"]},
        )
    check_referable(session, plan, referred_on)
    return add_fact(
        session,
        PlanPanel,
        "tep",
        plan.id,
        application_number=plan.application_number,
        referred_on=referred_on,
        questions=",".join(q for q in QUESTIONS if q in questions),
    )


def determine(session: Session, plan: Plan, determination: Determination) -> PlanPanel:
    """Record the panel's determination on the questions referred (once, before the decision)."""
    plans._check_not_future(determination.inspected_on, "inspected_on")
    _check_members(determination.members)
    if determination.recommendation not in (None, *RECOMMENDATIONS):
        raise ValidationFailed(
            "the panel may recommend approval or denial", {"recommendation": ["unknown"]}
        )
    panel = check_determinable(session, plan, determination.inspected_on)
    if determination.inspected_on < panel.referred_on:
        raise ValidationFailed(
            "Subd. 2: the panel determines the questions referred after an on-site inspection",
            {"inspected_on": [f"before referred_on {panel.referred_on.isoformat()}"]},
        )
    names = {member.represents: member.name.strip() for member in determination.members}
    panel.inspected_on = determination.inspected_on
    panel.member_board, panel.member_swcd, panel.member_lgu = (names[k] for k in MEMBER_KINDS)
    panel.determination = determination.determination
    panel.recommendation = determination.recommendation
    panel.determined_at = clock.utcnow()
    session.flush()
    return panel


def check_referable(session: Session, plan: Plan, referred_on: date) -> None:
    """Refuse a referral on ``referred_on`` for the plan's state: once, before the decision."""
    _check_before_decision(session, plan, referred_on, "a referral to the panel")
    if panel_of(session, plan) is not None:
        raise Conflict("the questions of this application were already referred to the panel")


def check_determinable(session: Session, plan: Plan, inspected_on: date) -> PlanPanel:
    """Refuse a determination after an inspection on ``inspected_on`` for the plan's state:
    once, on questions referred, before the decision; the panel referred to otherwise."""
    _check_before_decision(session, plan, inspected_on, "a determination after an inspection")
    panel = panel_of(session, plan)
    if panel is None:
        raise Conflict("no questions of this application were referred to the panel")
    if panel.determined_at is not None:
        raise Conflict("the panel's determination was already recorded")
    return panel


def _check_members(members: tuple[PanelMember, ...]) -> None:
    """Subd. 2: exactly three members, one of each kind, each named."""
    kinds = sorted(member.represents for member in members)
    if kinds != sorted(MEMBER_KINDS) or any(not member.name.strip() for member in members):
        raise ValidationFailed(
            "Subd. 2: the panel is a professional of the board, one of the soil and water "
            "conservation district, and one the LGU appoints",
            {"members": ["exactly one named member representing each of board, swcd, lgu"]},
        )


def _check_before_decision(session: Session, plan: Plan, day: date, act: str) -> None:
    """Before the decision, or by ``decision_due`` while nothing relied on the plan's deemed
    approval (``timeline.check_panel_act``)."""
    c = plans.clocks(session, plan)
    timeline.check_panel_act(
        c.ruleset,
        c.lgu,
        plans.facts(session, plan),
        day,
        act,
        clock.today(),
        plans.approval_acts(session, plan),
    )


def check_decision_includes(session: Session, plan: Plan, decided_on: date) -> None:
    """Subd. 2: a decision on an application whose questions were referred includes the panel's
    determination, so it waits for it and comes after the inspection."""
    panel = panel_of(session, plan)
    if panel is None:
        return
    if panel.determined_at is None or panel.inspected_on is None:
        raise Conflict(
            f"Subd. 2: questions were referred to the technical evaluation panel on "
            f"{panel.referred_on.isoformat()}; the decision must consider and include its "
            "determination, which is not recorded yet"
        )
    if decided_on < panel.inspected_on:
        raise ValidationFailed(
            "Subd. 2: the decision considers the panel's determination, made after its "
            f"inspection on {panel.inspected_on.isoformat()}",
            {"decided_on": [f"before the panel's inspection {panel.inspected_on.isoformat()}"]},
        )


def determination_of(panel: PlanPanel | None) -> Determination | None:
    """The panel's determination, or None until it is recorded."""
    if panel is None or panel.determined_at is None:
        return None
    if panel.inspected_on is None or panel.determination is None:
        return None
    names = (panel.member_board, panel.member_swcd, panel.member_lgu)
    members = zip(MEMBER_KINDS, names, strict=True)
    return Determination(
        inspected_on=panel.inspected_on,
        members=tuple(PanelMember(name or "", kind) for kind, name in members),
        determination=panel.determination,
        recommendation=panel.recommendation,
    )


@dataclass(frozen=True)
class PanelView:
    """The referral and its determination as the plan shows them."""

    application_number: int
    referred_on: date
    questions: tuple[str, ...]
    determination: Determination | None


def view(panel: PlanPanel) -> PanelView:
    """A referral and its determination as the plan shows them."""
    return PanelView(
        application_number=panel.application_number,
        referred_on=panel.referred_on,
        questions=tuple(panel.questions.split(",")),
        determination=determination_of(panel),
    )
