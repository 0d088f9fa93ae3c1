"""The LGU's acts on a plan's record, each one unit of work: extensions of the decision deadline,
the technical evaluation panel's referral and determination, the decision, revised
applications, the notices of Subd. 6 and 7, the copies the public asks for and those mailed
to them after a notice.

Each act is on a plan the caller may act on (the board, or the plan's LGU: ``not_found`` for
anyone else, ``bank.policy.sees_plan``), with the plan's row locked so that concurrent acts on
one plan serialize; the rules of each act are in its own module."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date

from sqlalchemy.orm import Session

from bank import (
    notice_document,
    notices,
    plan_decisions,
    plan_extensions,
    plan_panel,
    plan_report,
    plan_revisions,
    plans,
    securities,
    withdrawals,
)
from bank.access import Actor
from bank.errors import BankError
from bank.plan_extensions import ExtensionRequest, ExtensionView, record_extension
from bank.plan_tables import Plan
from bank.rules import timeline
from ledger import clock
from ledger.db import Database


@contextmanager
def _acting_on(db: Database, actor: Actor, plan_id: str) -> Iterator[tuple[Session, Plan]]:
    """A unit of work on the plan, locked; ``not_found`` if the caller may not see it."""
    with db.transaction() as session:
        yield session, plans.visible_plan(session, actor, plan_id, lock=True)


def extend(db: Database, actor: Actor, plan_id: str, request: ExtensionRequest) -> ExtensionView:
    """``POST /plans/{id}/extensions``: extend the decision deadline."""
    with _acting_on(db, actor, plan_id) as (session, plan):
        return record_extension(session, plan, request)


def refer_to_panel(
    db: Database, actor: Actor, plan_id: str, referred_on: date, questions: Sequence[str]
) -> plan_panel.PanelView:
    """``POST /plans/{id}/tep-referral``: refer questions to the technical evaluation panel."""
    with _acting_on(db, actor, plan_id) as (session, plan):
        return plan_panel.view(plan_panel.refer(session, plan, referred_on, list(questions)))


def record_determination(
    db: Database, actor: Actor, plan_id: str, determination: plan_panel.Determination
) -> plan_panel.PanelView:
    """``POST /plans/{id}/tep-determination``: the panel's determination."""
    with _acting_on(db, actor, plan_id) as (session, plan):
        return plan_panel.view(plan_panel.determine(session, plan, determination))


def decide(
    db: Database, actor: Actor, plan_id: str, request: plan_decisions.DecisionRequest
) -> plan_report.PlanReport:
    """``POST /plans/{id}/decision``: approve or deny; answered with the plan as decided."""
    with _acting_on(db, actor, plan_id) as (session, plan):
        plan_decisions.record_decision(session, plan, request)
        return plan_report.report(session, plan)


def revise(
    db: Database,
    actor: Actor,
    plan_id: str,
    area_sqft: int,
    displacement_ft: int,
    received_on: date,
) -> plan_revisions.RevisionView:
    """``POST /plans/{id}/revisions``: a revised application (Subd. 6 (c))."""
    with _acting_on(db, actor, plan_id) as (session, plan):
        return plan_revisions.record_revision(
            session, plan, area_sqft, displacement_ft, received_on
        )


def mail_notice(
    db: Database,
    actor: Actor,
    plan_id: str,
    notice: str,
    mailed_on: date,
    recipients: Sequence[notices.Recipient],
) -> notices.NoticeView:
    """``notice`` as mailed: ``application`` (``POST /plans/{id}/notices``, Subd. 6) or
    ``decision`` (``POST /plans/{id}/decision-notice``, Subd. 7)."""
    record = {
        "application": notices.record_application_notice,
        "decision": notices.record_decision_notice,
    }[notice]
    with _acting_on(db, actor, plan_id) as (session, plan):
        printed = functools.partial(notice_document.as_mailed, session, plan)
        mailed, _row = record(session, plan, mailed_on, list(recipients), printed)
        return mailed


def request_copy(
    db: Database, actor: Actor, plan_id: str, name: str, address: str, requested_on: date
) -> notices.CopyAsked:
    """``POST /plans/{id}/copy-requests``: a member of the public asked for a copy; the reply
    names the notices already mailed without them that they are owed (``notices.owed_copies``)."""
    with _acting_on(db, actor, plan_id) as (session, plan):
        row = notices.register_copy_request(session, plan, name, address, requested_on)
        return notices.copy_asked(row, notices.plan_mailed(session, plan))


