"""The plan use cases the API calls: each opens its unit of work, takes the plan's lock when it
changes the plan, and answers the plan as ``GET /plans/{id}`` shows it (``bank.plan_report``).

Who may do what is ``bank.policy``'s: an LGU records and acts on its own plans, the board on any
(naming the LGU of a plan it records); a plan the caller may not see is ``not_found``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import date

from sqlalchemy import ColumnElement
from sqlalchemy.orm import Session

from bank import plan_report, plans, policy
from bank.access import Actor
from bank.errors import Forbidden
from bank.plan_report import PlanReport
from bank.plan_tables import Plan
from bank.rules.ruleset import Ruleset
from ledger.db import Database


def record(db: Database, who: Actor, ruleset: Ruleset, request: plans.PlanRequest) -> PlanReport:
    """Record a replacement plan application: an LGU's own, or one the board names the LGU of."""
    _check_plan_party(who)
    lgu_id = policy.plan_lgu_for(who, request.lgu_id)
    with db.transaction() as session:
        plan = plans.create_plan(session, ruleset, replace(request, lgu_id=lgu_id))
        return plan_report.report(session, plan)


def show(db: Database, who: Actor, plan_id: str, today: date | None = None) -> PlanReport:
    """A plan as of ``today``: every deadline, its status, reservations, and whether the impact
    may proceed."""
    with db.transaction() as session:
        return plan_report.report(session, plans.visible_plan(session, who, plan_id), today)


def page(
    db: Database,
    who: Actor,
    limit: int,
    where: Iterable[ColumnElement[bool]] = (),
    status: str | None = None,
    after: str | None = None,
) -> list[PlanReport]:
    """Up to ``limit + 1`` plans listed after the plan ``after`` (the extra one says there are
    more), of ``status`` when given.  The status is computed, so the rows are read in keyset
    batches until enough of them have it.  The cursor's plan must be one the caller lists,
    whatever the filters (``plans.require_listed``: ``UnknownCursor`` otherwise)."""
    _check_plan_party(who)
    conditions = list(where)
    found: list[PlanReport] = []
    with db.transaction() as session:
        if after is not None:
            plans.require_listed(session, who, after)
        while len(found) <= limit:
            rows = plans.list_plans(session, who, limit + 1, conditions, after)
            found += _of_status(session, rows, status)
            if len(rows) <= limit:
                break
            after = rows[-1].id
    return found[: limit + 1]


def every(
    db: Database,
    who: Actor,
    where: Iterable[ColumnElement[bool]] = (),
    status: str | None = None,
    cursor: str | None = None,
) -> list[PlanReport]:
    """Every plan the caller lists (of ``status`` when given), oldest first: the CSV export.
    A ``cursor`` (a plan's id) is checked as a page checks it, ``UnknownCursor`` unless the
    caller lists that plan, and moves nothing: every plan is listed."""
    _check_plan_party(who)
    with db.transaction() as session:
        if cursor is not None:
            plans.require_listed(session, who, cursor)
        return _of_status(session, plans.list_plans(session, who, where=where), status)


def complete_replacement(db: Database, who: Actor, plan_id: str, completed_on: date) -> PlanReport:
    """Subd. 3: the project-specific replacement recorded complete."""
    return _change(
        db, who, plan_id, lambda s, p: plans.record_replacement_completed(s, p, completed_on)
    )


def require_appeal_security(
    db: Database, who: Actor, plan_id: str, amount_cents: int
) -> PlanReport:
    """Subd. 9: the security the LGU requires of a petitioner (before any petition)."""
    return _change(db, who, plan_id, lambda s, p: plans.require_appeal_security(s, p, amount_cents))


def _change(
    db: Database, who: Actor, plan_id: str, change: Callable[[Session, Plan], None]
) -> PlanReport:
    """Make ``change`` to a plan the caller sees (its LGU, or the board), locked."""
    with db.transaction() as session:
        plan = plans.visible_plan(session, who, plan_id, lock=True)
        change(session, plan)
        return plan_report.report(session, plan)


def _of_status(session: Session, rows: list[Plan], status: str | None) -> list[PlanReport]:
    reports = plan_report.reports(session, rows)
    return [report for report in reports if status in (None, report.status)]


def _check_plan_party(who: Actor) -> None:
    if not policy.lists_plans(who):
        raise Forbidden("only board staff and LGUs list and record plans")
