"""The plans a holder may reserve an account's credits for, as its holder may know them: the
plans whose impact lies in the account's bank service area (or whose LGU approved replacement
outside it), newest first, that a reservation can still serve (``serves``).  A holder names such
a plan when it reserves (``bank.reservations``); the whole plan stays the LGU's and the board's
(``bank.policy``)."""

from __future__ import annotations

from sqlalchemy import or_, select

from bank import credit_needs, keyset, parties, plans
from bank.access import Actor
from bank.account_reservations import ReservedFor
from bank.plan_tables import Plan
from ledger import clock
from ledger.db import Database

#: how many plans a choice offers, newest first
OFFERED = 50
#: how many batches of plans (``OFFERED`` each), newest first, a choice reads at most: an area
#: whose newest plans a reservation can no longer serve offers fewer than ``OFFERED``, and a
#: plan left out is named by its id (the reserve form's "another plan" field, or the API)
BATCHES = 4


def for_account(
    db: Database, actor: Actor, account_id: str, limit: int = OFFERED
) -> list[ReservedFor]:
    """The newest ``limit`` plans the account's credits may replace that a reservation can still
    serve (board, or the account's holder; another caller hears ``not_found`` for the account).

    Whether a plan can is computed from its state and withdrawals, so plans are read newest first
    in batches of ``limit`` until ``limit`` of them are offered, at most ``BATCHES`` batches: a
    batch reads as many statements for one plan as for ``limit`` of them."""
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
        for _batch in range(BATCHES):
            rows = session.execute(query).all()
            listed = [plan for plan, _ in rows]
            state_of = plans.states(session, listed, clock.today())
            met = credit_needs.met_portions_of(session, [plan.id for plan in listed])
            offered += [
                ReservedFor(plan.id, plan.project, lgu_name, state_of[plan.id].status)
                for plan, lgu_name in rows
                if serves(plan, state_of[plan.id], met[plan.id])
            ]
            if len(offered) >= limit or len(rows) < limit:
                break
            query = query.where(keyset.before(Plan.created_at, Plan.id, rows[-1][0].id))
        return offered[:limit]


def serves(plan: Plan, state: plans.PlanState, met: tuple[int, int]) -> bool:
    """Whether a reservation for ``plan`` can still serve it, a withdrawal for the plan taking its
    credits one day: the rule a reservation is refused by (``credit_needs.reservation_refusal``:
    not for a plan denied, nor for one whose requirement earlier withdrawals ``met`` in full,
    nor for one whose replacement is not bank credits), so that the choice offers what
    the API takes."""
    return credit_needs.reservation_refusal(plan, state, met) is None
