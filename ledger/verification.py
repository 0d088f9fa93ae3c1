"""Verifying the ledger (LEDGER.md guarantee 8): the chain and every stored balance recomputed.

The verifier recomputes every link from the transactions and entries, then every stored balance
and balance-after from the entries, streaming, and names the first break.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, case, create_engine, func, select
from sqlalchemy.pool import NullPool

from ledger import row_seals
from ledger.canonical import ENTRY_COLUMNS, GENESIS, HEADER_COLUMNS, canonical_json, link_hash
from ledger.row_seals import SealedTable
from ledger.schema import (
    PHASE_POSTED,
    PHASE_RELEASE,
    LedgerBalance,
    LedgerChainLink,
    LedgerChainQueue,
    LedgerEntry,
    LedgerTransaction,
)

T = LedgerTransaction.__table__.c
E = LedgerEntry.__table__.c
C = LedgerChainLink.__table__.c


@dataclass
class Break:
    """The first place where the stored ledger disagrees with what its entries say."""

    kind: str
    detail: str
    transaction_id: int | None = None
    seq: int | None = None
    account_id: int | None = None
    #: a sealed row that disagrees with its seal (``ledger.row_seals``): its table and id
    table: str | None = None
    row_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class Anchor:
    """A link of the chain, recorded outside the database: ``SEQ:HASH``.

    The chain proves that nothing before its last link changed, but not that the last links
    are still there, nor that someone with write access did not recompute every hash after an
    edit. A head printed by one verify and kept elsewhere (a file, a ticket, a letter), then
    given back to a later verify, closes both gaps up to that link.
    """

    seq: int
    hash: str

    @classmethod
    def parse(cls, text: str) -> Anchor:
        seq, sep, hash_ = text.strip().partition(":")
        if (
            not (sep and seq.isascii() and seq.isdigit())
            or int(seq) < 1
            or not _is_sha256_hex(hash_)
        ):
            raise ValueError(f"an anchor is SEQ:HASH (a link number, a SHA-256 in hex): {text!r}")
        return cls(int(seq), hash_.lower())

    def __str__(self) -> str:
        return f"{self.seq}:{self.hash}"


def _is_sha256_hex(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdefABCDEF" for c in text)


@dataclass
class Report:
    """What ``verify`` found: ``ok`` when the chain and every balance recompute exactly.

    ``head`` is the chain's last link as verified: record it outside the database and pass it
    back as an anchor to a later verify.  It is ``None`` for an empty chain or a broken one, and
    set when only an anchor or a balance failed: read it when ``ok``.
    """

    transactions_checked: int = 0
    accounts_checked: int = 0
    first_broken: Break | None = None
    head: Anchor | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.first_broken is None


Progress = Callable[[int], None]


def verify(
    connection: Connection,
    progress: Progress | None = None,
    processes: int = 1,
    anchors: Sequence[Anchor] = (),
    sealed_tables: Sequence[SealedTable] = (),
) -> Report:
    """Recompute the chain and every stored balance, and compare every row of ``sealed_tables``
    with its seal; stop at the first break.

    Streams both passes with server-side cursors, so memory stays flat however long the ledger.
    ``progress(n)`` is called with the number of transactions checked so far. With
    ``processes`` > 1 a long chain is checked in segments by that many worker processes (each
    on its own connection); the answer is the same as one process's. Each of ``anchors`` (links
    recorded by earlier verifies) must still be in the chain with the same hash; seal what is
    queued first (``sealer.seal_all``), as the verify command does.
    """
    report = Report()
    _verify_chain(connection, report, progress, processes)
    if report.ok:
        _verify_anchors(connection, report, anchors)
    if report.ok:
        _verify_unchained(connection, report)
    if report.ok:
        _verify_balances(connection, report)
    if report.ok:
        _verify_sealed_rows(connection, report, sealed_tables)
    return report


_H, _EN = len(HEADER_COLUMNS), len(ENTRY_COLUMNS)
_LINK = 4  # seq, prev hash, hash, transaction id come first in each verify row
_E_AMOUNT, _E_ASSET, _E_PHASE = (ENTRY_COLUMNS.index(c) for c in ("amount", "asset", "phase"))

# Below this many links, starting worker processes (~0.5 s each) costs more than it saves.
PARALLEL_FROM = 100_000
_SEGMENTS_PER_PROCESS = 4  # smaller segments even out the load and report progress sooner


@dataclass
class Segment:
    """What checking the links ``first``..``last`` found, on its own.

    A segment cannot know the hash before its first link, so it takes the stored one
    (``start_prev``) and the caller checks it against the previous segment's ``last_hash``.
    """

    first: int
    last: int
    checked: int = 0
    start_prev: str | None = None
    start_transaction: int | None = None
    last_hash: str | None = None
    problem: Break | None = None


def _chain_query(first: int, last: int) -> Any:
    return (
        select(
            C.seq,
            C.prev_hash,
            C.hash,
            C.transaction_id,
            *[T[c] for c in HEADER_COLUMNS],
            *[E[c] for c in ENTRY_COLUMNS],
        )
        .select_from(
            LedgerChainLink.__table__.outerjoin(
                LedgerTransaction.__table__, T.id == C.transaction_id
            ).outerjoin(LedgerEntry.__table__, E.transaction_id == T.id)
        )
        .where(C.seq.between(first, last))
        .order_by(C.seq, E.id)
    )


def _chain_rows(connection: Connection, first: int, last: int) -> Iterator[Any]:
    """Links ``first``..``last`` joined to their transactions and entries, as plain tuples.

    PostgreSQL reads through a server-side cursor straight from psycopg: at a million
    transactions the per-row cost of result processing is what bounds verification speed.
    """
    query = _chain_query(first, last)
    if connection.dialect.name != "postgresql":
        yield from connection.execution_options(stream_results=True, yield_per=10_000).execute(
            query
        )
        return
    compiled = query.compile(dialect=connection.dialect)
    raw: Any = connection.connection.dbapi_connection
    with raw.cursor(name="ledger_verify") as cursor:
        cursor.execute(str(compiled), compiled.params)
        # whole batches: iterating the cursor row by row costs a generator step per row
        while batch := cursor.fetchmany(20_000):
            yield from batch


def _verify_chain(
    connection: Connection, report: Report, progress: Progress | None, processes: int
) -> None:
    last = int(connection.execute(select(func.max(C.seq))).scalar() or 0)
    url = connection.engine.url
    in_memory = url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")
    if processes > 1 and last >= PARALLEL_FROM and not in_memory:
        segments: Iterator[Segment] = _segments_in_processes(
            url.render_as_string(hide_password=False), last, processes
        )
    else:
        segments = iter([check_segment(connection, 1, last, progress)])
    expected_prev = GENESIS
    for segment in segments:
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
    if last:
        report.head = Anchor(last, expected_prev)


def _verify_anchors(connection: Connection, report: Report, anchors: Sequence[Anchor]) -> None:
    """Each anchor's link is still in the chain, with the hash its anchor recorded.

    Runs once the chain checked out.  Each anchored link is recomputed from its content again
    here (on PostgreSQL a later read than the walk's, perhaps another connection's), so what
    matches an anchor is content that hashes to it, not a stored hash alone."""
    head = report.head
    for anchor in sorted(anchors, key=lambda a: a.seq):
        if head is None or anchor.seq > head.seq:
            report.first_broken = Break(
                "anchor",
                f"the chain ends at link {head.seq if head else 0} but an anchor recorded link "
                f"{anchor.seq}: links were removed from its end, or the anchor is from another "
                "database",
                seq=anchor.seq,
            )
            return
        link = check_segment(connection, anchor.seq, anchor.seq, None)
        if link.problem is not None:  # changed since the walk
            report.first_broken = link.problem
            return
        if link.last_hash != anchor.hash:
            report.first_broken = Break(
                "anchor",
                f"link {anchor.seq} does not have the hash its anchor recorded: the chain was "
                "rewritten at or before that link",
                seq=anchor.seq,
            )
            return


def _segments_in_processes(url: str, last: int, processes: int) -> Iterator[Segment]:
    """Check the chain in segments, in parallel; yield their findings in chain order."""
    size = max(-(-last // (processes * _SEGMENTS_PER_PROCESS)), PARALLEL_FROM // 8)
    ranges = [(first, min(first + size - 1, last)) for first in range(1, last + 1, size)]
    # spawn, not fork: the parent holds open connections a forked child must not share
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=processes, mp_context=context) as pool:
        futures = [pool.submit(check_segment_at, url, first, end) for first, end in ranges]
        try:
            for future in futures:
                yield future.result()
        finally:
            for future in futures:  # a break was found (or the caller stopped): skip the rest
                future.cancel()


def check_segment_at(url: str, first: int, last: int) -> Segment:
    """``check_segment`` on a connection of its own: what a worker process runs."""
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            return check_segment(connection, first, last, None)
    finally:
        engine.dispose()


def check_segment(
    connection: Connection, first: int, last: int, progress: Progress | None
) -> Segment:
    """Recompute links ``first``..``last``; the first one's previous hash is taken as stored,
    or the genesis hash when ``first`` is 1."""
    segment = Segment(first, last)
    expected_seq, prev = first, GENESIS if first == 1 else None
    head: Any = None
    entries: list[Any] = []

    def close(head: Any) -> bool:
        nonlocal prev, expected_seq
        if prev is None and head[0] == first:
            prev = segment.start_prev = head[1]
            segment.start_transaction = head[3]
        segment.problem = _check_link(expected_seq, prev or GENESIS, head, entries)
        if segment.problem:
            return False
        prev, expected_seq = head[2], expected_seq + 1
        segment.checked += 1
        if progress and segment.checked % 10_000 == 0:
            progress(segment.checked)
        return True

    for row in _chain_rows(connection, first, last):
        if head is None or row[0] != head[0]:
            if head is not None and not close(head):
                return segment
            head, entries = row, []
        if row[_LINK + _H] is not None:
            entries.append(row[_LINK + _H :])
    if head is not None and not close(head):
        return segment
    segment.last_hash = prev
    if expected_seq <= last:  # the segment's last links are missing
        segment.problem = Break(
            "chain_gap", f"chain link {expected_seq} is missing", seq=expected_seq
        )
    return segment


def _check_link(expected: int, prev: str, head: Any, entries: list[Any]) -> Break | None:
    seq, link_prev, link_hash_, tx_id = head[0], head[1], head[2], head[3]
    if seq != expected:
        return Break("chain_gap", f"chain link {expected} is missing", seq=expected)
    if head[_LINK] is None:
        return Break("missing_transaction", f"transaction {tx_id} was deleted", tx_id, seq)
    if link_prev != prev:
        return Break("chain_link", "previous hash does not match the link before", tx_id, seq)
    content = canonical_json(head[_LINK : _LINK + _H], entries)
    if link_hash(prev, content) != link_hash_:
        return Break(
            "hash_mismatch", f"transaction {tx_id} differs from what was sealed", tx_id, seq
        )
    sums: dict[tuple[str, str], int] = {}
    for e in entries:
        key = (e[_E_ASSET], e[_E_PHASE])
        sums[key] = sums.get(key, 0) + e[_E_AMOUNT]
    if len(entries) < 2 or any(sums.values()):
        return Break("unbalanced", f"transaction {tx_id} is unbalanced", tx_id, seq)
    return None


def _verify_unchained(connection: Connection, report: Report) -> None:
    """A transaction that is neither chained nor queued was written behind the engine's back."""
    stray = connection.execute(
        select(func.min(T.id)).where(
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


def _verify_sealed_rows(
    connection: Connection, report: Report, tables: Sequence[SealedTable]
) -> None:
    found = row_seals.first_mismatch(connection, tables)
    report.extra["sealed_tables_checked"] = len(tables)
    if found is not None:
        report.first_broken = Break(
            f"sealed_row_{found.kind}", found.detail, table=found.table, row_id=found.row_id
        )


def _verify_balances(connection: Connection, report: Report) -> None:
    """Stored balances against the sums of their entries, and every balance-after against the
    running posted total: both computed by the database, which streams them.  An account with
    several balance slots is checked slot by slot: each entry says which slot it changed."""
    sign = case((E.phase == PHASE_RELEASE, -1), else_=1)
    debit = case((E.amount < 0, -E.amount), else_=0)
    credit = case((E.amount > 0, E.amount), else_=0)
    posted = E.phase == PHASE_POSTED
    sums = (
        select(
            E.account_id.label("account_id"),
            E.slot.label("slot"),
            func.sum(case((posted, debit), else_=0)).label("dp"),
            func.sum(case((posted, credit), else_=0)).label("cp"),
            func.sum(case((posted, 0), else_=debit * sign)).label("dq"),
            func.sum(case((posted, 0), else_=credit * sign)).label("cq"),
        )
        .group_by(E.account_id, E.slot)
        .subquery()
    )
    Bt = LedgerBalance.__table__.c
    balance_rows = LedgerBalance.__table__.outerjoin(
        sums, (sums.c.account_id == Bt.account_id) & (sums.c.slot == Bt.slot)
    )
    wrong = connection.execute(
        select(
            Bt.account_id,
            Bt.slot,
            Bt.debits_posted,
            Bt.credits_posted,
            Bt.debits_pending,
            Bt.credits_pending,
            sums.c.dp,
            sums.c.cp,
            sums.c.dq,
            sums.c.cq,
        )
        .select_from(balance_rows)
        .where(
            (func.coalesce(sums.c.dp, 0) != Bt.debits_posted)
            | (func.coalesce(sums.c.cp, 0) != Bt.credits_posted)
            | (func.coalesce(sums.c.dq, 0) != Bt.debits_pending)
            | (func.coalesce(sums.c.cq, 0) != Bt.credits_pending)
        )
        .order_by(Bt.account_id, Bt.slot)
        .limit(1)
    ).first()
    report.accounts_checked = int(
        connection.execute(select(func.count(func.distinct(Bt.account_id)))).scalar() or 0
    )
    if wrong is not None:
        have = [wrong[2], wrong[3], wrong[4], wrong[5]]
        expected = [int(x or 0) for x in wrong[6:10]]
        where = f"account {wrong[0]}" + (f" (slot {wrong[1]})" if wrong[1] else "")
        report.first_broken = Break(
            "stored_balance",
            f"{where} stores {have} but its entries sum to {expected}",
            account_id=wrong[0],
        )
        return
    orphan = connection.execute(
        select(sums.c.account_id)
        .select_from(
            sums.outerjoin(
                LedgerBalance.__table__,
                (sums.c.account_id == Bt.account_id) & (sums.c.slot == Bt.slot),
            )
        )
        .where(Bt.account_id.is_(None))
        .limit(1)
    ).first()
    if orphan is not None:
        report.first_broken = Break(
            "stored_balance",
            f"entries of account {orphan[0]} name a balance slot it does not have",
            account_id=orphan[0],
        )
        return
    running = (
        select(
            E.id,
            E.account_id,
            E.transaction_id,
            E.balance_after,
            func.sum(case((posted, E.amount), else_=0))
            .over(partition_by=[E.account_id, E.slot], order_by=E.id)
            .label("running"),
        )
    ).subquery()
    drift = connection.execute(
        select(running)
        .where(running.c.balance_after != running.c.running)
        .order_by(running.c.id)
        .limit(1)
    ).first()
    if drift is not None:
        report.first_broken = Break(
            "balance_after",
            f"an entry of transaction {drift.transaction_id} says the balance after it is "
            f"{drift.balance_after}, the entries say {drift.running}",
            drift.transaction_id,
            account_id=drift.account_id,
        )
