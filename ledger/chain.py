"""The SHA-256 hash chain: sealing queued transactions (docs/reliability.md, guarantee 8).

Writers never wait on a global chain head: each only adds its transaction id to a queue inside its
own transaction (the store's write).  A sealer, one at a time, gives queued transactions
consecutive ``seq`` numbers in commit order, each link hashing the previous link's hash with the
transaction's canonical content (``ledger.canonical``).  Where writers take turns (SQLite) each
write seals its own link; otherwise a background sealer does (``ledger.sealer``).
``ledger.verification`` recomputes it all.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Connection

from ledger import clock, store
from ledger.canonical import GENESIS, HEADER_COLUMNS, canonical_json, link_hash

SEAL_BATCH = 2000
#: the lock that makes a sealer the only one, across every process
SEALER_LOCK_KEY = 0x1ED6E7

_HEADER_WIDTH = len(HEADER_COLUMNS)


class Sealed(NamedTuple):
    """What one ``seal`` did: how many transactions it chained, and the chain's first and last
    ``seq`` it wrote (both 0 when it chained nothing); ``contended``: it gave up because another
    sealer held the lock; ``head_seq``: when it found nothing to chain, the chain's last ``seq``
    as it found it."""

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

    Only one sealer runs at a time.  Without ``wait`` it gives up when another is running: that
    sealer, or the next one, will chain these transactions too.
    """
    statements = store.of(connection)
    if not statements.take_sealer_lock(connection, wait=wait):
        return Sealed(0, contended=True)
    sealed, first_seq, seq = 0, 0, 0
    while True:
        head, rows = statements.take_batch(connection, SEAL_BATCH)
        if not rows and not sealed:
            # nothing queued: where the chain ends tells a paced sealer whether another one
            # chained what this process committed (``ledger.sealer.next_pace``)
            return Sealed(0, head_seq=statements.head_seq(connection))
        if not rows:
            return Sealed(sealed, first_seq, seq)
        seq, prev = (int(head[0]), str(head[1])) if head is not None else (0, GENESIS)
        first_seq = first_seq or seq + 1
        links = store.Links(clock.utcnow(), [], [], [], [])
        for tx_id, header, entries in _by_transaction(rows):
            seq += 1
            digest = link_hash(prev, canonical_json(header, entries))
            links.seqs.append(seq)
            links.transaction_ids.append(tx_id)
            links.prev_hashes.append(prev)
            links.hashes.append(digest)
            prev = digest
        statements.insert_links(connection, links)
        sealed += len(links.seqs)
        if len(links.seqs) < SEAL_BATCH:
            return Sealed(sealed, first_seq, seq)


def _by_transaction(
    rows: Sequence[Sequence[Any]],
) -> Iterator[tuple[int, Sequence[Any], list[Sequence[Any]]]]:
    """Group a batch's rows: each transaction's header values and its entries'."""
    header: Sequence[Any] | None = None
    entries: list[Sequence[Any]] = []
    for row in rows:
        if header is None or row[0] != header[0]:
            if header is not None:
                yield int(header[0]), header, entries
            header, entries = row[:_HEADER_WIDTH], []
        if row[_HEADER_WIDTH] is not None:
            entries.append(row[_HEADER_WIDTH:])
    if header is not None:
        yield int(header[0]), header, entries
