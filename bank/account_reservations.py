"""The reservations held against an account, each with the plan it is for, as much of the plan
as its holder may know: project, LGU and status (the whole plan is the LGU's and the board's)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bank import credits, parties, plans, reservations
from bank.access import Actor
from bank.plan_tables import Plan


def account_reservations(session: Session, actor: Actor, account_id: str) -> list[dict[str, Any]]:
    """Every reservation made against the account, oldest first (board, or its holder; another
    caller hears ``not_found`` for the account)."""
    account = parties.visible_account(session, actor, account_id)
    rows = session.execute(
        select(reservations.Reservation)
        .where(reservations.Reservation.account_id == account.id)
        .order_by(reservations.Reservation.created_at, reservations.Reservation.id)
    ).scalars()
    plan_summaries: dict[str, dict[str, Any]] = {}
    items = []
    for row in rows:
        if row.plan_id not in plan_summaries:
            plan_summaries[row.plan_id] = plan_summary(session, row.plan_id)
        items.append(_item(session, row, plan_summaries[row.plan_id]))
    return items


def plan_summary(session: Session, plan_id: str) -> dict[str, Any]:
    """``{"id", "project", "lgu_name", "status"}`` of a plan."""
    plan = session.get(Plan, plan_id)
    assert plan is not None  # a reservation's plan (foreign key)
    lgu = parties.get_lgu(session, plan.lgu_id)
    return {
        "id": plan.id,
        "project": plan.project,
        "lgu_name": lgu.name,
        "status": plans.state(session, plan).status,
    }


def _item(session: Session, row: reservations.Reservation, plan: dict[str, Any]) -> dict[str, Any]:
    klass = session.get(credits.CreditClass, row.credit_class)
    assert klass is not None
    return {
        "id": row.id,
        "account_id": row.account_id,
        "credit_class": credits.class_dict(klass),
        "lot_id": row.lot_id,
        "amount_sqft": row.amount_sqft,
        "expires_on": row.expires_on,
        "status": reservations.status_of(session, row),
        "created_at": row.created_at,
        "plan": plan,
    }
