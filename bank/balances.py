"""What an account holds: balances per credit class (now and as of a date) and its entries.

``available = posted - reserved - frozen`` (docs/http.md, ``GET /accounts/{account_id}``): frozen
credits are the posted, unreserved credits of a frozen account or of lots from a frozen bank
site.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

import ledger
from bank import credits, parties
from bank.access import Actor
from ledger import verification
from ledger.db import Database
from ledger.schema import PHASE_POSTED, LedgerEntry, LedgerTransaction


@dataclass(frozen=True)
class ClassBalance:
    """What an account holds of one credit class now, in square feet."""

    credit_class: credits.CreditClass
    posted_sqft: int
    reserved_sqft: int
    frozen_sqft: int
    available_sqft: int


@dataclass(frozen=True)
class PastClassBalance:
    """What an account held of one credit class at the end of a past day (by effective date)."""

    credit_class: credits.CreditClass
    posted_sqft: int
    reserved_sqft: int
    available_sqft: int


@dataclass(frozen=True)
class BalancesAsOf:
    """``GET /accounts/{id}/balances?as_of=``."""

    as_of: date
    balances: list[PastClassBalance]


def balance_rows(session: Session, account: parties.BankAccount) -> list[ClassBalance]:
    """One row per credit class held: posted, reserved, frozen and available square feet."""
    return class_rows_of(session, [account])[account.id]


def _by_class(
    lots: Sequence[credits.LotBalance], classes: dict[str, credits.CreditClass]
) -> list[ClassBalance]:
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for item in lots:
        row = totals[item.lot.credit_class]
        row[0] += item.posted_sqft
        row[1] += item.reserved_sqft
        row[2] += item.frozen_sqft
        row[3] += item.available_sqft
    return [
        ClassBalance(classes[code], posted, reserved, frozen, available)
        for code, (posted, reserved, frozen, available) in sorted(totals.items())
    ]


@dataclass(frozen=True)
class Totals:
    """What an account holds now over every credit class, in square feet."""

    posted_sqft: int
    reserved_sqft: int
    available_sqft: int


def totals_of(session: Session, accounts: Sequence[parties.BankAccount]) -> dict[str, Totals]:
    """Each of ``accounts``' totals over every credit class, by account id (``class_rows_of``
    summed)."""
    return {
        account_id: Totals(
            sum(row.posted_sqft for row in rows),
            sum(row.reserved_sqft for row in rows),
            sum(row.available_sqft for row in rows),
        )
        for account_id, rows in class_rows_of(session, accounts).items()
    }


def class_rows_of(
    session: Session, accounts: Sequence[parties.BankAccount]
) -> dict[str, list[ClassBalance]]:
    """``balance_rows`` of each of ``accounts``, by account id, read with three queries for all
    of them (their lots with their sites' frozen flags, the lots' balances, their classes)."""
    rows = session.execute(
        select(credits.Lot, parties.BankSite.frozen)
        .join(parties.BankSite, parties.BankSite.id == credits.Lot.bank_site_id)
        .where(credits.Lot.account_id.in_([account.id for account in accounts]))
    ).all()
    held = ledger.balances(session, [lot.ledger_account_id for lot, _ in rows])
    classes = credits.classes(session, (lot.credit_class for lot, _ in rows))
    lots_by_account: dict[str, list[tuple[credits.Lot, bool]]] = defaultdict(list)
    for lot, site_frozen in rows:
        lots_by_account[lot.account_id].append((lot, bool(site_frozen)))
    return {
        account.id: _by_class(
            credits.with_balances(account, lots_by_account[account.id], held), classes
        )
        for account in accounts
    }


def balances_as_of(db: Database, actor: Actor, account_id: str, day: date) -> BalancesAsOf:
    """Posted and reserved per credit class at the end of ``day`` (by effective date), for the
    board or the account's holder."""
    with db.transaction() as session:
        account = parties.visible_account(session, actor, account_id)
        return BalancesAsOf(day, past_balances(session, account, day))


def past_balances(
    session: Session, account: parties.BankAccount, day: date
) -> list[PastClassBalance]:
    """The account's balances per credit class at the end of ``day``."""
    lots = list(
        session.execute(select(credits.Lot).where(credits.Lot.account_id == account.id)).scalars()
    )
    past = ledger.balances_as_of(session, [lot.ledger_account_id for lot in lots], day)
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for lot in lots:
        balance = past[lot.ledger_account_id]
        if balance.posted or balance.reserved_debits:
            totals[lot.credit_class][0] += balance.posted
            totals[lot.credit_class][1] += balance.reserved_debits
    classes = credits.classes(session, totals)
    return [
        PastClassBalance(classes[code], posted, reserved, posted - reserved)
        for code, (posted, reserved) in sorted(totals.items())
    ]