def mail_copy(
    db: Database,
    actor: Actor,
    plan_id: str,
    copy_request_id: str,
    notice_id: str,
    mailed_on: date,
) -> notices.CopyAsked:
    """``POST /plans/{id}/copy-requests/{id}/copies-mailed``: a copy of a notice owed to a
    member of the public who asked was mailed to them (``notices.record_copy_mailed``); the
    reply is their request as the plan now shows it."""
    with _acting_on(db, actor, plan_id) as (session, plan):
        return notices.record_copy_mailed(session, plan, copy_request_id, notice_id, mailed_on)


# --- what may be recorded on the plan now -------------------------------------------------------

#: the acts ``open_acts`` weighs, by the name the pages give their forms
WEIGHED = (
    "notice-of-application",
    "extension",
    "panel-referral",
    "panel-determination",
    "decision",
    "notice-of-decision",
    "revision",
    "securities",
    "withdrawal",
)


def open_acts(session: Session, plan: Plan, today: date) -> frozenset[str]:
    """The acts of ``WEIGHED`` the plan's state lets the caller record now, each weighed by the
    check its use case makes before writing (``plans.check_notice``,
    ``plan_decisions.check_decidable``, ``withdrawals.check_withdrawable``,
    ``securities.method_refusal``, ...), on the last day
    it could be dated: today, or ``decision_due`` for the acts that come before the decision (one
    dated by then and recorded later is accepted while nothing relied on the deemed approval).
    A form is then refused only for what was typed in it (an outcome without its record, a day
    too early, a reservation no longer pending)."""
    checks = _checks(session, plan, today)
    return frozenset(act for act in WEIGHED if _refusal(checks[act]) is None)


def act_refusal(session: Session, plan: Plan, act: str, today: date) -> BankError | None:
    """Why ``act`` (one of ``WEIGHED``) may not be recorded on the plan now, as ``open_acts``
    weighs it: the refusal its use case's check raises, which a POST of its form would answer
    with too; ``None`` when the act is open."""
    return _refusal(_checks(session, plan, today)[act])


def act_form(
    db: Database, actor: Actor, plan_id: str, act: str, today: date | None = None
) -> tuple[plan_report.PlanReport, BankError | None]:
    """What the page of ``act``'s form shows, in one unit of work: the plan the caller may see
    (``not_found`` otherwise), and why the act may not be recorded now (``act_refusal``), in
    which case the page shows that reason and no form."""
    with db.transaction() as session:
        plan = plans.visible_plan(session, actor, plan_id)
        day = today or clock.today()
        return plan_report.report(session, plan, day), act_refusal(session, plan, act, day)


def _checks(
    session: Session, plan: Plan, today: date
) -> dict[str, tuple[Callable[[], object], ...]]:
    """Each act of ``WEIGHED`` with its use case's checks, on the day ``open_acts`` weighs it;
    the act is open when one of them passes."""
    current = plans.state(session, plan, today)
    before = min(today, current.deadlines.decision_due)
    # a revision is weighed whether or not it would count as a new application (Subd. 6 (c)):
    # which it is depends on the area and distance typed in the form
    revise = functools.partial(plan_revisions.check_revision, current)
    return {
        "notice-of-application": (lambda: plans.check_notice(session, plan, before),),
        "extension": (
            lambda: plan_extensions.check_extension(
                session, plan, timeline.ExtensionFacts(before, 1, applicant_agreed=True)
            ),
        ),
        "panel-referral": (lambda: plan_panel.check_referable(session, plan, before),),
        "panel-determination": (lambda: plan_panel.check_determinable(session, plan, before),),
        "decision": (lambda: plan_decisions.check_decidable(session, plan, "approved", before),),
        "notice-of-decision": (lambda: plans.check_decision_notice(session, plan, today),),
        "revision": tuple(functools.partial(revise, counts) for counts in (False, True)),
        "securities": (lambda: _raise(securities.method_refusal(plan)),),
        "withdrawal": (lambda: withdrawals.check_withdrawable(session, plan, today),),
    }


def _raise(refusal: BankError | None) -> None:
    if refusal is not None:
        raise refusal


def _refusal(checks: Sequence[Callable[[], object]]) -> BankError | None:
    """``None`` when one of ``checks`` passes, else the first one's refusal."""
    first: BankError | None = None
    for check in checks:
        try:
            check()
        except BankError as refused:
            first = first or refused
            continue
        return None
    return first
