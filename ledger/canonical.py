"""The bytes a chain link hashes: a transaction's canonical content (docs/reliability.md,
guarantee 8).

Sealing and verification both build it here, so a link recomputes exactly; a unit test pins the
bytes (tests/unit/test_chain_canonical.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime
from typing import Any

from ledger import clock
from ledger.schema import LedgerEntry, LedgerTransaction

GENESIS = "0" * 64

T = LedgerTransaction.__table__.c
E = LedgerEntry.__table__.c

HEADER_COLUMNS = (
    "id kind state pending expires_at reverses_id idempotency_key "
    "request_hash effective_on recorded_at actor request_id memo"
).split()
# ``slot`` last: it enters the hash only when it is not 0, so links sealed before accounts had
# slots (and every entry of a one-slot account) hash exactly as they always did
ENTRY_COLUMNS = (
    "id account_id asset amount phase balance_after account_version effective_on slot".split()
)


def canonical(header: dict[str, Any], entries: list[dict[str, Any]]) -> bytes:
    """The bytes a link hashes: every header column and every entry, in a fixed form."""
    return canonical_json(
        [header.get(c) for c in HEADER_COLUMNS],
        [[e.get(c) for c in ENTRY_COLUMNS] for e in entries],
    )


def canonical_json(header: Sequence[Any], entries: Iterable[Sequence[Any]]) -> bytes:
    """``canonical`` over values already in column order (what verification streams)."""
    body = {
        "tx": _plained(header, _HEADER_PLAIN),
        "entries": [_plained(e if e[-1] else e[:-1], _ENTRY_PLAIN) for e in entries],
    }
    return _ENCODER.encode(body).encode()


def _plained(
    values: Sequence[Any], converters: list[tuple[int, Callable[[Any], Any]]]
) -> list[Any]:
    out = list(values)
    for index, convert in converters:
        out[index] = convert(out[index])
    return out


#: one encoder for every link (``json.dumps`` with options builds a new one per call)
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def _plain_datetime(value: datetime | None) -> str | None:
    if value is None:
        return None
    # the same text as strftime("%Y-%m-%dT%H:%M:%S.%f") of the UTC time, at a third of the cost
    return clock.as_utc(value).replace(tzinfo=None).isoformat(timespec="microseconds")


def _plain_date(value: date | None) -> str | None:
    return None if value is None else value.isoformat()


def _plain_bool(value: bool | None) -> int | None:
    return None if value is None else int(value)


def _plain_for(column: Any) -> Callable[[Any], Any] | None:
    """How a column's values enter the canonical JSON, chosen once per column rather than by
    testing every value (verification converts millions); ``None``: as they are."""
    python_type = column.type.python_type
    if issubclass(python_type, datetime):
        return _plain_datetime
    if issubclass(python_type, date):
        return _plain_date
    if issubclass(python_type, bool):
        return _plain_bool
    return None


def _converters(table: Any, columns: Sequence[str]) -> list[tuple[int, Callable[[Any], Any]]]:
    """``(position, converter)`` of the columns whose values need converting."""
    found = [(i, _plain_for(table[c])) for i, c in enumerate(columns)]
    return [(i, f) for i, f in found if f is not None]


_HEADER_PLAIN = _converters(T, HEADER_COLUMNS)
_ENTRY_PLAIN = _converters(E, ENTRY_COLUMNS)


def link_hash(prev_hash: str, content: bytes) -> str:
    """SHA-256 over the previous link's hash and this transaction's canonical content."""
    return hashlib.sha256(prev_hash.encode() + b"\n" + content).hexdigest()
