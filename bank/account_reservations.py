"""The reservations held against an account, each with the plan it is for, as much of the plan
as its holder may know: project, LGU and status (the whole plan is the LGU's and the board's)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Select, bindparam, select
from sqlalchemy.orm import Session

from bank import credits, keyset, parties, plans, reservations
from bank.access import Actor
from bank.plan_tables import Plan
from bank.reservation_tables import Reservation
from ledger import clock
from ledger.db import Database


@dataclass(frozen=True)
class ReservedFor:
    """The plan a reservation is for, as the account's holder may see it."""

    id: str
    project: str
    lgu_name: str
    status: str


@dataclass(frozen=True)
class AccountReservation(reservations.ReservationView):
    """A reservation against the account, with the plan it is for."""

    plan: ReservedFor


@dataclass(frozen=True)
class AccountReservations:
    """Every reservation made against an account, oldest first."""

    items: tuple[AccountReservation, ...]


# each reservation with its class (so that ``reservation_view`` finds it loaded), its plan and the
# plan's LGU's name (foreign keys: inner joins)
_OF_ACCOUNT = (
    select(Reservation, credits.CreditClass, Plan, parties.Lgu.name)
    .join(credits.CreditClass, credits.CreditClass.code == Reservation.credit_class)
    .join(Plan, Plan.id == Reservation.plan_id)
    .join(parties.Lgu, parties.Lgu.id == Plan.lgu_id)
    .where(Reservation.account_id == bindparam("account_id"))
    .order_by(Reservation.created_at, Reservation.id)
)
_Rows = Select[Reservation, credits.CreditClass, Plan, str]


def account_reservations(db: Database, actor: Actor, account_id: str) -> AccountReservations:
    """Every reservation made against the account, oldest first (board, or its holder; another
    caller hears ``not_found`` for the account); ``page_of_account_reservations`` pages them."""
    with db.transaction() as session:
        account = parties.visible_account(session, actor, account_id)
        return AccountReservations(tuple(_listed(session, account.id, _OF_ACCOUNT)))


def page_of_account_reservations(
    db: Database, actor: Actor, account_id: str, limit: int, after: str | None = None
) -> list[AccountReservation]:
    """Up to ``limit + 1`` of ``account_reservations``'s reservations (the extra one says there
    are more), after the reservation ``after`` in their order (by ``created_at``, then id; an
    index holds it, so a later page reads no more rows than the first).  The cursor's
    reservation is looked up among the account's own: another account's, or none at all, is
    ``UnknownCursor``."""
    with db.transaction() as session:
        account = parties.visible_account(session, actor, account_id)
        query = _OF_ACCOUNT.limit(limit + 1)
        if after is not None:
            R = Reservation  # noqa: N806
            scope = R.account_id == account.id
            query = query.where(keyset.listed_after(session, R.created_at, R.id, after, scope))
        return _listed(session, account.id, query)


def _listed(session: Session, account_id: str, query: _Rows) -> list[AccountReservation]:
    """The reservations ``query`` reads (``_OF_ACCOUNT``'s rows) for the account, as listed."""
    rows = session.execute(query, {"account_id": account_id}).all()
    listed = {plan.id: (plan, lgu_name) for _row, _class, plan, lgu_name in rows}
    state_of = plans.states(session, [plan for plan, _ in listed.values()], clock.today())
    plan_of = {
        plan_id: ReservedFor(plan_id, plan.project, lgu_name, state_of[plan_id].status)
        for plan_id, (plan, lgu_name) in listed.items()
    }
    views = reservations.reservation_views(session, [row for row, *_ in rows])
    return [AccountReservation(**vars(view), plan=plan_of[view.plan_id]) for view in views]
