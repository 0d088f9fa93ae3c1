"""A deposit as the API shows it: per action, the cap that applied and the lot it made, and the
reversal that undid it, if any."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from sqlalchemy import select
from sqlalchemy.orm import Session

from bank import credits, parties, policy
from bank.access import Actor
from bank.deposit_tables import Deposit, DepositAction, DepositReversal
from bank.errors import NotFound
from ledger.db import Database


@dataclass(frozen=True)
class DepositCredit:
    """One action of a deposit: the credit it earned, under which cap, into which lot."""

    category: str
    area_sqft: int
    credit_sqft: int
    cap_sqft: int
    restricted: bool
    credit_class: credits.CreditClass
    lot_id: str


@dataclass(frozen=True)
class ReversalView:
    """The compensating transaction that undid a deposit."""

    transaction_id: str
    effective_on: date
    reason: str


@dataclass(frozen=True)
class DepositView:
    """A deposit with its credits and its reversal (``None`` while it stands)."""

    id: str
    account_id: str
    bank_site_id: str
    transaction_id: str
    effective_on: date
    ruleset: str
    credits: list[DepositCredit]
    total_credit_sqft: int
    reversal: ReversalView | None


def show_deposit(db: Database, actor: Actor, deposit_id: str) -> DepositView:
    """The deposit (board, or the holder of its account), with its reversal if any."""
    with db.transaction() as session:
        return deposit_view(session, get_deposit(session, actor, deposit_id))


def get_deposit(session: Session, actor: Actor, deposit_id: str) -> Deposit:
    """The deposit, if the caller may see it (board, or the holder of its account)."""
    deposit = session.get(Deposit, deposit_id)
    account = session.get(parties.BankAccount, deposit.account_id) if deposit else None
    if deposit is None or not policy.sees_holdings(actor, account.holder_id if account else None):
        raise NotFound(f"no deposit {deposit_id}")
    return deposit


def deposit_view(session: Session, deposit: Deposit) -> DepositView:
    """``deposit`` with its actions, in request order, and its reversal."""
    actions = session.execute(
        select(DepositAction)
        .where(DepositAction.deposit_id == deposit.id)
        .order_by(DepositAction.position)
    ).scalars()
    return DepositView(
        id=deposit.id,
        account_id=deposit.account_id,
        bank_site_id=deposit.bank_site_id,
        transaction_id=str(deposit.transaction_id),
        effective_on=deposit.effective_on,
        ruleset=deposit.ruleset,
        credits=[
            DepositCredit(
                category=action.category,
                area_sqft=action.area_sqft,
                credit_sqft=action.credit_sqft,
                cap_sqft=action.cap_sqft,
                restricted=action.restricted,
                credit_class=credits.get_class(session, action.credit_class),
                lot_id=action.lot_id,
            )
            for action in actions
        ],
        total_credit_sqft=deposit.total_credit_sqft,
        reversal=_reversal(session.get(DepositReversal, deposit.id)),
    )


def _reversal(row: DepositReversal | None) -> ReversalView | None:
    if row is None:
        return None
    return ReversalView(str(row.transaction_id), row.effective_on, row.reason)
