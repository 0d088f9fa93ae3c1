"""The plans a holder may reserve an account's credits for, as its holder may know them: the
plans whose impact lies in the account's bank service area (or whose LGU approved replacement
outside it), newest first, without those denied.  A holder names such a plan when it reserves
(``bank.reservations``); the whole plan stays the LGU's and the board's (``bank.policy``)."""

from __future__ import annotations

from sqlalchemy import or_, select

from bank import keyset, parties, plans
from bank.access import Actor
from bank.account_reservations import ReservedFor
from bank.plan_tables import Plan
from bank.reservations import CLOSED_OUTCOMES
from ledger import clock
from ledger.db import Database

#: how many plans a choice offers, newest first
OFFERED = 50


def for_account(
    db: Database, actor: Actor, account_id: str, limit: int = OFFERED
) -> list[ReservedFor]:
    """The newest ``limit`` plans the account's credits may replace, less those denied (board,
    or the account's holder; another caller hears ``not_found`` for the account).  Denial is
    computed, so plans are read newest first in batches until ``limit`` of them are offered."""
    with db.transaction() as session:
        account = parties.visible_account(session, actor, account_id)
        query = (
            select(Plan, parties.Lgu.name)
            .join(parties.Lgu, parties.Lgu.id == Plan.lgu_id)
            .where(
                or_(
                    Plan.impact_service_area == account.service_area,
                    Plan.replacement_outside_service_area.is_(True),
                )
            )
            .order_by(Plan.created_at.desc(), Plan.id.desc())
            .limit(limit)
        )
        offered: list[ReservedFor] = []
        while len(offered) < limit:
            rows = session.execute(query).all()
            state_of = plans.states(session, [plan for plan, _ in rows], clock.today())
            offered += [
                ReservedFor(plan.id, plan.project, lgu_name, state_of[plan.id].status)
                for plan, lgu_name in rows
                if state_of[plan.id].outcome not in CLOSED_OUTCOMES
            ]
            if len(rows) < limit:
                break
            query = query.where(keyset.before(Plan.created_at, Plan.id, rows[-1][0].id))
        return offered[:limit]
