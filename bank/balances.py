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

from sqlalchemy import func, select, tuple_
from sqlalchemy.orm import Session

import ledger
from bank import credits, parties
from bank.access import Actor
from ledger import sealer, verification
from ledger.db import Database
from ledger.schema import PHASE_POSTED, LedgerChainLink, LedgerEntry, LedgerTransaction


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
    frozen_sqft: int
    available_sqft: int


def totals_of(session: Session, accounts: Sequence[parties.BankAccount]) -> dict[str, Totals]:
    """Each of ``accounts``' totals over every credit class, by account id (``class_rows_of``
    summed)."""
    return {
        account_id: Totals(
            sum(row.posted_sqft for row in rows),
            sum(row.reserved_sqft for row in rows),
            sum(row.frozen_sqft for row in rows),
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
    """Posted and reserved per credit class at the end of ``day`` (by effective date), or now
    for today, for the board or the account's holder (the API refuses a later day)."""
    with db.transaction() as session:
        account = parties.visible_account(session, actor, account_id)
        return BalancesAsOf(day, past_balances(session, account, day))


def past_balances(
    session: Session, account: parties.BankAccount, day: date
) -> list[PastClassBalance]:
    """The account's balances per credit class at the end of ``day``, or now while ``day`` is
    today (a reservation expiring at its end still holds its credits): the rows
    ``GET /accounts/{id}`` showed then, one per class of the lots it had held by that day (a lot
    with an entry effective on or before it), a class all of whose credits had left being a row
    of zeros."""
    lots = list(
        session.execute(select(credits.Lot).where(credits.Lot.account_id == account.id)).scalars()
    )
    ledger_ids = [lot.ledger_account_id for lot in lots]
    past = ledger.balances_as_of(session, ledger_ids, day)
    held = _held_by(session, ledger_ids, day)
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for lot in lots:
        if lot.ledger_account_id not in held:
            continue  # the lot came to the account after ``day``
        balance = past[lot.ledger_account_id]
        totals[lot.credit_class][0] += balance.posted
        totals[lot.credit_class][1] += balance.reserved_debits
    classes = credits.classes(session, totals)
    return [
        PastClassBalance(classes[code], posted, reserved, posted - reserved)
        for code, (posted, reserved) in sorted(totals.items())
    ]


# --- entries ----------------------------------------------------------------------------------

E, T, L, C = LedgerEntry, LedgerTransaction, credits.Lot, LedgerChainLink

#: an entry's place among its account's entries: its transaction's ``seq`` in the hash chain,
#: then its own id
Place = tuple[int, int]


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


def entries_page(
    db: Database, actor: Actor, account_id: str, limit: int, before: Place | None
) -> list[dict[str, Any]]:
    """Up to ``limit + 1`` posted entries of an account the caller may see (board, or its
    holder), newest first by their place in the hash chain (those below ``before``, if given),
    each with the balance of its class after it.

    A write takes its entries' ids before it commits, so on PostgreSQL two writes to different
    lots of one account can commit in the other order to their ids; the chain's ``seq`` follows
    commit order, given by one sealer at a time (``ledger.chain``).  What is queued is sealed
    first, so every entry committed by then has its place; one committed later is chained above
    every place there is, never below a cursor already handed out.  A place never changes, and
    an entry's balance after is the sum of its class's entries at and below it, computed with it
    in the one statement that reads the page (``_entries``): the same on every read, and a
    page's balances lead into the next page's."""
    sealer.seal_committed(db)
    with _snapshot(db) as session:
        account = parties.visible_account(session, actor, account_id)
        rows = session.execute(_entries(account.id, before, limit + 1))
        return [_entry_item(row) for row in rows]


def _held_by(session: Session, ledger_ids: Sequence[int], day: date) -> set[int]:
    """Those of the lots' ledger accounts ``ledger_ids`` with an entry (of any phase) effective
    on or before ``day``: the lots the account held by then."""
    if not ledger_ids:
        return set()
    return set(
        session.execute(
            select(LedgerEntry.account_id)
            .where(LedgerEntry.account_id.in_(ledger_ids), LedgerEntry.effective_on <= day)
            .distinct()
        ).scalars()
    )


def entry_stream(db: Database, actor: Actor, account_id: str) -> Iterator[dict[str, Any]]:
    """Every posted entry of an account the caller may see, as ``entries_page`` orders and
    balances them, for CSV.

    Who may see the account is settled before this returns (``not_found`` is raised here, not
    while streaming), and what is queued is sealed; the entries are then read by one statement
    on a connection of their own as they are sent.
    """
    with db.transaction() as session:
        account = parties.visible_account(session, actor, account_id)
    sealer.seal_committed(db)
    return _streamed_entries(db, account.id)


def _streamed_entries(db: Database, account_id: str) -> Iterator[dict[str, Any]]:
    with _snapshot(db) as session:
        rows = session.execute(_entries(account_id), execution_options={"yield_per": 1000})
        yield from map(_entry_item, rows)


@contextmanager
def _snapshot(db: Database) -> Iterator[Session]:
    """A read-only session whose statements all see one moment (PostgreSQL: REPEATABLE READ;
    SQLite: a reader's WAL snapshot, which takes no write lock)."""
    with verification.snapshot_reader(db) as connection, Session(bind=connection) as session:
        yield session


def _entries(account_id: str, before: Place | None = None, limit: int | None = None) -> Any:
    """The account's chained posted entries below place ``before`` (all of them, without it),
    newest first, at most ``limit`` of them, each with its place, its transaction's kind, time
    and memo, and ``balance_after``: the sum of its class's entries at and below its place.

    Entries above ``before`` count in no balance below it, so they are not read.  An entry
    committed and not yet chained has no place: it is in no row and no balance, until the
    chain gives it one above every other.  The transactions are read for the rows kept only.
    """
    balance_after = func.sum(E.amount).over(
        partition_by=L.credit_class, order_by=(C.seq, E.id), rows=(None, 0)
    )
    placed = (
        select(
            C.seq,
            E.id,
            E.transaction_id,
            L.credit_class,
            L.id.label("lot_id"),
            E.amount,
            E.effective_on,
            balance_after.label("balance_after"),
        )
        .join(L, L.ledger_account_id == E.account_id)
        .join(C, C.transaction_id == E.transaction_id)
        .where(L.account_id == account_id, E.phase == PHASE_POSTED)
    )
    if before is not None:
        placed = placed.where(tuple_(C.seq, E.id) < tuple_(*before))
    if limit is not None:
        placed = placed.order_by(C.seq.desc(), E.id.desc()).limit(limit)
    rows = placed.subquery()
    return (
        select(rows, T.kind, T.recorded_at, T.memo)
        .join(T, T.id == rows.c.transaction_id)
        .order_by(rows.c.seq.desc(), rows.c.id.desc())
    )


def _entry_item(row: Any) -> dict[str, Any]:
    return {
        "seq": row.seq,
        "entry_id": row.id,
        "transaction_id": str(row.transaction_id),
        "kind": row.kind,
        "credit_class": row.credit_class,
        "lot_id": row.lot_id,
        "amount_sqft": row.amount,
        "balance_after_sqft": int(row.balance_after),  # PostgreSQL's sum of BIGINTs: NUMERIC
        "effective_on": row.effective_on,
        "recorded_at": row.recorded_at,
        "memo": row.memo,
    }
