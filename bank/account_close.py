"""Closing a bank account (board): only an empty one, with nothing reserved against it.

A closed account accepts no deposit, sends nothing and receives nothing (``bank.deposits``,
``bank.transfers``), and never changes status again.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from bank import credits, parties, policy, reservations
from bank.access import Actor
from bank.accounts import AccountView, account_view
from bank.errors import Conflict
from ledger.db import Database


def close_account(db: Database, actor: Actor, account_id: str) -> AccountView:
    """Close the account (board): ``conflict`` if it is closed already, holds any posted credits
    or has a pending reservation; nothing changes then."""
    policy.require_board(actor, "close accounts")
    with db.transaction() as session:
        return account_view(session, _close(session, account_id))


def _close(session: Session, account_id: str) -> parties.BankAccount:
    """Mark the account closed, after checking it is empty.

    ``set_account_status`` locks the row ``FOR UPDATE`` before anything is checked: a transfer
    into the account confirms it is not closed under ``FOR KEY SHARE`` as its last statement,
    so it either committed before (and the balance below shows it) or is refused.
    """
    account = parties.set_account_status(session, account_id, "closed")
    posted = sum(item.posted_sqft for item in credits.lots_of(session, account))
    if posted:
        raise Conflict(
            f"account {account.number} holds {posted} sq ft of credits: transfer them first",
            posted_sqft=posted,
        )
    pending = pending_reservations(session, account_id)
    if pending:
        raise Conflict(
            f"account {account.number} has {len(pending)} pending reservation(s): void them first",
            reservation_ids=[r.id for r in pending],
        )
    return account


def pending_reservations(session: Session, account_id: str) -> list[reservations.Reservation]:
    """The account's reservations still pending."""
    rows = session.execute(
        select(reservations.Reservation).where(reservations.Reservation.account_id == account_id)
    ).scalars()
    return [r for r in rows if reservations.status_of(session, r) == "pending"]
