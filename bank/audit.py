"""What board staff audit: the journal of every transaction, the trial balance, and verify."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import Connection, bindparam, case, func, select
from sqlalchemy.orm import Session

from bank import credits
from bank.registry import SEALED_TABLES
from ledger import checkpoint, sealer, verification
from ledger.db import Database
from ledger.schema import (
    PHASE_POSTED,
    LedgerAccount,
    LedgerChainLink,
    LedgerEntry,
    LedgerTransaction,
)

C, T, E, A = LedgerChainLink, LedgerTransaction, LedgerEntry, LedgerAccount


#: below this many links ``verify_now`` runs the full pass even when a checkpoint exists: it
#: takes well under a second, and trusts nothing an earlier pass verified
FULL_PASS_BELOW = 10_000
#: the board's page runs a full pass (there is no checkpoint yet) only up to this many links
PAGE_FULL_PASS_UP_TO = 100_000


def verify(
    connection: Connection,
    progress: verification.Progress | None = None,
    processes: int = 1,
    anchors: Sequence[verification.Anchor] = (),
) -> verification.Report:
    """The ledger's full verify, covering the registry too: the hash chain, every stored
    balance, and every sealed registry row against its seal (``bank.registry``)."""
    return verification.verify(connection, progress, processes, anchors, SEALED_TABLES)


def verify_full(
    db: Database,
    progress: verification.Progress | None = None,
    processes: int = 1,
    anchors: Sequence[verification.Anchor] = (),
) -> verification.Report:
    """Seal what is waiting, run the full pass and, when it finds everything intact, record
    its checkpoint (``report.checkpoint``: the last full pass that did, otherwise)."""
    sealer.seal_all(db)
    with db.reader() as connection:
        report = verify(connection, progress, processes, anchors)
        if not report.ok:
            report.checkpoint = checkpoint.latest(connection)
    if report.ok and report.implied is not None:
        with db.engine.begin() as connection:
            report.checkpoint = checkpoint.record(connection, report)
    return report


@dataclass(frozen=True)
class FullPassNeeded:
    """No full pass has recorded a checkpoint yet, and the chain is too long to run one while
    a page waits: ``wetbank audit verify`` runs it."""

    links: int


def verify_now(db: Database) -> verification.Report:
    """What ``GET /audit/verify`` runs: after sealing what is waiting, the check since the last
    full pass's checkpoint; the full pass (recording a checkpoint) when there is none yet or
    the chain is short (under ``FULL_PASS_BELOW`` links)."""
    latest, links = _last_checkpoint(db)
    if latest is None or links < FULL_PASS_BELOW:
        return verify_full(db)
    with verification.snapshot_reader(db) as connection:
        return verification.verify_since(connection, latest, sealed_tables=SEALED_TABLES)


def verify_for_page(db: Database) -> verification.Report | FullPassNeeded:
    """``verify_now`` for the board's page, which never waits on a full pass over more than
    ``PAGE_FULL_PASS_UP_TO`` links."""
    latest, links = _last_checkpoint(db)
    if latest is None and links > PAGE_FULL_PASS_UP_TO:
        return FullPassNeeded(links)
    return verify_now(db)


def _last_checkpoint(db: Database) -> tuple[checkpoint.Checkpoint | None, int]:
    """Seal what is waiting; the latest checkpoint and the chain's length."""
    sealer.seal_all(db)
    with db.reader() as connection:
        links = int(connection.execute(select(func.max(C.seq))).scalar() or 0)
        return checkpoint.latest(connection), links


def verify_answer(report: verification.Report) -> dict[str, Any]:
    """``GET /audit/verify``'s answer (API.md): the verdict, what was checked, how, and the
    last full pass that found the ledger intact."""
    broken = report.first_broken
    last = report.checkpoint
    return {
        "ok": report.ok,
        "mode": report.mode,
        "transactions_checked": report.transactions_checked,
        "accounts_checked": report.accounts_checked,
        "first_broken": broken.as_dict() if broken else None,
        "last_full_pass": last.as_dict() if last else None,
    }


@dataclass(frozen=True)
class JournalFilter:
    """``?from=&to=&account_id=&kind=``; dates are effective dates, inclusive."""

    start: date | None = None
    end: date | None = None
    account_id: str | None = None
    kind: str | None = None


