"""PostgreSQL checks a segment of the chain itself: one statement per thousand doubtful links
(``PostgresqlStore.check_segment``).

Streaming every link, its transaction and its entries into Python (about 30 values a link)
costs more than everything else a full pass does.  So PostgreSQL renders each link's canonical
content (``ledger.canonical``) in SQL, hashes it with its own ``sha256`` and returns only the
links it could not confirm, with the segment's first and last links; Python then reads just
those (``ledger.verify_links``).

The SQL rendering is a filter, never the judge: a link counts as verified here only when the
SHA-256 of what SQL rendered equals the stored hash, and whatever SQL renders differently from
the sealer sends its link to Python, like a link that was really edited.  Strings are quoted
with only their double quotes and backslashes escaped, which is JSON's text for printable ASCII;
a string holding anything else (JSON escapes it as ``\\u`` and four hex digits) renders as
raw bytes that no sealed text holds, so its link is checked in Python.  Entries are joined in
the order the transaction's index returns them, their insertion order, which is their id order;
were it not, the link would go to Python too.  A transaction whose entries hold more than one
asset is checked in Python for its balance per asset.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy import Connection

from ledger.canonical import ENTRY_COLUMNS, GENESIS, HEADER_COLUMNS
from ledger.schema import LedgerEntry, LedgerTransaction
from ledger.store.postgresql import execute
from ledger.verify_links import Segment, recheck_contents
from ledger.verify_report import Break, Progress

#: doubtful links returned by one statement; the next statement starts after the last of them
BATCH = 1000

_TIMESTAMP = """'YYYY-MM-DD"T"HH24:MI:SS.US'"""


def _render(alias: str, column: Any) -> str:
    """SQL text for one value as ``canonical_json`` writes it (``null`` for NULL)."""
    value = f"{alias}.{column.name}"
    python_type = column.type.python_type
    if issubclass(python_type, datetime):
        text = f"""'"' || to_char({value} AT TIME ZONE 'UTC', {_TIMESTAMP}) || '"'"""
    elif issubclass(python_type, date):
        text = f"""'"' || to_char({value}, 'YYYY-MM-DD') || '"'"""
    elif issubclass(python_type, bool):
        return f"CASE WHEN {value} THEN '1' WHEN NOT {value} THEN '0' ELSE 'null' END"
    elif issubclass(python_type, str):
        # JSON escapes of a string of printable ASCII: a backslash and a double quote
        text = f"""'"' || replace(replace({value}, E'\\\\', E'\\\\\\\\'), '"', E'\\\\"') || '"'"""
    else:
        text = f"{value}::text"
    return f"coalesce({text}, 'null')"


def _joined(alias: str, table: Any, columns: Sequence[str]) -> str:
    return " || ',' || ".join(_render(alias, table.c[c]) for c in columns)


# an entry's slot enters its content only when it is not 0 (``canonical_json``)
_SLOT = ENTRY_COLUMNS[-1]
_ENTRY = (
    "'[' || "
    + _joined("e", LedgerEntry.__table__, ENTRY_COLUMNS[:-1])
    + f" || CASE WHEN coalesce(e.{_SLOT}, 0) = 0 THEN '' ELSE ',' || e.{_SLOT}::text END || ']'"
)
_HEADER = _joined("t", LedgerTransaction.__table__, HEADER_COLUMNS)

# Links from %(start)s (the window reaches one link back, for the lag) to %(last)s, each with
# its link before; flagged: the first and last links, and every link that is not plainly fine.
SEGMENT_SQL = f"""
WITH links AS (
    SELECT seq, prev_hash, hash, transaction_id,
           lag(seq) OVER w AS before_seq, lag(hash) OVER w AS before_hash,
           lead(seq) OVER w IS NULL AS is_last
    FROM ledger_chain WHERE seq BETWEEN %(window)s AND %(last)s
    WINDOW w AS (ORDER BY seq)
), checked AS (
    SELECT l.seq, l.prev_hash, l.hash, l.transaction_id, l.before_seq, l.before_hash, l.is_last,
           t.id IS NULL AS missing,
           t.id IS NOT NULL AND en.n >= 2 AND en.one_asset
               AND en.posted = 0 AND en.pending = 0 AND en.released = 0
               AND en.phased = en.n
               AND encode(sha256(convert_to(l.prev_hash || E'\\n{{"tx":[' || {_HEADER}
                   || '],"entries":[' || coalesce(en.body, '') || ']}}', 'UTF8')), 'hex')
                   = l.hash AS confirmed
    FROM links AS l
    LEFT JOIN ledger_transactions AS t ON t.id = l.transaction_id
    LEFT JOIN LATERAL (
        SELECT string_agg({_ENTRY}, ',') AS body, count(*) AS n,
               min(e.asset) = max(e.asset) AS one_asset,
               coalesce(sum(e.amount) FILTER (WHERE e.phase = 'posted'), 0) AS posted,
               coalesce(sum(e.amount) FILTER (WHERE e.phase = 'pending'), 0) AS pending,
               coalesce(sum(e.amount) FILTER (WHERE e.phase = 'release'), 0) AS released,
               count(*) FILTER (WHERE e.phase IN ('posted', 'pending', 'release')) AS phased
        FROM ledger_entries AS e WHERE e.transaction_id = l.transaction_id
    ) AS en ON true
    WHERE l.seq >= %(start)s
)
SELECT seq, prev_hash, hash, transaction_id, before_seq, before_hash, is_last, missing,
       confirmed
