"""The SHA-256 hash chain: queueing and sealing (LEDGER.md guarantee 8).

Writers never wait on a global chain head: each only adds its transaction id to a queue inside its
own transaction.  A sealer, one at a time (a PostgreSQL advisory lock; SQLite has one writer
anyway), gives queued transactions consecutive ``seq`` numbers in commit order, each link hashing
the previous link's hash with the transaction's canonical content (``ledger.canonical``).
``ledger.verification`` recomputes it all.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Connection, delete, insert, select
from sqlalchemy.orm import Session

from ledger import clock, pg_direct
from ledger.canonical import (
    ENTRY_COLUMNS,
    GENESIS,
    HEADER_COLUMNS,
    canonical,
    canonical_json,
    link_hash,
)
from ledger.schema import LedgerChainLink, LedgerChainQueue, LedgerEntry, LedgerTransaction

SEAL_BATCH = 2000
SEALER_LOCK_KEY = 0x1ED6E7  # one sealer at a time across every process

T = LedgerTransaction.__table__.c
E = LedgerEntry.__table__.c
C = LedgerChainLink.__table__.c


def enqueue(session: Session, transaction_id: int) -> None:
    """Queue a transaction for sealing; SQLite seals at once (its writers are serial anyway)."""
    session.execute(insert(LedgerChainQueue).values(transaction_id=transaction_id))
    if session.bind.dialect.name == "sqlite":  # type: ignore[union-attr]
        seal(session.connection())


class Sealed(NamedTuple):
    """What one ``seal`` did: how many transactions it chained, and the chain's first and last
    ``seq`` it wrote (both 0 when it chained nothing); ``contended``: it gave up because another
    sealer held the lock; ``head_seq``: when it found nothing to chain, the chain's last ``seq``
    as it found it (PostgreSQL; 0 otherwise)."""

    transactions: int
    first_seq: int = 0
    last_seq: int = 0
    contended: bool = False
    head_seq: int = 0

    def passed_multiple_of(self, step: int) -> bool:
        """Whether the links written include a ``seq`` that is a multiple of ``step``."""
        return self.transactions > 0 and (self.first_seq - 1) // step < self.last_seq // step


def seal(connection: Connection, *, wait: bool = False) -> Sealed:
    """Chain every queued transaction, oldest id first.

    On PostgreSQL only one sealer runs at a time (an advisory lock).  Without ``wait`` it gives up
    when another holds it: that sealer, or the next one, will chain these transactions too.
    """
    if connection.dialect.name == "postgresql":
        return _seal_postgresql(connection, wait)
    sealed = 0
    while True:
        ids = list(
            connection.execute(
                select(LedgerChainQueue.transaction_id)
                .order_by(LedgerChainQueue.transaction_id)
                .limit(SEAL_BATCH)
            ).scalars()
        )
        if not ids:
            return Sealed(sealed)
        _seal_batch(connection, ids)
        sealed += len(ids)


# --- PostgreSQL: fixed SQL through psycopg, three statements a batch -------------------------

_H = len(HEADER_COLUMNS)

# Take a batch off the queue and read the chain head and the batch's content in one statement.
# Only the sealer holding the advisory lock deletes from the queue, and the lock was taken in an
# earlier statement, so this statement's snapshot sees the head the previous sealer committed.
_TAKE_BATCH_SQL = f"""
WITH taken AS (
    DELETE FROM ledger_chain_queue
    WHERE transaction_id IN (
        SELECT transaction_id FROM ledger_chain_queue ORDER BY transaction_id LIMIT %s)
    RETURNING transaction_id
), head AS (
    SELECT seq, hash FROM ledger_chain ORDER BY seq DESC LIMIT 1
)
SELECT (SELECT seq FROM head), (SELECT hash FROM head),
       {", ".join(f"t.{c}" for c in HEADER_COLUMNS)},
       {", ".join(f"e.{c}" for c in ENTRY_COLUMNS)}
FROM taken
JOIN ledger_transactions AS t ON t.id = taken.transaction_id
LEFT JOIN ledger_entries AS e ON e.transaction_id = t.id
ORDER BY t.id, e.id
"""

_HEAD_SEQ_SQL = "SELECT coalesce(max(seq), 0) FROM ledger_chain"

_INSERT_LINKS_SQL = """
INSERT INTO ledger_chain (seq, transaction_id, prev_hash, hash, chained_at)
SELECT v.seq, v.transaction_id, v.prev_hash, v.hash, %s
FROM unnest(%s::bigint[], %s::bigint[], %s::text[], %s::text[])
    AS v(seq, transaction_id, prev_hash, hash)
