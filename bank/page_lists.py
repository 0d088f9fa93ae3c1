"""The pages' lists of accounts, plans, payments and securities: in pages by keyset (after the
last row shown), filtered, each row with the names people know beside the ids links need.

Who lists what is ``bank.policy``'s, as in the API: the board every record; a holder its own
accounts; an LGU its own plans and their payments and securities.  (Holders, LGUs and bank sites
are listed by ``bank.party_lists``, the board's.)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.orm import Session

from bank import homes, keyset, listing_filters, plans, policy
from bank.access import Actor
from bank.errors import Forbidden
from bank.homes import DUE_SOON_DAYS as DUE_SOON_DAYS
from bank.homes import (
    AccountLine,
    PlanLine,
    SecurityLine,
    account_lines,
    due_within,
    expiring_securities,
    plan_lines,
)
from bank.money_tables import Payment
from bank.party_tables import BankAccount, Holder, Lgu
from bank.plan_tables import Plan
from ledger.db import Database


@dataclass(frozen=True)
class PlanList:
    """A page of plans, and (on the first page) those with a deadline in the next
    ``DUE_SOON_DAYS`` days, soonest first: the first ``homes.SHORTCUTS`` of them, as the LGU's
    home lists them (``more_due``: more are, listed in full by ``due_plans``)."""

    due_soon: list[PlanLine]
    items: list[PlanLine]
    more_due: bool = False


@dataclass(frozen=True)
class PaymentLine:
    """A payment as a list shows it, with the plan it is for."""

    id: str
    kind: str
    amount_cents: int
    payer: str
    received_on: date
    status: str
    plan_id: str | None
    plan_project: str
    lgu_name: str
    created_at: datetime


def accounts(
    db: Database,
    actor: Actor,
    *,
    q: str | None,
    holder_id: str | None,
    after: str | None,
    limit: int,
) -> list[AccountLine]:
    """Up to ``limit + 1`` accounts in opening order after the account ``after``: every account
    (or ``holder_id``'s) for the board, its own for a holder; ``q`` is text the number, the
    account's name or the holder's name contains."""
    if not policy.lists_accounts(actor):
        raise Forbidden("only board staff and holders list accounts")
    own = policy.own_holder(actor)
    listed = holder_id if own is None else own
    A = BankAccount  # noqa: N806
    query = select(A, Holder.name).join(Holder, Holder.id == A.holder_id)
    if listed is not None:
        query = query.where(A.holder_id == listed)
    if q:
        query = query.where(
            or_(
                A.number.icontains(q, autoescape=True),
                func.coalesce(A.name, "").icontains(q, autoescape=True),
                Holder.name.icontains(q, autoescape=True),
            )
        )
    if after is not None:
        scope = [] if listed is None else [A.holder_id == listed]
        query = query.where(keyset.after(A.created_at, A.id, after, *scope))
    query = query.order_by(A.created_at, A.id).limit(limit + 1)
    with db.transaction() as session:
        rows = session.execute(query).all()
        return account_lines(session, [(account, name) for account, name in rows])


def plan_list(
    db: Database,
    actor: Actor,
    *,
    q: str | None,
    status: str | None,
    after: str | None,
    limit: int,
    today: date,
) -> PlanList:
    """Up to ``limit + 1`` plans the caller lists (``plans.list_plans``: the board all, an LGU
    its own), oldest first after the plan ``after``, whose applicant or project contains ``q``,
    of ``status`` today when given; and on the first page, the first of them due soon."""
    _check_plans(actor)
    where = listing_filters.plans(q)
    found: list[PlanLine] = []
    with db.transaction() as session:
        due = [] if after else _due_soon(session, actor, today, DUE_SOON_DAYS, where, status)
        cursor = after
        while len(found) <= limit:
            rows = plans.list_plans(session, actor, limit + 1, where, cursor)
            lines = plan_lines(session, rows, today)
            found += [line for line in lines if status in (None, line.status)]
            if len(rows) <= limit:
                break
            cursor = rows[-1].id
    shortcuts = homes.SHORTCUTS
    return PlanList(due[:shortcuts], found[: limit + 1], len(due) > shortcuts)


def _due_soon(
    session: Session,
    actor: Actor,
    today: date,
    within: int,
    where: list[ColumnElement[bool]],
    status: str | None,
) -> list[PlanLine]:
    """``homes.due_within``, of ``status`` today when given."""
    due = due_within(session, actor, today, within, where)
    return [line for line in due if status in (None, line.status)]


def due_plans(
    db: Database,
    actor: Actor,
    *,
    within: int,
    q: str | None,
    after: str | None,
    limit: int,
    today: date,
    status: str | None = None,
) -> list[PlanLine]:
    """Up to ``limit + 1`` plans the caller lists (the board all, an LGU its own) whose
    applicant or project contains ``q``, of ``status`` today when given, with a deadline by
    ``today + within`` days (overdue notices too), soonest first as the homes list them
    (``homes.due_within``), after the plan ``after``.  The order is computed from each plan's
    deadlines, not stored: when ``after`` is no longer due (its deadline met since), the list
    starts again from the top, so that no plan due is passed over."""
    _check_plans(actor)
    with db.transaction() as session:
        due = _due_soon(session, actor, today, within, listing_filters.plans(q), status)
    ids = [line.id for line in due]
    start = ids.index(after) + 1 if after in ids else 0
    return due[start : start + limit + 1]


def payments(
    db: Database, actor: Actor, *, status: str | None, after: str | None, limit: int
) -> list[PaymentLine]:
    """Up to ``limit + 1`` payments the caller sees (board: all; an LGU: its plans'), oldest
    first after the payment ``after``, of ``status`` when given."""
    _check_plans(actor)
    P = Payment  # noqa: N806
    query = (
        select(P, Plan.project, Lgu.name)
        .join(Plan, Plan.id == P.plan_id)
        .join(Lgu, Lgu.id == Plan.lgu_id)
        .where(*listing_filters.payments(status))
    )
    if not actor.is_board:
        query = query.where(Plan.lgu_id == actor.lgu_id)
    if after is not None:
        scope = plans.of_plans(P.plan_id, actor)
        query = query.where(keyset.after(P.created_at, P.id, after, *scope))
    query = query.order_by(P.created_at, P.id).limit(limit + 1)
    with db.transaction() as session:
        rows = session.execute(query).all()
        return [_payment_line(row, project, name) for row, project, name in rows]


def _payment_line(row: Payment, project: str, lgu_name: str) -> PaymentLine:
    return PaymentLine(
        id=row.id,
        kind=row.kind,
        amount_cents=row.amount_cents,
        payer=row.payer,
        received_on=row.received_on,
        status=row.status,
        plan_id=row.plan_id,
        plan_project=project,
        lgu_name=lgu_name,
        created_at=row.created_at,
    )


def securities(
    db: Database,
    actor: Actor,
    *,
    expiring_days: int | None,
    status: str | None,
    after: str | None,
    limit: int,
    today: date,
) -> list[SecurityLine]:
    """Up to ``limit + 1`` securities the caller sees (board: all; an LGU: its plans'), soonest
    expiry first after the security ``after``: held ones expiring within ``expiring_days`` when
    given, else of ``status`` today (any when ``None``)."""
    _check_plans(actor)
    with db.transaction() as session:
        return expiring_securities(
            session, actor, today, expiring_days, status, limit + 1, after=after
        )


def _check_plans(actor: Actor) -> None:
    if not policy.lists_plans(actor):
        raise Forbidden("only board staff and LGUs list plans, payments and securities")