# --- entries ----------------------------------------------------------------------------------

E, T, L = LedgerEntry, LedgerTransaction, credits.Lot


def posted_entries_query(account_id: str) -> Any:
    """An account's posted entries with their transaction and lot (unordered)."""
    return (
        select(
            E.id,
            E.transaction_id,
            T.kind,
            L.credit_class,
            L.id.label("lot_id"),
            E.amount,
            E.effective_on,
            T.recorded_at,
            T.memo,
        )
        .join(L, L.ledger_account_id == E.account_id)
        .join(T, T.id == E.transaction_id)
        .where(L.account_id == account_id, E.phase == PHASE_POSTED)
    )


def _class_totals_through(session: Session, account_id: str, entry_id: int) -> dict[str, int]:
    rows = session.execute(
        select(L.credit_class, func.sum(E.amount))
        .join(L, L.ledger_account_id == E.account_id)
        .where(L.account_id == account_id, E.phase == PHASE_POSTED, E.id <= entry_id)
        .group_by(L.credit_class)
    ).all()
    return {code: int(total or 0) for code, total in rows}


def entries_page(
    db: Database, actor: Actor, account_id: str, limit: int, before_id: int | None
) -> list[dict[str, Any]]:
    """Up to ``limit + 1`` posted entries of an account the caller may see (board, or its
    holder), newest first, each with the class balance after it.

    The rows and the class totals their balances count down from are two statements, read on
    one snapshot (``_snapshot``): on PostgreSQL's READ COMMITTED each statement would see the
    writes committed before it, and an entry committed between them (an id below the page's
    newest, taken by a write that committed late) would be in the totals and not among the
    rows, every balance below it off by its amount."""
    with _snapshot(db) as session:
        account = parties.visible_account(session, actor, account_id)
        query = posted_entries_query(account.id).order_by(E.id.desc()).limit(limit + 1)
        if before_id is not None:
            query = query.where(E.id < before_id)
        rows = session.execute(query).all()
        if not rows:
            return []
        running = _class_totals_through(session, account.id, rows[0].id)
        return list(_with_balance_after(rows, running))


def entry_stream(db: Database, actor: Actor, account_id: str) -> Iterator[dict[str, Any]]:
    """Every posted entry of an account the caller may see, newest first, for CSV.

    Who may see the account is settled before this returns (``not_found`` is raised here, not
    while streaming); the entries are then read on a connection of their own as they are sent,
    on one snapshot (the totals, then the rows: ``entries_page`` says why).
    """
    with db.transaction() as session:
        account = parties.visible_account(session, actor, account_id)
    return _streamed_entries(db, account.id)


def _streamed_entries(db: Database, account_id: str) -> Iterator[dict[str, Any]]:
    with _snapshot(db) as session:
        yield from _all_entries(session, account_id)


@contextmanager
def _snapshot(db: Database) -> Iterator[Session]:
    """A read-only session whose statements all see one moment (PostgreSQL: REPEATABLE READ;
    SQLite: a reader's WAL snapshot, which takes no write lock)."""
    with verification.snapshot_reader(db) as connection, Session(bind=connection) as session:
        yield session


def _all_entries(session: Session, account_id: str) -> Iterator[dict[str, Any]]:
    """Every posted entry, newest first, streamed."""
    newest = session.execute(
        select(func.max(E.id))
        .join(L, L.ledger_account_id == E.account_id)
        .where(L.account_id == account_id, E.phase == PHASE_POSTED)
    ).scalar()
    if newest is None:
        return
    running = _class_totals_through(session, account_id, newest)
    rows = session.execute(
        posted_entries_query(account_id).where(E.id <= newest).order_by(E.id.desc()),
        execution_options={"yield_per": 1000},
    )
    yield from _with_balance_after(rows, running)


def _with_balance_after(rows: Any, running: dict[str, int]) -> Iterator[dict[str, Any]]:
    for row in rows:
        balance_after = running.get(row.credit_class, 0)
        running[row.credit_class] = balance_after - row.amount
        yield {
            "entry_id": row.id,
            "transaction_id": str(row.transaction_id),
            "kind": row.kind,
            "credit_class": row.credit_class,
            "lot_id": row.lot_id,
            "amount_sqft": row.amount,
            "balance_after_sqft": balance_after,
            "effective_on": row.effective_on,
            "recorded_at": row.recorded_at,
            "memo": row.memo,
        }