FROM checked
WHERE seq = %(start)s OR is_last OR confirmed IS NOT TRUE OR before_seq IS NULL
   OR seq <> before_seq + 1 OR prev_hash IS DISTINCT FROM before_hash
ORDER BY seq
LIMIT {BATCH}
"""


def sql_segment(
    connection: Connection, first: int, last: int, progress: Progress | None = None
) -> Segment:
    """What ``verify_links.python_segment`` finds for links ``first``..``last``, found by
    PostgreSQL, with Python reading only the links PostgreSQL could not confirm."""
    segment = Segment(first, last)
    start, seen = first, None  # seen: the last link looked at, (seq, hash)
    while True:
        window = start if start == first else start - 1
        params = {"window": window, "start": start, "last": last}
        rows = execute(connection, SEGMENT_SQL, params).fetchall()
        doubtful: list[int] = []
        for row in rows:
            problem = _link_problem(segment, row)
            if problem is not None:
                segment.problem = recheck_contents(connection, doubtful) or problem
                segment.checked = (segment.problem.seq or first) - first
                return segment
            if not row[-1]:  # not confirmed: its content is checked in Python
                doubtful.append(row[0])
            seen = (row[0], row[2])
        if (problem := recheck_contents(connection, doubtful)) is not None:
            segment.problem, segment.checked = problem, (problem.seq or first) - first
            return segment
        if len(rows) < BATCH or seen is None:
            break
        start = seen[0] + 1
        if progress:
            progress(start - first)
    end = seen[0] if seen else first - 1
    segment.checked, segment.last_hash = end - first + 1, seen[1] if seen else None
    if end < last:  # the segment's last links are missing
        segment.problem = Break("chain_gap", f"chain link {end + 1} is missing", seq=end + 1)
    return segment


def _link_problem(segment: Segment, row: Any) -> Break | None:
    """``verify_links.check_link`` up to the content: the link's place, its transaction, and
    the previous hash it names (against the link before it, as PostgreSQL read it)."""
    seq, link_prev, _hash, tx_id, before_seq, before_hash, _last, missing, _confirmed = row
    if before_seq is None:  # the segment's first link
        if seq != segment.first:
            return Break("chain_gap", f"chain link {segment.first} is missing", seq=segment.first)
        expected_prev = GENESIS if seq == 1 else link_prev
        if seq != 1:
            segment.start_prev, segment.start_transaction = link_prev, tx_id
    elif seq != before_seq + 1:
        return Break("chain_gap", f"chain link {before_seq + 1} is missing", seq=before_seq + 1)
    else:
        expected_prev = before_hash
    if missing:
        return Break("missing_transaction", f"transaction {tx_id} was deleted", tx_id, seq)
    if link_prev != expected_prev:
        return Break("chain_link", "previous hash does not match the link before", tx_id, seq)
    return None
