"""Closing a bank account (board): only an empty one, with nothing reserved against it and
nothing an appeal could still return to it.

A closed account accepts no deposit, sends nothing and receives nothing (``bank.deposits``,
``bank.transfers``), and the board never changes its status again.  Credits it gave to a plan's
withdrawal go back to their lots if an appeal reverses the plan's approval (Subd. 9), so it is
not closed while any plan they went to is not yet final; and should a petition mailed in time
reach the board after that (``bank.appeals``), a reversal reopens the account it returns
credits to (``bank.withdrawals.reverse_for_plan``) rather than leave them where nothing can
move them.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from bank import credits, parties, plans, policy, reservations
from bank.access import Actor
from bank.accounts import AccountView, account_view
from bank.errors import Conflict
from bank.plan_tables import Plan
from bank.withdrawal_tables import Withdrawal, WithdrawalAllocation
from bank.wording import sqft
from ledger import clock
from ledger.db import Database


def close_account(db: Database, actor: Actor, account_id: str) -> AccountView:
    """Close the account (board): ``conflict`` if it is closed already, holds any posted credits
    or has a pending reservation; nothing changes then."""
    policy.require_board(actor, "close accounts")
    with db.transaction() as session:
        return account_view(session, _close(session, account_id, actor))


def _close(session: Session, account_id: str, actor: Actor) -> parties.BankAccount:
    """Mark the account closed, after checking it is empty.

    ``set_account_status`` locks the row ``FOR UPDATE`` before anything is checked: a transfer
    into the account confirms it is not closed under ``FOR KEY SHARE`` as its last statement,
    so it either committed before (and the balance below shows it) or is refused.
    """
    account = parties.set_account_status(session, account_id, "closed", actor)
    posted = sum(item.posted_sqft for item in credits.lots_of(session, account))
    if posted:
        raise Conflict(
            f"account {account.number} holds {sqft(posted)} of credits: transfer them first",
            posted_sqft=posted,
        )
    pending = pending_reservations(session, account_id)
    if pending:
        raise Conflict(
            f"account {account.number} has {len(pending)} pending reservation(s): void them first",
            reservation_ids=[r.id for r in pending],
        )
    appealable = plans_not_final(session, account_id)
    if appealable:
        raise Conflict(
            f"account {account.number} gave credits to the withdrawals of plan(s) not yet final: "
            "an appeal may still return them (Subd. 9); close it once the plans are final",
            plan_ids=appealable,
        )
    return account


def plans_not_final(session: Session, account_id: str) -> list[str]:
    """The plans not yet final whose withdrawals, not reversed, drew on the account's credits."""
    listed = list(
        session.execute(
            select(Plan)
            .where(
                Plan.id.in_(
                    select(Withdrawal.plan_id)
                    .join(WithdrawalAllocation, WithdrawalAllocation.withdrawal_id == Withdrawal.id)
                    .join(
                        reservations.Reservation,
                        reservations.Reservation.id == WithdrawalAllocation.reservation_id,
                    )
                    .where(
                        reservations.Reservation.account_id == account_id,
                        Withdrawal.reversal_transaction_id.is_(None),
                    )
                )
            )
            .order_by(Plan.id)
        ).scalars()
    )
    state_of = plans.states(session, listed, clock.today())
    return [plan.id for plan in listed if state_of[plan.id].status != "final"]


def pending_reservations(session: Session, account_id: str) -> list[reservations.Reservation]:
    """The account's reservations still pending."""
    rows = session.execute(
        select(reservations.Reservation).where(reservations.Reservation.account_id == account_id)
    ).scalars()
    return [r for r in rows if reservations.status_of(session, r) == "pending"]