"""


def _seal_postgresql(connection: Connection, wait: bool) -> Sealed:
    def run(sql: str, params: Any) -> Any:
        return pg_direct.execute_on(connection, sql, params)

    if wait:
        run("SELECT pg_advisory_xact_lock(%s)", (SEALER_LOCK_KEY,))
    else:
        got = run("SELECT pg_try_advisory_xact_lock(%s)", (SEALER_LOCK_KEY,)).fetchone()
        if not got or not got[0]:
            return Sealed(0, contended=True)
    sealed, first_seq, seq = 0, 0, 0
    while True:
        rows = run(_TAKE_BATCH_SQL, (SEAL_BATCH,)).fetchall()
        if not rows and not sealed:
            # nothing queued: where the chain ends tells a paced sealer whether another one
            # chained what this process committed (``ledger.sealer.next_pace``)
            head = run(_HEAD_SEQ_SQL, ()).fetchone()
            return Sealed(0, head_seq=int(head[0]) if head else 0)
        if not rows:
            return Sealed(sealed, first_seq, seq)
        seq, prev = (rows[0][0], rows[0][1]) if rows[0][0] is not None else (0, GENESIS)
        first_seq = first_seq or seq + 1
        seqs: list[int] = []
        tx_ids: list[int] = []
        prevs: list[str] = []
        hashes: list[str] = []
        for tx_id, header, entries in _by_transaction(rows):
            seq += 1
            digest = link_hash(prev, canonical_json(header, entries))
            seqs.append(seq)
            tx_ids.append(tx_id)
            prevs.append(prev)
            hashes.append(digest)
            prev = digest
        run(_INSERT_LINKS_SQL, (clock.utcnow(), seqs, tx_ids, prevs, hashes))
        sealed += len(tx_ids)
        if len(tx_ids) < SEAL_BATCH:
            return Sealed(sealed, first_seq, seq)


def _by_transaction(
    rows: Sequence[Sequence[Any]],
) -> Iterator[tuple[int, Sequence[Any], list[Sequence[Any]]]]:
    """Group ``_TAKE_BATCH_SQL`` rows: each transaction's header values and its entries'."""
    header: Sequence[Any] | None = None
    entries: list[Sequence[Any]] = []
    for row in rows:
        if header is None or row[2] != header[0]:
            if header is not None:
                yield int(header[0]), header, entries
            header, entries = row[2 : 2 + _H], []
        if row[2 + _H] is not None:
            entries.append(row[2 + _H :])
    if header is not None:
        yield int(header[0]), header, entries


# --- SQLite -------------------------------------------------------------------------------------


def _seal_batch(connection: Connection, ids: list[int]) -> None:
    head = connection.execute(select(C.seq, C.hash).order_by(C.seq.desc()).limit(1)).one_or_none()
    seq, prev = (head.seq, head.hash) if head else (0, GENESIS)
    now = clock.utcnow()
    links = []
    for tx_id, content in _contents(connection, ids):
        seq += 1
        digest = link_hash(prev, content)
        links.append(
            {
                "seq": seq,
                "transaction_id": tx_id,
                "prev_hash": prev,
                "hash": digest,
                "chained_at": now,
            }
        )
        prev = digest
    connection.execute(insert(LedgerChainLink), links)
    connection.execute(delete(LedgerChainQueue).where(LedgerChainQueue.transaction_id.in_(ids)))


def _contents(connection: Connection, ids: list[int]) -> Iterator[tuple[int, bytes]]:
    rows = connection.execute(
        select(
            *[T[c] for c in HEADER_COLUMNS],
            *[E[c].label(f"e_{c}") for c in ENTRY_COLUMNS],
        )
        .select_from(
            LedgerTransaction.__table__.outerjoin(LedgerEntry.__table__, E.transaction_id == T.id)
        )
        .where(T.id.in_(ids))
        .order_by(T.id, E.id)
    ).mappings()
    for _tx_id, header, entries in _group(rows):
        yield int(header["id"]), canonical(header, entries)


def _group(
    rows: Any, key: str = "id"
) -> Iterator[tuple[Any, dict[str, Any], list[dict[str, Any]]]]:
    current: Any = object()
    header: dict[str, Any] = {}
    entries: list[dict[str, Any]] = []
    for row in rows:
        if row[key] != current:
            if entries or header:
                yield current, header, entries
            current, header, entries = row[key], dict(row), []
        if row.get("e_id") is not None:
            entries.append({c: row[f"e_{c}"] for c in ENTRY_COLUMNS})
    if entries or header:
        yield current, header, entries
