"""Recomputing chain links in Python, from the transactions and entries themselves.

This is the reference check: the canonical bytes come from ``ledger.canonical``, exactly as the
sealer built them.  SQLite's verify runs it over every link; PostgreSQL's runs the same checks in
SQL (``ledger.store.postgresql_verify``) and comes back here for each link the SQL could not
confirm.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, select

from ledger.canonical import ENTRY_COLUMNS, GENESIS, HEADER_COLUMNS, canonical_json, link_hash
from ledger.schema import LedgerChainLink, LedgerEntry, LedgerTransaction
from ledger.verify_report import Break, Progress

T = LedgerTransaction.__table__.c
E = LedgerEntry.__table__.c
C = LedgerChainLink.__table__.c

_H, _EN = len(HEADER_COLUMNS), len(ENTRY_COLUMNS)
LINK = 4  # seq, prev hash, hash, transaction id come first in each verify row
_E_AMOUNT, _E_ASSET, _E_PHASE = (ENTRY_COLUMNS.index(c) for c in ("amount", "asset", "phase"))


@dataclass
class Segment:
    """What checking the links ``first``..``last`` found, on its own.

    A segment cannot know the hash before its first link (unless it is link 1: the genesis
    hash), so it takes the stored one (``start_prev``) and the caller checks it against the
    previous segment's ``last_hash``.
    """

    first: int
    last: int
    checked: int = 0
    start_prev: str | None = None
    start_transaction: int | None = None
    last_hash: str | None = None
    problem: Break | None = None


def chain_query(first: int, last: int) -> Any:
    """Links ``first``..``last`` joined to their transactions and entries, in chain order."""
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


def _chain_rows(connection: Connection, query: Any) -> Iterator[Any]:
    # per statement: ``Connection.execution_options`` would make every later statement stream;
    # closed when the caller stops early (a break found), not when the generator is collected
    with connection.execute(query, execution_options={"yield_per": 10_000}) as rows:
        yield from rows


def _by_link(rows: Iterator[Any]) -> Iterator[tuple[Any, list[Any]]]:
    """Group flat rows into (link and transaction columns, entries' columns), per link."""
    head: Any = None
    entries: list[Any] = []
    for row in rows:
        if head is None or row[0] != head[0]:
            if head is not None:
                yield head, entries
            head, entries = row, []
        if row[LINK + _H] is not None:
            entries.append(row[LINK + _H :])
    if head is not None:
        yield head, entries


def python_segment(
    connection: Connection, first: int, last: int, progress: Progress | None
) -> Segment:
    """Recompute links ``first``..``last``; the first one's previous hash is taken as stored,
    or the genesis hash when ``first`` is 1."""
    segment = Segment(first, last)
    expected_seq, prev = first, GENESIS if first == 1 else None
    for head, entries in _by_link(_chain_rows(connection, chain_query(first, last))):
        if prev is None and head[0] == first:
            prev = segment.start_prev = head[1]
            segment.start_transaction = head[3]
        segment.problem = check_link(expected_seq, prev or GENESIS, head, entries)
        if segment.problem:
            return segment
        prev, expected_seq = head[2], expected_seq + 1
        segment.checked += 1
        if progress and segment.checked % 10_000 == 0:
            progress(segment.checked)
    segment.last_hash = prev
    if expected_seq <= last:  # the segment's last links are missing
        segment.problem = Break(
            "chain_gap", f"chain link {expected_seq} is missing", seq=expected_seq
        )
    return segment


def check_link(expected: int, prev: str, head: Any, entries: list[Any]) -> Break | None:
    """One link against the one before it (``prev``, its hash) and against its content."""
    seq, link_prev, tx_id = head[0], head[1], head[3]
    if seq != expected:
        return Break("chain_gap", f"chain link {expected} is missing", seq=expected)
    if head[LINK] is None:
        return Break("missing_transaction", f"transaction {tx_id} was deleted", tx_id, seq)
    if link_prev != prev:
        return Break("chain_link", "previous hash does not match the link before", tx_id, seq)
    return check_content(head, entries)


def check_content(head: Any, entries: list[Any]) -> Break | None:
    """The link's hash recomputed from its stored previous hash and its transaction, and the
    transaction balanced (per asset and phase, at least two entries)."""
    seq, prev, tx_id = head[0], head[1], head[3]
    content = canonical_json(head[LINK : LINK + _H], entries)
    if link_hash(prev, content) != head[2]:
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


def recheck_contents(connection: Connection, seqs: Sequence[int]) -> Break | None:
    """The first of the links ``seqs`` (present, with their transactions) whose content does not
    recompute to its hash or whose transaction is unbalanced."""
    if not seqs:
        return None
    query = chain_query(min(seqs), max(seqs)).where(C.seq.in_(list(seqs)))
    rows = connection.execute(query).all()  # at most ``postgresql_verify.BATCH`` links
    for head, entries in _by_link(iter(rows)):
        problem = check_content(head, entries)
        if problem:
            return problem
    return None
