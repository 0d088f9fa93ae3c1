"""``ledger_open_pending`` against the pending transfers it indexes, in one statement.

The index is derived: one row per account of each pending transfer not yet resolved (no release
entry resolves it), with the debits and credits its pending entries put on that account and the
expiry its header holds (a chained column).  Reads subtract, and writers expire, the rows whose
expiry has passed, so a row edited there frees reserved credits early (or keeps them held); a
row missing, extra, or with other sums or expiry than its transfer's is a break naming the
transfer.  The expected rows and the stored ones are joined by (transaction, account), in full.

A check since a checkpoint compares every stored row (the index holds the open reservations
only) and looks for missing rows among the transfers written since; an unresolved pending
transfer from before the checkpoint whose every row was removed is left to the full pass.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, and_, case, exists, func, or_, select
from sqlalchemy.orm import aliased

from ledger.schema import (
    PHASE_PENDING,
    LedgerEntry,
    LedgerOpenPending,
    LedgerTransaction,
)
from ledger.verify_report import Break

E = LedgerEntry.__table__.c
T = LedgerTransaction.__table__.c
O = LedgerOpenPending.__table__.c  # noqa: E741
_RELEASE = aliased(LedgerEntry)


def _expected(after: int | None) -> Any:
    """Per unresolved pending transfer (all, or those after ``after`` and those indexed) and
    account: its pending entries' debits and credits, and its header's expiry."""
    scope = [] if after is None else [or_(T.id > after, T.id.in_(select(O.transaction_id)))]
    debits = func.sum(case((E.amount < 0, -E.amount), else_=0))
    credits = func.sum(case((E.amount > 0, E.amount), else_=0))
    return (
        select(
            E.transaction_id,
            E.account_id,
            debits.label("debits"),
            credits.label("credits"),
            T.expires_at,
        )
        .select_from(
            LedgerEntry.__table__.join(LedgerTransaction.__table__, T.id == E.transaction_id)
        )
        .where(
            T.pending.is_(True),
            E.phase == PHASE_PENDING,
            ~exists().where(_RELEASE.resolves_id == T.id),
            *scope,
        )
        .group_by(E.transaction_id, E.account_id, T.expires_at)
        .subquery()
    )


def first_wrong(connection: Connection, after: int | None = None) -> Break | None:
    """The first (by transaction, account) row of ``ledger_open_pending`` missing, extra or
    other than its pending transfer says; ``after``: a checkpoint's largest transaction id, to
    look for missing rows only among the transfers written since."""
    x = _expected(after)
    same = and_(x.c.transaction_id == O.transaction_id, x.c.account_id == O.account_id)
    tx = func.coalesce(x.c.transaction_id, O.transaction_id)
    account = func.coalesce(x.c.account_id, O.account_id)
    row = connection.execute(
        select(
            tx,
            account,
            x.c.transaction_id.is_not(None),
            O.transaction_id.is_not(None),
            x.c.debits,
            x.c.credits,
            x.c.expires_at,
            O.debits,
            O.credits,
            O.expires_at,
        )
        .select_from(x.join(LedgerOpenPending.__table__, same, full=True))
        .where(
            x.c.transaction_id.is_(None)
            | O.transaction_id.is_(None)
            | (x.c.debits != O.debits)
            | (x.c.credits != O.credits)
            | x.c.expires_at.is_distinct_from(O.expires_at)
        )
        .order_by(tx, account)
        .limit(1)
    ).first()
    if row is None:
        return None
    transaction_id, account_id, expected, stored = int(row[0]), int(row[1]), row[2], row[3]
    where = f"pending transfer {transaction_id} on account {account_id}"
    if not stored:
        detail = f"ledger_open_pending has no row of unresolved {where}"
    elif not expected:
        detail = (
            f"ledger_open_pending holds a row of transaction {transaction_id} on account "
            f"{account_id}, which is no unresolved pending transfer with an entry there"
        )
    else:
        detail = (
            f"ledger_open_pending's row of {where} holds debits {row[7]}, credits {row[8]}, "
            f"expiry {row[9]}; its entries and header say {row[4]}, {row[5]}, {row[6]}"
        )
    return Break("open_pending", detail, transaction_id, account_id=account_id)
