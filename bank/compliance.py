"""The board's LGU compliance report (Subd. 1 (c); docs/domain.md §4).

"If the local government unit fails to apply the rules ... the government unit is subject to
penalty as determined by the board": per LGU, over the plans first received in a period, how
many were decided in time, deemed approved, noticed late or not at all, and reversed on appeal,
and how many copies of their notices the LGU owes members of the public who asked and has not
mailed.  Everything is computed as of today from the recorded facts, like every deadline of a
plan: a notice is *missing* once its due date has passed with none mailed.

``copies_owed`` counts copies, not plans: each notice of a plan owed to one who asked for a copy
(``notices.owed_copies``) and not recorded as mailed to them since, one an earlier application
mailed too (a revision does not erase it, as below).

A deemed approval has no decision date to count Subd. 7's ten days from; the report counts them
from ``decision_due`` (choice), so that a deemed approval nobody was told of shows as missing.

A plan a revision counting as new superseded (Subd. 6 (c)) is one plan received, but each of its
applications had its own deadlines: what an earlier application missed, as of the day it was
superseded, still counts against the LGU (a revision does not erase it); ``decided_in_time`` is
the current application's.  Its ``reversed_on_appeal`` counts an appeal decided after it was
superseded too: a petition mailed within its window may reach the board after the revision
(Subd. 9; ``plans.appealed_application``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bank import notices, parties, plans, policy
from bank.access import Actor
from bank.plan_record_tables import PlanApplication
from bank.plan_tables import Plan
from bank.reports import check_period
from ledger import clock
from ledger.db import Database

COUNTS = (
    "plans_received",
    "decided_in_time",
    "deemed_approved",
    "notices_late",
    "notices_missing",
    "decision_notices_late",
    "decision_notices_missing",
    "reversed_on_appeal",
)
#: the count of copies owed, after the plans' counts
COPIES_OWED = "copies_owed"


@dataclass(frozen=True)
class ComplianceReport:
    """The report over the plans first received from ``from_`` to ``to``, as of ``as_of``."""

    from_: date
    to: date
    as_of: date
    items: list[dict[str, Any]]


def report(db: Database, actor: Actor, start: date, end: date) -> ComplianceReport:
    """The LGU compliance report (board) for a period, both days included, as of today."""
    policy.require_board(actor, "see the LGU compliance report")
    check_period(start, end)
    today = clock.today()
    with db.transaction() as session:
        return ComplianceReport(start, end, today, lgu_compliance(session, start, end, today))


def lgu_compliance(session: Session, start: date, end: date, today: date) -> list[dict[str, Any]]:
    """One row per LGU that received a plan from ``start`` to ``end`` (both included)."""
    rows = list(
        session.execute(
            select(Plan)
            .where(Plan.first_received_on >= start, Plan.first_received_on <= end)
            .order_by(Plan.lgu_id, Plan.id)
        ).scalars()
    )
    found = plans.listing_facts(session, rows)
    state_of = plans.states(session, rows, today, found)
    earlier = plans.earlier_application_states(session, rows, found)
    owed = notices.owed_counts(session, rows)
    counts: dict[str, dict[str, int]] = defaultdict(
        lambda: dict.fromkeys((*COUNTS, COPIES_OWED), 0)
    )
    for plan in rows:
        counts[plan.lgu_id][COPIES_OWED] += owed[plan.id]
        hits = plan_counts(plan, state_of[plan.id], today)
        for application, state in earlier.get(plan.id, []):
            then = plan_counts(application, state, application.superseded_on)
            for name in EARLIER_COUNTS:
                hits[name] = hits[name] or then[name]
        for name, hit in hits.items():
            counts[plan.lgu_id][name] += int(hit)
    names = {
        lgu.id: lgu.name
        for lgu in session.execute(
            select(parties.Lgu).where(parties.Lgu.id.in_(list(counts)))
        ).scalars()
    }
    items = [
        {"lgu_id": lgu_id, "lgu_name": names.get(lgu_id, lgu_id), **row}
        for lgu_id, row in counts.items()
    ]
    return sorted(items, key=lambda item: (item["lgu_name"], item["lgu_id"]))


#: what an application a revision superseded adds to its plan's counts
EARLIER_COUNTS = tuple(name for name in COUNTS if name not in ("plans_received", "decided_in_time"))


def plan_counts(
    plan: Plan | PlanApplication, state: plans.PlanState, today: date
) -> dict[str, bool]:
    """What one plan (or one of its earlier applications) adds to its LGU's row, given its
    ``state`` as of ``today``."""
    due = state.deadlines
    deemed = plan.decided_on is None and today > due.decision_due
    notice_due = due.decision_notice_due  # a deemed approval's too (``timeline.deadlines``)
    noticed, mailed = plan.notice_mailed_on, plan.decision_notice_mailed_on
    return {
        "plans_received": True,
        # made by the deadline: its resolution adopted by then, where one carries it
        "decided_in_time": plan.decided_on is not None
        and (plan.decision_resolution_adopted_on or plan.decided_on) <= due.decision_due,
        "deemed_approved": deemed,
        "notices_late": noticed is not None and noticed > due.notice_due,
        "notices_missing": noticed is None and today > due.notice_due,
        "decision_notices_late": (
            mailed is not None and notice_due is not None and mailed > notice_due
        ),
        "decision_notices_missing": (
            mailed is None and notice_due is not None and today > notice_due
        ),
        "reversed_on_appeal": state.reversed_on_appeal,
    }
