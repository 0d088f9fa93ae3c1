"""Verifying the ledger (docs/reliability.md, guarantee 8): the chain and every stored balance
recomputed.

``verify``, the full pass, recomputes every link of the chain from its transaction and entries,
every stored balance and balance-after from the entries, the index of open reservations
(``ledger_open_pending``) from the pending transfers, every sealed row against its seal, and
every tied column against what gives it (``row_ties.Tie``); it names the first break.  When
it finds everything intact it says what a checkpoint of it records (``Report.implied``,
``ledger.checkpoint``).

``verify_since`` checks what was written after a checkpoint, trusting (once its hash recomputes)
what the full pass behind it verified: its time follows the links and seals written since, plus
one pass over the balance rows.  It weighs the ties on the rows the seals written since belong to
or name.  An edit of a row the full pass already verified is, by design, left to the next full
pass, and so is a tied column that disagrees with what gives it on a row no seal written since
reaches.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor

from sqlalchemy import Connection, create_engine, func, select
from sqlalchemy.pool import NullPool

from ledger import checkpoint as checkpoints
from ledger import clock, row_seals, row_ties, store, verify_balances, verify_pending
from ledger.canonical import GENESIS
from ledger.checkpoint import Checkpoint, Implied
from ledger.db import Database
from ledger.row_seals import SealedTable
from ledger.row_ties import Tie
from ledger.schema import LedgerChainLink, LedgerChainQueue, LedgerTransaction
from ledger.verify_links import Segment
from ledger.verify_report import (
    FULL,
    SINCE_CHECKPOINT,
    Anchor,
    Break,
    Progress,
    Report,
)

T = LedgerTransaction.__table__.c
C = LedgerChainLink.__table__.c

# Below this many links, starting workers costs more than it saves.
PARALLEL_FROM = 100_000
_SEGMENTS_PER_PROCESS = 4  # smaller segments even out the load and report progress sooner
#: links a segment checks when one connection checks them all (progress after each)
SEQUENTIAL_SEGMENT = 50_000


def verify(
    connection: Connection,
    progress: Progress | None = None,
    processes: int = 1,
    anchors: Sequence[Anchor] = (),
    sealed_tables: Sequence[SealedTable] = (),
    ties: Sequence[Tie] = (),
) -> Report:
    """Recompute the chain, every stored balance and the open reservations' index, compare
    every row of ``sealed_tables`` with its seal and every column of ``ties`` with what gives
    it; stop at the first break.

    ``progress(n)`` is called with the number of transactions checked so far. With
    ``processes`` > 1 a long chain is checked in segments by that many workers (each on its own
    connection: threads waiting on PostgreSQL, which checks the links itself, or processes on
    SQLite); the answer is the same as one connection's. Each of ``anchors`` (links recorded by
    earlier verifies) must still be in the chain with the same hash; seal what is queued first
    (``sealer.seal_all``), as the verify command does.
    """
    started, began = clock.utcnow(), time.perf_counter()
    report = Report(mode=FULL)
    last = _last_seq(connection)
    _walk(connection, report, 1, last, GENESIS, progress, processes)
    if report.ok:
        _verify_anchors(connection, report, anchors)
    max_id = _verify_unchained(connection, report, None) if report.ok else 0
    balances: list[verify_balances.BalanceRow] = []
    if report.ok:
        head = report.head.seq if report.head else 0
        found, report.accounts_checked, balances = verify_balances.check_all(connection, head)
        report.first_broken = found
    if report.ok:
        report.first_broken = verify_pending.first_wrong(connection)
    mark: tuple[int, tuple[int, ...]] = (0, ())
    if report.ok and sealed_tables:  # where the seals stand, read before they are compared
        mark = checkpoints.seal_mark(connection)
    if report.ok:
        _verify_sealed_rows(connection, report, sealed_tables, None)
    if report.ok:
        _verify_ties(connection, report, ties)
    report.seconds = time.perf_counter() - began
    if report.ok and report.head is not None:
        report.implied = Implied(started, report.head, max_id, *mark, balances)
    return report


def verify_since(
    connection: Connection,
    checkpoint: Checkpoint,
    progress: Progress | None = None,
    processes: int = 1,
    sealed_tables: Sequence[SealedTable] = (),
    ties: Sequence[Tie] = (),
) -> Report:
    """Check what was written after ``checkpoint``: its own hash; the link it verified, still
    there with its hash; every link after it; every transaction after the largest it saw,
    chained or queued; every stored balance against its balances plus the entries written
    since; every open reservation's row (``ledger.verify_pending``); every seal written since
    against its row; and each of ``ties`` on the rows those seals belong to or name
    (``row_ties.first_untied_since``).

    Run it on one snapshot (``snapshot_reader``), so that the balances and the entries written
    since are read as of one moment.
    """
    began = time.perf_counter()
    report = Report(mode=SINCE_CHECKPOINT, checkpoint=checkpoint)
    report.first_broken = checkpoints.check_hash(connection, checkpoint)
    last = _last_seq(connection)
    head = Anchor(checkpoint.seq, checkpoint.head_hash)
    if report.ok:
        report.first_broken = _anchor_problem(connection, last, head, "checkpoint")
    if report.ok:
        _walk(connection, report, head.seq + 1, last, head.hash, progress, processes)
    if report.ok:
        _verify_unchained(connection, report, checkpoint.max_transaction_id)
    if report.ok:
        _verify_counted(connection, report, last)
    if report.ok:
        table = checkpoints.balances_table(checkpoint.id)
        found, report.accounts_checked = verify_balances.check_since(connection, table, head.seq)
        report.first_broken = found
    if report.ok:
        report.first_broken = verify_pending.first_wrong(connection, checkpoint.max_transaction_id)
    if report.ok:
        _verify_sealed_rows(connection, report, sealed_tables, checkpoint)
    if report.ok:
        _verify_ties(connection, report, ties, sealed_tables, checkpoint)
    report.seconds = time.perf_counter() - began
    return report


def snapshot_reader(db: Database) -> Connection:
    """A read-only connection whose statements all see one moment, for ``verify_since`` (and
    for any read of several statements that must agree, such as an account's entries and their
    balances): SQLite's reader transaction already does; PostgreSQL's is made REPEATABLE READ."""
    connection = db.reader()
    return store.of(connection).snapshot(connection)


def _last_seq(connection: Connection) -> int:
    return int(connection.execute(select(func.max(C.seq))).scalar() or 0)


def _walk(
    connection: Connection,
    report: Report,
    first: int,
    last: int,
    prev: str,
    progress: Progress | None,
    processes: int,
) -> None:
    """Check links ``first``..``last``, the one before ``first`` having hash ``prev``; set the
    report's count, first break and head (the last link, or the one before ``first``)."""
    expected_prev = prev
    for segment in _segments(connection, first, last, processes):
        if segment.start_prev is not None and segment.start_prev != expected_prev:
            report.first_broken = Break(
                "chain_link",
                "previous hash does not match the link before",
                segment.start_transaction,
                segment.first,
            )
            return
        report.transactions_checked += segment.checked
        if progress:
            progress(report.transactions_checked)
        if segment.problem is not None:
            report.first_broken = segment.problem
            return
        expected_prev = segment.last_hash or expected_prev
    if last >= first or first > 1:
        report.head = Anchor(max(last, first - 1), expected_prev)


