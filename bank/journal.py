"""The journal board staff audit: every sealed transaction in chain order, with its entries,
actor, keys, times and hashes (``GET /audit/journal``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from bank import credits
from bank.money_tables import PAYMENT_KINDS
from ledger.schema import LedgerAccount, LedgerChainLink, LedgerEntry, LedgerTransaction

C, T, E, A = LedgerChainLink, LedgerTransaction, LedgerEntry, LedgerAccount

#: every ``kind`` of ledger transaction the bank writes, the values ``?kind=`` takes: a kind
#: outside this list names no transaction, so the filter refuses it rather than answer nothing
#: (``tests/unit/test_journal_kinds.py`` checks every write names one of these)
KINDS = (
    "deposit",
    "deposit_reversal",
    "transfer",
    "reservation",
    "reservation_void",
    "expire",  # a reservation or security hold that ran out (``ledger.write``)
    "withdrawal",
    "withdrawal_reversal",
    "security_held",
    "security_drawn",
    "security_released",
    *(f"payment_{kind}" for kind in PAYMENT_KINDS),
    "payment_refunded",
    "payment_returned",
    "payment_reversed",  # a filing fee recorded in error (``bank.money.reverse_in_error``)
)


@dataclass(frozen=True)
class JournalFilter:
    """``?from=&to=&account_id=&kind=``; dates are effective dates, inclusive."""

    start: date | None = None
    end: date | None = None
    account_id: str | None = None
    kind: str | None = None


def _journal_query(filters: JournalFilter) -> Any:
    query = select(C.seq).join(T, T.id == C.transaction_id)
    if filters.start:
        query = query.where(T.effective_on >= filters.start)
    if filters.end:
        query = query.where(T.effective_on <= filters.end)
    if filters.kind:
        query = query.where(T.kind == filters.kind)
    if filters.account_id:
        touched = select(E.transaction_id).where(
            E.account_id.in_(_ledger_accounts(filters.account_id))
        )
        query = query.where(T.id.in_(touched))
    return query.order_by(C.seq)


def _ledger_accounts(account_id: str) -> Any:
    """A bank account's lot accounts, or a ledger account named by its id or code."""
    lots = select(credits.Lot.ledger_account_id).where(credits.Lot.account_id == account_id)
    direct = select(A.id).where(A.code == account_id)
    return lots.union(direct)


#: a journal item's columns, in the order ``_journal_item`` reads them, then an entry's
_TX = (C.seq, C.hash, C.prev_hash, T.id, T.kind, T.pending, T.expires_at, T.reverses_id)
_TX_MORE = (T.actor, T.request_id, T.idempotency_key, T.effective_on, T.recorded_at, T.memo)
_ENTRY = (A.code, E.asset, E.amount, E.phase, E.balance_after, E.slot, E.resolves_id)


def page(
    session: Session, filters: JournalFilter, limit: int, after_seq: int | None
) -> list[dict[str, Any]]:
    """Up to ``limit + 1`` sealed transactions in chain order (append-only: pages never shift)."""
    query = _journal_query(filters).with_only_columns(*_TX, *_TX_MORE).limit(limit + 1)
    if after_seq is not None:
        query = query.where(C.seq > after_seq)
    return _with_entries(session, session.execute(query).all())


def latest(session: Session, limit: int) -> list[dict[str, Any]]:
    """The ``limit`` most recently sealed transactions, newest first (the audit page's view)."""
    query = (
        _journal_query(JournalFilter())
        .with_only_columns(*_TX, *_TX_MORE)
        .order_by(None)
        .order_by(C.seq.desc())
        .limit(limit)
    )
    return _with_entries(session, session.execute(query).all())


def _with_entries(session: Session, rows: Any) -> list[dict[str, Any]]:
    items = [_journal_item(row) for row in rows]
    by_id = {row[3]: item for row, item in zip(rows, items, strict=True)}
    entries = session.execute(
        select(E.transaction_id, *_ENTRY)
        .join(A, A.id == E.account_id)
        .where(E.transaction_id.in_(list(by_id)))
        .order_by(E.id)
    )
    for row in entries:
        by_id[row[0]]["entries"].append(_entry_item(row[1:]))
    return items


#: transactions per batch of a streamed journal: a range of ``seq`` (the chain has no gaps)
STREAM_BATCH = 5000


def every(session: Session, filters: JournalFilter) -> Iterator[dict[str, Any]]:
    """Every transaction sealed when the stream starts that matches ``filters``, in chain order.

    Streamed in ranges of ``seq``, each read with its entries by one Core query into plain
    tuples (no ORM objects), so memory stays flat and a row costs little more than its text.
    """
    last = session.execute(select(func.max(C.seq))).scalar() or 0
    flat = (
        _journal_query(filters)
        .with_only_columns(*_TX, *_TX_MORE, *_ENTRY)
        .join(E, E.transaction_id == T.id)
        .join(A, A.id == E.account_id)
        .where(C.seq > bindparam("after"), C.seq <= bindparam("upto"))
        .order_by(C.seq, E.id)
    )
    connection = session.connection()  # Core rows: the ORM's result processing is not needed
    for after in range(0, last, STREAM_BATCH):
        rows = connection.execute(flat, {"after": after, "upto": min(after + STREAM_BATCH, last)})
        yield from _grouped(rows)


def _grouped(rows: Any) -> Iterator[dict[str, Any]]:
    """Flat (transaction, entry) rows, in chain order, as one journal item per transaction."""
    current: dict[str, Any] | None = None
    for row in rows:
        seq = row[0]
        if current is None or current["seq"] != seq:
            if current is not None:
                yield current
            current = _journal_item(row)
        current["entries"].append(_entry_item(row[14:]))
    if current is not None:
        yield current


def _journal_item(row: Any) -> dict[str, Any]:
    seq, digest, prev, tx_id, kind, pending, expires_at, reverses_id = row[:8]
    actor, request_id, key, effective_on, recorded_at, memo = row[8:14]
    return {
        "seq": seq,
        "transaction_id": str(tx_id),
        "kind": kind,
        "pending": pending,
        "expires_at": expires_at,
        "reverses_id": str(reverses_id) if reverses_id else None,
        "actor": actor,
        "request_id": request_id,
        "idempotency_key": key,
        "effective_on": effective_on,
        "recorded_at": recorded_at,
        "memo": memo,
        "hash": digest,
        "prev_hash": prev,
        "entries": [],
    }


def _entry_item(values: Any) -> dict[str, Any]:
    code, asset, amount, phase, balance_after, slot, resolves_id = values
    return {
        "account": code,
        "asset": asset,
        "amount": amount,
        "phase": phase,
        "balance_after": balance_after,
        "balance_slot": slot,
        "resolves_id": str(resolves_id) if resolves_id else None,
    }