def _journal_query(filters: JournalFilter) -> Any:
    query = select(C.seq, C.hash, C.prev_hash, T).join(T, T.id == C.transaction_id)
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


def journal_page(
    session: Session, filters: JournalFilter, limit: int, after_seq: int | None
) -> list[dict[str, Any]]:
    """Up to ``limit + 1`` sealed transactions in chain order (append-only: pages never shift)."""
    query = _journal_query(filters).limit(limit + 1)
    if after_seq is not None:
        query = query.where(C.seq > after_seq)
    rows = session.execute(query).all()
    return _with_entries(session, rows)


#: transactions per batch of a streamed journal: a range of ``seq`` (the chain has no gaps)
STREAM_BATCH = 5000

_TX = (T.id, T.kind, T.pending, T.expires_at, T.reverses_id, T.actor, T.request_id)
_TX_MORE = (T.idempotency_key, T.effective_on, T.recorded_at, T.memo)
_ENTRY = (A.code, E.asset, E.amount, E.phase, E.balance_after, E.slot, E.resolves_id)


def journal_all(session: Session, filters: JournalFilter) -> Iterator[dict[str, Any]]:
    """Every transaction sealed when the stream starts that matches ``filters``, in chain order.

    Streamed in ranges of ``seq``, each read with its entries by one Core query into plain
    tuples (no ORM objects), so memory stays flat and a row costs little more than its text.
    """
    last = session.execute(select(func.max(C.seq))).scalar() or 0
    flat = (
        _journal_query(filters)
        .with_only_columns(C.seq, C.hash, C.prev_hash, *_TX, *_TX_MORE, *_ENTRY)
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
    seq, digest, prev, tx_id, kind, pending, expires_at, reverses_id, actor, request_id = row[:10]
    key, effective_on, recorded_at, memo = row[10:14]
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


def latest_journal(session: Session, limit: int) -> list[dict[str, Any]]:
    """The ``limit`` most recently sealed transactions, newest first (the audit page's view)."""
    query = _journal_query(JournalFilter()).order_by(None).order_by(C.seq.desc()).limit(limit)
    return _with_entries(session, session.execute(query).all())


def _with_entries(session: Session, rows: Any) -> list[dict[str, Any]]:
    ids = [row.LedgerTransaction.id for row in rows]
    entries: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    for e, code in session.execute(
        select(E, A.code)
        .join(A, A.id == E.account_id)
        .where(E.transaction_id.in_(ids))
        .order_by(E.id)
    ).all():
        entries[e.transaction_id].append(
            {
                "account": code,
                "asset": e.asset,
                "amount": e.amount,
                "phase": e.phase,
                "balance_after": e.balance_after,
                "balance_slot": e.slot,
                "resolves_id": str(e.resolves_id) if e.resolves_id else None,
            }
        )
    out = []
    for row in rows:
        tx = row.LedgerTransaction
        out.append(
            {
                "seq": row.seq,
                "transaction_id": str(tx.id),
                "kind": tx.kind,
                "pending": tx.pending,
                "expires_at": tx.expires_at,
                "reverses_id": str(tx.reverses_id) if tx.reverses_id else None,
                "actor": tx.actor,
                "request_id": tx.request_id,
                "idempotency_key": tx.idempotency_key,
                "effective_on": tx.effective_on,
                "recorded_at": tx.recorded_at,
                "memo": tx.memo,
                "hash": row.hash,
                "prev_hash": row.prev_hash,
                "entries": entries[tx.id],
            }
        )
    return out


def trial_balance(session: Session, as_of: date) -> list[dict[str, Any]]:
    """Per asset (each credit class, and USD): total posted debits and credits to ``as_of``."""
    debit = func.sum(case((E.amount < 0, -E.amount), else_=0))
    credit = func.sum(case((E.amount > 0, E.amount), else_=0))
    rows = session.execute(
        select(E.asset, debit, credit)
        .where(E.phase == PHASE_POSTED, E.effective_on <= as_of)
        .group_by(E.asset)
        .order_by(E.asset)
    ).all()
    return [
        {
            "asset": asset.removeprefix("sqft:"),
            "unit": "cents" if asset == "USD" else "sqft",
            "debits": int(d or 0),
            "credits": int(c or 0),
            "balanced": int(d or 0) == int(c or 0),
        }
        for asset, d, c in rows
    ]