def _segments(connection: Connection, first: int, last: int, processes: int) -> Iterator[Segment]:
    """The links ``first``..``last`` checked segment by segment, in chain order."""
    count = last - first + 1
    if count <= 0:
        return
    url, chosen = connection.engine.url, store.of(connection)
    if processes > 1 and count >= PARALLEL_FROM and chosen.reopens(url):
        size = max(-(-count // (processes * _SEGMENTS_PER_PROCESS)), PARALLEL_FROM // 8)
        ranges = [(a, min(a + size - 1, last)) for a in range(first, last + 1, size)]
        # the work is the database's where it hashes the links: threads then only wait on it
        threads = chosen.hashes_in_database
        reopened = url.render_as_string(hide_password=False)
        yield from _in_workers(reopened, ranges, processes, threads)
        return
    for a in range(first, last + 1, SEQUENTIAL_SEGMENT):
        yield check_segment(connection, a, min(a + SEQUENTIAL_SEGMENT - 1, last))


def _in_workers(
    url: str, ranges: list[tuple[int, int]], workers: int, threads: bool
) -> Iterator[Segment]:
    """Check the ranges in parallel, in threads or else processes; yield their findings in
    chain order."""
    pool: Executor
    if threads:
        pool = ThreadPoolExecutor(max_workers=workers)
    else:  # spawn, not fork: the parent holds open connections a forked child must not share
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    with pool:
        futures = [pool.submit(check_segment_at, url, first, end) for first, end in ranges]
        try:
            for future in futures:
                yield future.result()
        finally:
            for future in futures:  # a break was found (or the caller stopped): skip the rest
                future.cancel()


def check_segment(
    connection: Connection, first: int, last: int, progress: Progress | None = None
) -> Segment:
    """Recompute links ``first``..``last``; the first one's previous hash is taken as stored,
    or the genesis hash when ``first`` is 1 (PostgreSQL in SQL, SQLite in Python)."""
    return store.of(connection).check_segment(connection, first, last, progress)


def check_segment_at(url: str, first: int, last: int) -> Segment:
    """``check_segment`` on a connection of its own: what a worker runs."""
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            return check_segment(connection, first, last)
    finally:
        engine.dispose()


def _verify_anchors(connection: Connection, report: Report, anchors: Sequence[Anchor]) -> None:
    """Each anchor's link is still in the chain, with the hash its anchor recorded."""
    last = report.head.seq if report.head else 0
    for anchor in sorted(anchors, key=lambda a: a.seq):
        report.first_broken = _anchor_problem(connection, last, anchor, "anchor")
        if report.first_broken:
            return


def _anchor_problem(connection: Connection, last: int, anchor: Anchor, kind: str) -> Break | None:
    """Whether link ``anchor.seq`` is in the chain (which ends at ``last``) and its content
    hashes to ``anchor.hash``.  It is recomputed here (on PostgreSQL a later read than a walk's,
    perhaps another connection's), so what matches is content that hashes to it, not a stored
    hash alone.  ``kind``: an anchor given back, or the checkpoint's head."""
    recorded = "an anchor" if kind == "anchor" else "the last full pass"
    if anchor.seq > last:
        return Break(
            kind,
            f"the chain ends at link {last} but {recorded} verified link {anchor.seq}: links "
            "were removed from its end, or it is from another database",
            seq=anchor.seq,
        )
    link = check_segment(connection, anchor.seq, anchor.seq)
    if link.problem is not None:  # changed since the walk
        return link.problem
    if link.last_hash != anchor.hash:
        return Break(
            kind,
            f"link {anchor.seq} does not have the hash {recorded} recorded: the chain was "
            "rewritten at or before that link",
            seq=anchor.seq,
        )
    return None


def _verify_unchained(connection: Connection, report: Report, after: int | None) -> int:
    """A transaction (any, or with an id above ``after``) that is neither chained nor queued
    was written behind the engine's back.  Returns the largest transaction id."""
    bound = [] if after is None else [T.id > after]
    stray = connection.execute(
        select(func.min(T.id)).where(
            *bound,
            ~select(C.seq).where(C.transaction_id == T.id).exists(),
            ~select(LedgerChainQueue.transaction_id)
            .where(LedgerChainQueue.transaction_id == T.id)
            .exists(),
        )
    ).scalar()
    if stray is not None:
        report.first_broken = Break(
            "unchained_transaction", f"transaction {stray} is not in the chain", stray
        )
    return int(connection.execute(select(func.max(T.id))).scalar() or 0)


def _verify_counted(connection: Connection, report: Report, last: int) -> None:
    """Every transaction is one link of the chain (``1..last``, walked) or queued for one: more
    transactions than that means one was written behind the engine's back with an id below
    those the checkpoint saw (a count, not a look at every row; the row is named by the full
    look, which runs only then)."""
    transactions = connection.execute(select(func.count(T.id))).scalar_one()
    queued = connection.execute(select(func.count(LedgerChainQueue.transaction_id))).scalar_one()
    if transactions != last + queued:
        _verify_unchained(connection, report, None)
        if report.ok:  # counts apart, every row accounted for: a link or a queue row is extra
            report.first_broken = Break(
                "unchained_transaction",
                f"{transactions} transactions, but {last} links and {queued} queued",
            )


def _verify_sealed_rows(
    connection: Connection,
    report: Report,
    tables: Sequence[SealedTable],
    since: Checkpoint | None,
) -> None:
    """Every sealed row against its seal, or (``since`` a checkpoint) every seal written after
    it against its row."""
    report.extra["sealed_tables_checked"] = len(tables)
    if not tables:
        return
    if since is None:
        found = row_seals.first_mismatch(connection, tables)
    else:
        found = row_seals.first_mismatch_since(
            connection, tables, since.seal_position, since.seal_gaps
        )
    if found is not None:
        report.first_broken = Break(
            f"sealed_row_{found.kind}", found.detail, table=found.table, row_id=found.row_id
        )


def _verify_ties(
    connection: Connection,
    report: Report,
    ties: Sequence[Tie],
    tables: Sequence[SealedTable] = (),
    since: Checkpoint | None = None,
) -> None:
    """Every tied column against what gives it, or (``since`` a checkpoint) on the rows the
    seals written after it belong to or name: one that disagrees is reported as a sealed row
    changed (``sealed_row_changed``, naming the column and what gives it)."""
    if since is None:
        found = row_ties.first_untied(connection, ties)
    elif ties:
        found = row_ties.first_untied_since(
            connection, ties, tables, since.seal_position, since.seal_gaps
        )
    else:
        found = None
    if found is not None:
        report.first_broken = Break(
            f"sealed_row_{found.kind}", found.detail, table=found.table, row_id=found.row_id
        )


__all__ = [
    "Anchor",
    "Break",
    "Checkpoint",
    "Progress",
    "Report",
    "Segment",
    "check_segment",
    "check_segment_at",
    "verify",
    "verify_since",
]
